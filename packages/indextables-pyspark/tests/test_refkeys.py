"""Every reference key is honoured or accepted with one warning saying why; typos warn too."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from indextables.search import refkeys
from indextables.search.refkeys import ignored_reason, warn_ignored

KEYS_FILE = Path(__file__).parents[3] / "testdata" / "reference" / "spark-keys.txt"


def reference_keys() -> list[str]:
    lines = KEYS_FILE.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def test_the_key_list_is_there() -> None:
    assert len(reference_keys()) > 200


@pytest.mark.parametrize("key", reference_keys())
def test_every_reference_key_is_known(key: str) -> None:
    reason = ignored_reason(key)
    assert reason is None or "typo" not in reason


def test_ignored_keys_warn_once_naming_the_key_not_the_value(
    caplog: pytest.LogCaptureFixture,
) -> None:
    refkeys._WARNED.clear()
    options = {
        "spark.indextables.read.defaultLimit": "secret-looking-value",
        "spark.indextables.write.optimizeWrite.samplingRatio": "1.1",
        "spark.indextables.indexWriter.heapSize": "100M",
        "spark.indextables.indexWritr.heapSize": "100M",
        "path": "/tmp/t",
    }
    with caplog.at_level(logging.WARNING, logger="indextables.search"):
        warned = warn_ignored(options)
        again = warn_ignored(options)
    assert warned == [
        "spark.indextables.read.defaultlimit",
        "spark.indextables.write.optimizewrite.samplingratio",
        "spark.indextables.indexwritr.heapsize",
    ]
    assert again == []
    text = caplog.text
    assert "read.defaultLimit has no effect" in text
    assert "LIMIT" in text
    assert "repartition" in text
    assert "typo" in text
    assert "secret-looking-value" not in text
    assert len(caplog.records) == 3


def test_honoured_keys_are_not_reported() -> None:
    for key in (
        "spark.indextables.indexing.typemap.title",
        "spark.indextables.transaction.cache.expirationSeconds",
        "spark.indextables.state.compaction.afterMerge",
        "spark.indextables.mergeOnWrite.targetSize",
        "spark.indextables.aws.region",
    ):
        assert ignored_reason(key) is None, key
    assert "merge-on-write" in (
        ignored_reason("spark.indextables.mergeOnWrite.minDiskSpaceGB") or ""
    )
