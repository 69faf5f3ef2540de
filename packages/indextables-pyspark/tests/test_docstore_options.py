"""The doc-store options through Spark: docStoreBlockSize on write, docStoreThreads on read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from indextables.protocol.splitbundle import unbundle_split

pytestmark = pytest.mark.spark
FMT = "indextables"


def test_docstore_options_reach_the_writer_and_the_reader(spark: Any, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    rows = [(k, f"row {k} " + "x" * (k % 40)) for k in range(3000)]
    frame = spark.createDataFrame(rows, "id long, s string").coalesce(1)
    key = "spark.indextables.indexWriter.docStoreBlockSize"
    frame.write.format(FMT).option(key, "4K").mode("append").save(path)
    (split,) = Path(path).glob("*.split")
    unbundle_split(split.read_bytes(), tmp_path / "files", path=str(split))
    meta = json.loads((tmp_path / "files" / "meta.json").read_text())
    assert meta["index_settings"]["docstore_blocksize"] == 4096
    # Accepted and read alike (that the value reaches the decoder: the engine's test_bulkrows).
    reader = spark.read.format(FMT).option("spark.indextables.read.docStoreThreads", "off")
    got = sorted(reader.load(path).where("id >= 2990").collect())
    assert [(r.id, r.s) for r in got] == rows[2990:]
