"""Spark write tasks and merges use the segments feed unless set to ``indexWriter.feed=json``.

Which writer made a split is read from the split itself: its ``.managed.json`` (a
member of the bundle) is written by the segment writer as ``json.dumps`` of the sorted
file names (``", "`` between them), by Tantivy as compact JSON and a newline (``","``, no space).
The rows read back are checked against the DataFrame's own rows.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from indextables.protocol.splitbundle import parse_split_footer
from indextables.search import delete_rows
from indextables.search.table.tableaccess import load_view

pytestmark = [pytest.mark.spark, pytest.mark.integration]

FEED_KEY = "spark.indextables.indexWriter.feed"


def _split_writers(uri: str) -> list[str]:
    """Per live split, ``"segments"`` (the segment writer) or ``"tantivy"`` (tantivy-py)."""
    found: list[str] = []
    live = load_view(uri, {}).splits
    for split in live.select(range(len(live.paths))):
        data = (Path(uri) / split.path).read_bytes()
        start = split.entry.ref.footer_start_offset or 0
        files = parse_split_footer(data, footer_start_offset=start, path=split.path).files
        begin, end = files[".managed.json"]
        raw = data[begin:end].decode()
        names = json.loads(raw)
        if raw == json.dumps(sorted(names)):
            found.append("segments")
        elif raw == json.dumps(names, separators=(",", ":")) + "\n":
            found.append("tantivy")
        else:
            raise AssertionError(f"{split.path}: .managed.json of neither writer: {raw!r}")
    return found


def _frame(spark: Any) -> Any:
    return spark.range(400, numPartitions=2).selectExpr(
        "id", "cast(id % 7 as string) as s", "id / 8 as f", "if(id % 3 = 0, 'a', 'b') as p"
    )


def _rows(spark: Any, path: str) -> list[tuple[Any, ...]]:
    frame = spark.read.format("indextables").load(path).select("id", "s", "f", "p")
    return sorted(tuple(r) for r in frame.collect())


@pytest.fixture
def session_feed(spark: Any) -> Iterator[Any]:
    """Sets the session's feed for one test and unsets it after."""

    def set_feed(value: str | None) -> None:
        if value is None:
            spark.conf.unset(FEED_KEY)
        else:
            spark.conf.set(FEED_KEY, value)

    yield set_feed
    spark.conf.unset(FEED_KEY)


@pytest.mark.parametrize(("options", "writer"), [({}, "segments"), ({FEED_KEY: "json"}, "tantivy")])
def test_spark_write_tasks_use_the_default_feed(
    spark: Any, tmp_path: Path, options: dict[str, str], writer: str
) -> None:
    import indextables.pyspark as itp

    df = _frame(spark)
    path = str(tmp_path / "t")
    itp.write(df, path, options={"partitionBy": "p", **options})
    writers = _split_writers(path)
    assert len(writers) >= 2
    assert set(writers) == {writer}
    assert _rows(spark, path) == sorted(tuple(r) for r in df.collect())


def test_dataframe_writer_option_and_session_setting(
    spark: Any, tmp_path: Path, session_feed: Any
) -> None:
    import indextables.pyspark as itp

    df = _frame(spark)
    plain, option, session = (str(tmp_path / n) for n in ("plain", "option", "session"))
    df.write.format("indextables").mode("append").save(plain)
    assert set(_split_writers(plain)) == {"segments"}
    df.write.format("indextables").option(FEED_KEY, "json").mode("append").save(option)
    assert set(_split_writers(option)) == {"tantivy"}
    session_feed("json")  # the session setting, under itp.write's options
    itp.write(df, session)
    assert set(_split_writers(session)) == {"tantivy"}
    expected = sorted(tuple(r) for r in df.collect())
    assert _rows(spark, plain) == _rows(spark, option) == _rows(spark, session) == expected


@pytest.mark.parametrize(("feed", "writer"), [(None, "segments"), ("json", "tantivy")])
def test_merge_splits_purge_deletes_re_indexes_through_the_default_feed(
    spark: Any, tmp_path: Path, session_feed: Any, feed: str | None, writer: str
) -> None:
    import indextables.pyspark as itp

    df = _frame(spark)
    path = str(tmp_path / "t")
    itp.write(df, path, options={FEED_KEY: "json"})
    assert set(_split_writers(path)) == {"tantivy"}
    delete_rows(path, where="id < 50")
    session_feed(feed)
    merged = itp.sql(spark, f"MERGE SPLITS '{path}' PURGE DELETES").first()
    assert merged is not None
    assert set(_split_writers(path)) == {writer}
    assert _rows(spark, path) == sorted(tuple(r) for r in df.collect() if r["id"] >= 50)
