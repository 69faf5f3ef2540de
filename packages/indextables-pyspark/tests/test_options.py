"""Reader and writer option parsing."""

from __future__ import annotations

import pytest

from indextables.pyspark.errors import OptionError
from indextables.search.options import parse_read, parse_size, parse_write


def test_write_options_defaults_and_values() -> None:
    parsed = parse_write(
        {
            "spark.indextables.indexWriter.heapSize": "100M",
            "spark.indextables.indexwriter.batchsize": "500",
            "partitionBy": "day, hour",
        }
    )
    assert (parsed.heap_size, parsed.batch_size) == (100 << 20, 500)
    assert parsed.partition_columns == ("day", "hour")
    assert parse_write({"__partition_columns": '["a"]'}).partition_columns == ("a",)


@pytest.mark.parametrize(
    "options",
    [
        {"spark.indextables.indexwriter.heapsize": "1M"},
        {"spark.indextables.indexwriter.heapsize": "lots"},
        {"spark.indextables.indexwriter.batchsize": "0"},
    ],
)
def test_bad_write_options(options: dict[str, str]) -> None:
    with pytest.raises(OptionError, match=r"spark\.indextables\.indexwriter"):
        parse_write(options)


def test_read_options() -> None:
    parsed = parse_read(
        {"versionAsOf": "3", "query": "a:b", "textsearch.Msg": "x", "fieldmatch.lvl": "E"}
    )
    assert (parsed.version_as_of, parsed.query) == (3, "a:b")
    assert dict(parsed.text_search) == {"msg": "x"}
    assert dict(parsed.field_match) == {"lvl": "E"}
    assert parse_read({"timestampAsOf": "1970-01-01T00:00:01"}).timestamp_as_of == 1000


@pytest.mark.parametrize(
    "options",
    [{"versionAsOf": "1", "timestampAsOf": "5"}, {"versionAsOf": "-2"}, {"timestampAsOf": "soon"}],
)
def test_bad_read_options(options: dict[str, str]) -> None:
    with pytest.raises(OptionError):
        parse_read(options)


def test_parse_size() -> None:
    assert parse_size("k", "2g") == 2 << 30
    assert parse_size("k", "1024") == 1024


def test_selective_reads_group_more_splits_per_task_unless_set() -> None:
    assert (parse_read({}).splits_per_task, parse_read({}).selective_splits_per_task) == (4, 16)
    both = parse_read({"spark.indextables.read.splitsPerTask": "2"})
    assert (both.splits_per_task, both.selective_splits_per_task) == (2, 2)


def test_splits_per_task_auto_and_max_splits_per_task() -> None:
    auto = parse_read({"spark.indextables.read.splitsPerTask": "AUTO"})
    assert (auto.splits_per_task, auto.selective_splits_per_task) == (4, 16)
    capped = parse_read(
        {
            "spark.indextables.read.splitsPerTask": "auto",
            "spark.indextables.read.maxSplitsPerTask": "8",
        }
    )
    assert (capped.splits_per_task, capped.selective_splits_per_task) == (4, 8)
    explicit = parse_read(
        {
            "spark.indextables.read.splitsPerTask": "12",
            "spark.indextables.read.maxSplitsPerTask": "2",
        }
    )
    assert (explicit.splits_per_task, explicit.selective_splits_per_task) == (12, 12)


@pytest.mark.parametrize(
    ("key", "value"),
    [("read.splitsPerTask", "many"), ("read.splitsPerTask", "0"), ("read.maxSplitsPerTask", "0")],
)
def test_bad_splits_per_task(key: str, value: str) -> None:
    with pytest.raises(OptionError, match=key.lower().replace(".", r"\.")):
        parse_read({"spark.indextables." + key: value})
