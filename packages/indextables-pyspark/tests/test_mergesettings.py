"""MERGE SPLITS honours the writer settings: merge.heapSize / indexWriter.* and merge.batchSize."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from indextables.pyspark.errors import OptionError
from indextables.search.write.merge import merge_settings


def test_merge_settings_fall_back_to_the_writer_settings() -> None:
    assert merge_settings({}).heap_size == 64 << 20
    writer = merge_settings(
        {
            "spark.indextables.indexWriter.heapSize": "200M",
            "spark.indextables.indexWriter.batchSize": "7",
        }
    )
    assert (writer.heap_size, writer.batch_size, writer.groups_per_job) == (200 << 20, 7, None)
    merge = merge_settings(
        {
            "spark.indextables.indexWriter.heapSize": "200M",
            "spark.indextables.merge.heapSize": "1G",
            "spark.indextables.merge.batchSize": "3",
        }
    )
    assert (merge.heap_size, merge.groups_per_job) == (1 << 30, 3)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("spark.indextables.merge.heapSize", "1M"),
        ("spark.indextables.merge.heapSize", "big"),
        ("spark.indextables.merge.batchSize", "0"),
        ("spark.indextables.indexWriter.heapSize", "2M"),
    ],
)
def test_bad_merge_settings_name_the_key(key: str, value: str) -> None:
    with pytest.raises(OptionError, match=key.lower().replace(".", r"\.")):
        merge_settings({key: value})


def _append(spark: Any, path: Path, part: str, start: int) -> None:
    df = spark.range(start, start + 5, numPartitions=1).selectExpr("id", f"'{part}' as part")
    df.write.format("indextables").option("partitionBy", "part").mode("append").save(str(path))


@pytest.mark.spark
@pytest.mark.integration
def test_merge_runs_and_commits_merge_batch_size_groups_at_a_time(
    spark: Any, tmp_path: Path
) -> None:
    import indextables.pyspark as itp
    from indextables.protocol import open_table

    path = tmp_path / "t"
    for number, part in enumerate(["a", "b", "a", "b"]):
        _append(spark, path, part, number * 5)
    before = open_table(str(path)).snapshot().version
    bad = {"spark.indextables.merge.heapSize": "1M"}
    with pytest.raises(OptionError, match=r"merge\.heapsize"):
        itp.sql(spark, f"MERGE SPLITS '{path}'", options=bad)
    assert open_table(str(path)).snapshot().version == before  # nothing ran, no mergeskip
    options = {"spark.indextables.merge.batchSize": "1", "spark.indextables.merge.heapSize": "20M"}
    row = itp.sql(spark, f"MERGE SPLITS '{path}'", options=options).first().asDict(recursive=True)
    assert (row["metrics"]["merge_groups"], row["new_files"]) == (2, 2)
    assert row["heap_size_bytes"] == 20 << 20
    assert open_table(str(path)).snapshot().version == before + 2  # one commit per group
    assert spark.read.format("indextables").load(str(path)).count() == 20
