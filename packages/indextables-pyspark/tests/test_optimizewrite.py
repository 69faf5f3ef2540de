"""itp.write's optimized write: rows spread over every core, splits rolled in balanced mode."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from indextables.pyspark.errors import OptionError
from indextables.search.table.tableaccess import load_view

pytestmark = [pytest.mark.spark, pytest.mark.integration]

OW = "spark.indextables.write.optimizeWrite."


def _split_rows(path: Path) -> list[tuple[tuple[tuple[str, str | None], ...], int]]:
    return sorted(
        (tuple(sorted(s.partition_values.items())), s.num_records or 0)
        for s in load_view(str(path), {}).splits
    )


def _rows(spark: Any, path: Path) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in spark.read.format("indextables").load(str(path)).collect())


def test_one_partition_is_spread_over_every_core(spark: Any, tmp_path: Path) -> None:
    import indextables.pyspark as itp

    cores = spark.sparkContext.defaultParallelism
    assert cores >= 2
    df = spark.range(200, numPartitions=1).selectExpr("id", "cast(id % 7 as string) as s")
    itp.write(df, str(tmp_path / "plain"))
    assert len(_split_rows(tmp_path / "plain")) == 1  # as the DataFrame is: one task
    itp.write(df, str(tmp_path / "t"), options={OW + "enabled": "true"})
    counts = [n for _, n in _split_rows(tmp_path / "t")]
    assert len(counts) == cores
    assert sum(counts) == 200
    assert max(counts) - min(counts) <= 1  # round-robin
    assert _rows(spark, tmp_path / "t") == _rows(spark, tmp_path / "plain")


def test_hash_mode_gathers_each_partition_value_in_one_task(spark: Any, tmp_path: Path) -> None:
    import indextables.pyspark as itp

    df = spark.range(300, numPartitions=3).selectExpr("id", "cast(id % 3 as string) as part")
    itp.write(df, str(tmp_path / "t"), partition_by=["part"], options={OW + "enabled": "true"})
    splits = _split_rows(tmp_path / "t")
    assert splits == [((("part", str(v)),), 100) for v in range(3)]  # one split per value
    expected = sorted((i, str(i % 3)) for i in range(300))
    assert _rows(spark, tmp_path / "t") == expected


def test_balanced_mode_rolls_splits_at_max_split_size(spark: Any, tmp_path: Path) -> None:
    import indextables.pyspark as itp

    df = spark.range(4000, numPartitions=1).selectExpr("id", "repeat('x', 100) as s")
    options = {
        OW + "enabled": "true",
        OW + "distributionMode": "balanced",
        OW + "maxSplitSize": "100K",
        "spark.indextables.indexWriter.batchSize": "500",
    }
    itp.write(df, str(tmp_path / "t"), options=options)
    counts = [n for _, n in _split_rows(tmp_path / "t")]
    assert sum(counts) == 4000
    # 2 tasks of 2,000 rows of ~117 Arrow bytes; a split closes after the batch
    # (500 rows, ~58K) that takes it to 100K: 1,000 rows per split.
    assert counts == [1000] * 4
    assert _rows(spark, tmp_path / "t") == sorted((i, "x" * 100) for i in range(4000))


def test_none_mode_writes_the_dataframe_as_it_is(spark: Any, tmp_path: Path) -> None:
    import indextables.pyspark as itp

    df = spark.range(50, numPartitions=1)
    options = {OW + "enabled": "true", OW + "distributionMode": "none"}
    itp.write(df, str(tmp_path / "t"), options=options)
    assert len(_split_rows(tmp_path / "t")) == 1


@pytest.mark.parametrize(
    ("key", "value", "match"),
    [
        ("enabled", "maybe", "optimizewrite.enabled"),
        ("distributionMode", "random", "optimizewrite.distributionmode"),
        ("maxSplitSize", "big", "optimizewrite.maxsplitsize"),
    ],
)
def test_bad_optimize_write_options_fail_before_writing(
    spark: Any, tmp_path: Path, key: str, value: str, match: str
) -> None:
    import indextables.pyspark as itp

    with pytest.raises(OptionError, match=match):
        itp.write(spark.range(3), str(tmp_path / "t"), options={OW + key: value})
    assert not (tmp_path / "t").exists()


def test_index_writer_threads_index_one_task_with_several_writers(
    spark: Any, tmp_path: Path
) -> None:
    # One task of 120,000 rows: a second writer starts once the first has 50,000 rows
    # (MIN_ROWS_PER_WRITER), so the task writes two splits; without the option, one.
    df = spark.range(120_000, numPartitions=1).selectExpr(
        "id", "concat('v', cast(id % 1000 as string)) as s", "cast(id as double) / 7 as d"
    )
    threads = {"spark.indextables.indexWriter.threads": "2"}
    df.write.format("indextables").options(**threads).mode("append").save(str(tmp_path / "t"))
    df.write.format("indextables").mode("append").save(str(tmp_path / "one"))
    counts = [n for _, n in _split_rows(tmp_path / "t")]
    assert (len(counts), sum(counts)) == (2, 120_000)
    assert len(_split_rows(tmp_path / "one")) == 1
    back = spark.read.format("indextables").load(str(tmp_path / "t"))
    assert back.exceptAll(df).count() == 0
    assert df.exceptAll(back).count() == 0


def test_one_partition_per_core_already_is_written_without_a_shuffle(
    spark: Any, tmp_path: Path
) -> None:
    import indextables.pyspark as itp
    from indextables.pyspark.writing.optimizewrite import distribute
    from indextables.search.options import parse_optimize_write

    cores = spark.sparkContext.defaultParallelism
    settings = parse_optimize_write({OW + "enabled": "true"})
    # Skewed on purpose: the rows stay where they are (the shuffle would only move them).
    df = spark.range(0, 300, numPartitions=cores).where("id < 200 or id % 10 = 0")
    assert distribute(df, settings=settings, partition_columns=()) is df
    other = spark.range(300, numPartitions=cores + 1)
    spread = distribute(other, settings=settings, partition_columns=())
    assert spread is not other
    assert spread.rdd.getNumPartitions() == cores
    itp.write(df, str(tmp_path / "t"), options={OW + "enabled": "true"})
    assert sum(n for _, n in _split_rows(tmp_path / "t")) == df.count()
