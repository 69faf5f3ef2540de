"""A smaller companion by the user's choice (companion.layout): record options, fast-only.

Filters on a fast-only column must be answered by the index's fast field (a Tantivy
range query), exactly as DuckDB answers them over the source, and without reading
every Parquet row; a phrase on a text column built without positions must fail
naming the column and the option.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_companion import canonical, duck

from indextables.search import build_companion, open_table
from indextables.search.companion import read as companion_read
from indextables.search.companion.sync import companion_config
from indextables.search.errors import (
    CompanionError,
    FieldKindError,
    FieldLayoutError,
    OptionError,
)
from indextables.search.options import parse_indexing
from indextables.search.schema.mapping import field_specs, specs_from_doc_mapping

RECORD = "spark.indextables.indexing.indexrecordoption."
DEFAULT_RECORD = "spark.indextables.indexing.text.indexRecordOption"
FAST_ONLY = "spark.indextables.indexing.fastonlyfields"
SMALL = {FAST_ONLY: "id,n,x,ts", RECORD + "message": "basic"}
COLUMNS = ["id", "n", "x", "ts", "flag", "message"]
I64_MIN, I64_MAX = -(2**63), 2**63 - 1
BASE = datetime(2024, 1, 1, tzinfo=UTC)


def _source(root: Path, rows: int) -> None:
    rng = random.Random(27)

    def maybe(value: object) -> object:
        return None if rng.random() < 0.1 else value

    floats = [0.0, -0.0, float("nan"), -float("nan"), float("inf"), -float("inf"), 1.5, -2.25]
    ints = [0, -1, 1, 7, I64_MIN, I64_MAX, I64_MIN + 1, I64_MAX - 1]
    stamps = [BASE + timedelta(microseconds=k) for k in (0, 1, 999_999, 1_000_000, -1)]
    table = pa.table(
        {
            "id": pa.array(range(rows), pa.int64()),
            "n": pa.array([maybe(rng.choice(ints)) for _ in range(rows)], pa.int64()),
            "x": pa.array([maybe(rng.choice(floats)) for _ in range(rows)], pa.float64()),
            "ts": pa.array(
                [maybe(rng.choice(stamps)) for _ in range(rows)], pa.timestamp("us", "UTC")
            ),
            "flag": pa.array([maybe(rng.random() < 0.5) for _ in range(rows)], pa.bool_()),
            "message": pa.array(
                [maybe(f"disk {rng.choice(['full', 'ok', 'café'])} {i}") for i in range(rows)]
            ),
        }
    )  # fmt: skip
    root.mkdir(parents=True)
    half = rows // 2
    pq.write_table(table.slice(0, half), root / "part-0.parquet", row_group_size=500)
    pq.write_table(table.slice(half), root / "part-1.parquet", row_group_size=500)


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    base = tmp_path_factory.mktemp("layout")
    _source(base / "src", 4000)
    result = build_companion(
        str(base / "src"), str(base / "idx"), source_format="parquet",
        indexing_modes={"message": "text"}, options=SMALL,
    )  # fmt: skip
    assert result.status == "success"
    cache = {"spark.indextables.cache.directoryPath": str(base / "cache")}
    return base, open_table(str(base / "idx"), options=cache)


def _source_sql(base: Path) -> str:
    files = ", ".join(f"'{base / 'src' / f'part-{n}.parquet'}'" for n in (0, 1))
    return f"read_parquet([{files}])"


def test_the_layout_is_in_the_splits_and_recorded_for_later_syncs(small: tuple[Path, Any]) -> None:
    _, table = small
    (split,) = table._view.splits
    specs = specs_from_doc_mapping(split.entry.doc_mapping_json)
    for name in ("id", "n", "x", "ts"):
        assert (specs[name].indexed, specs[name].fast) == (False, True), name
    assert specs["flag"].indexed
    assert specs["message"].indexed
    config = companion_config(table._view.configuration)
    assert config is not None
    assert config["recordOptions"] == '{"message": "basic"}'
    assert config["fastOnlyColumns"] == '["id", "n", "ts", "x"]'


# Filters on fast-only columns, with hostile operands (as DuckDB predicates too).
WHERES = [
    "id = 1234",
    "id IN (0, 3999, 2000, 5000)",
    "id BETWEEN 10 AND 20",
    "id < 3",
    "id >= 3997",
    "n = -9223372036854775808",
    "n = 9223372036854775807",
    "n < -9223372036854775807",
    "n > 9223372036854775806",
    "n IN (-1, 7)",
    "n BETWEEN -1 AND 1",
    "n IS NULL",
    "n IS NOT NULL",
    "n != 0",
    "x = 0.0",
    "x = -0.0",
    "x > 1.0",
    "x >= 1.5",
    "x < 0.0",
    "x <= -2.25",
    "x IN (1.5, -0.0)",
    "x BETWEEN -3 AND 0",
    "x IS NULL",
    "ts = TIMESTAMP '2024-01-01 00:00:00.000001Z'",
    "ts < TIMESTAMP '2024-01-01 00:00:00Z'",
    "ts >= TIMESTAMP '2024-01-01 00:00:01Z'",
    "ts BETWEEN TIMESTAMP '2024-01-01 00:00:00Z' AND TIMESTAMP '2024-01-01 00:00:00.999999Z'",
    "ts IS NULL",
    "n = 7 AND x > 0.0",
    "id < 100 AND ts IS NOT NULL",
]


@pytest.mark.parametrize("where", WHERES)
def test_fast_only_filters_match_duckdb_over_the_source(
    small: tuple[Path, Any], where: str
) -> None:
    base, table = small
    con = duckdb.connect()
    con.sql("SET TimeZone = 'UTC'")
    try:
        predicate = where.replace("TIMESTAMP '", "TIMESTAMPTZ '")
        sql = f"SELECT {', '.join(COLUMNS)} FROM {_source_sql(base)} WHERE {predicate}"
        expected = duck(con, sql)
    finally:
        con.close()
    found = table.search(where=where, columns=COLUMNS)
    assert canonical(found) == canonical(expected), where
    assert table.count(where=where) == expected.num_rows, where


class _Reads:
    """Counts what the companion reader takes from Parquet: whole files, hit rows."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.whole_files = 0
        self.rows = 0
        rows_of = companion_read._FileRows.rows
        whole_of = companion_read._FileRows.whole_file

        def rows(reader: Any, number: int, wanted: Any, **given: Any) -> Any:
            self.rows += len(wanted)
            return rows_of(reader, number, wanted, **given)

        def whole_file(reader: Any, number: int) -> Any:
            self.whole_files += 1
            return whole_of(reader, number)

        monkeypatch.setattr(companion_read._FileRows, "rows", rows)
        monkeypatch.setattr(companion_read._FileRows, "whole_file", whole_file)


def test_fast_only_filters_read_only_the_matching_rows(
    small: tuple[Path, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, table = small
    reads = _Reads(monkeypatch)
    assert [r["id"] for r in table.search(where="id = 1234", columns=["id"]).to_pylist()] == [1234]
    found = table.search(where="n = 9223372036854775807 AND x > 1.0", columns=["id"])
    assert reads.whole_files == 0
    assert reads.rows == 1 + found.num_rows
    # a count is the index's alone: no Parquet read at all
    before = reads.rows
    assert table.count(where="id BETWEEN 10 AND 19") == 10
    assert table.count(where="n IN (-1, 7) AND ts IS NULL") > 0
    assert (reads.rows, reads.whole_files) == (before, 0)


def test_a_phrase_without_positions_fails_naming_the_column_and_option(
    small: tuple[Path, Any],
) -> None:
    _, table = small
    # words still match (basic postings)
    assert table.count("message:café") > 0
    with pytest.raises(FieldLayoutError, match=r"'message'.*indexrecordoption\.message"):
        table.search('message:"disk full"')
    with pytest.raises(FieldLayoutError, match=r"'message'.*indexrecordoption\.message"):
        table.count('message:"disk full"')
    # a term on a fast-only column: its range form works, the term names the column
    assert table.count("id:[5 TO 5]") == 1
    with pytest.raises(FieldLayoutError, match=r"column 'id' is not indexed.*fastonlyfields"):
        table.search("id:5")
    with pytest.raises(FieldKindError, match=r"'id'.*fast-only.*fastonlyfields"):
        table.search(fieldmatch={"id": "5"})


def test_the_default_layout_is_the_references(tmp_path: Path) -> None:
    _source(tmp_path / "src", 200)
    build_companion(
        str(tmp_path / "src"), str(tmp_path / "idx"), source_format="parquet",
        indexing_modes={"message": "text"},
    )  # fmt: skip
    table = open_table(str(tmp_path / "idx"))
    specs = specs_from_doc_mapping(table._view.splits[0].entry.doc_mapping_json)
    assert all(s.indexed for s in specs.values())
    assert table.count('message:"disk full"') > 0
    config = companion_config(table._view.configuration)
    assert config is not None
    assert "recordOptions" not in config
    assert "fastOnlyColumns" not in config


@pytest.mark.parametrize(
    ("options", "modes", "match"),
    [
        ({RECORD + "message": "fast"}, {"message": "text"}, r"not one of: basic, freq"),
        ({RECORD + "nope": "basic"}, {"message": "text"}, r"names 'nope'"),
        ({RECORD + "n": "basic"}, {}, r"'n' is a i64 field.*text columns"),
        ({FAST_ONLY: "message"}, {}, r"fastonlyfields: column 'message' is a string"),
        ({FAST_ONLY: "flag"}, {}, r"column 'flag' is a bool field"),
        ({FAST_ONLY: "missing"}, {}, r"names 'missing'"),
    ],
)
def test_bad_layout_keys_are_refused_by_name(
    tmp_path: Path, options: dict[str, str], modes: dict[str, str], match: str
) -> None:
    _source(tmp_path / "src", 20)
    with pytest.raises((CompanionError, OptionError), match=match):
        build_companion(
            str(tmp_path / "src"), str(tmp_path / "idx"), source_format="parquet",
            indexing_modes=modes, options=options,
        )  # fmt: skip


def test_fast_only_needs_fast_fields(tmp_path: Path) -> None:
    _source(tmp_path / "src", 20)
    with pytest.raises(CompanionError, match="PARQUET_ONLY"):
        build_companion(
            str(tmp_path / "src"), str(tmp_path / "idx"), source_format="parquet",
            fast_field_mode="PARQUET_ONLY", options={FAST_ONLY: "id"},
        )  # fmt: skip


def test_a_sync_keeps_the_recorded_layout_and_the_default_record_option_applies(
    tmp_path: Path,
) -> None:
    root = tmp_path / "src"
    _source(root, 100)
    index = str(tmp_path / "idx")
    build_companion(
        str(root), index, source_format="parquet", indexing_modes={"message": "text"},
        options={DEFAULT_RECORD: "freq", FAST_ONLY: "id"},
    )  # fmt: skip
    extra = pa.table({"id": pa.array([10_000], pa.int64()), "message": ["disk full 10000"]})
    pq.write_table(extra, root / "part-2.parquet")
    result = build_companion(str(root), index, source_format="parquet")  # no options this time
    assert result.parquet_files_indexed == 1
    table = open_table(index)
    for split in table._view.splits:
        specs = specs_from_doc_mapping(split.entry.doc_mapping_json)
        assert not specs["id"].indexed
        assert specs["id"].fast
    assert table.count(where="id = 10000") == 1
    with pytest.raises(FieldLayoutError, match="message"):
        table.count('message:"disk full"')


def test_a_table_write_refuses_fastonlyfields() -> None:
    options = parse_indexing({FAST_ONLY: "id"})
    with pytest.raises(OptionError, match="companion indexes only"):
        field_specs(pa.schema([("id", pa.int64())]), options)


@pytest.mark.parametrize(
    "options", [{RECORD + "message": "basic"}, {RECORD + "basic": "message"}],
    ids=["per-column", "list"],
)  # fmt: skip
def test_an_exact_string_column_without_positions_still_matches_exactly(
    tmp_path: Path, options: dict[str, str]
) -> None:
    """indexrecordoption.<string column>=basic (or the list form, as the benchmarks' small
    layout gives it): one token a value, so exact matches and a quoted value (a term, not
    a phrase) answer as before."""
    root = tmp_path / "src"
    _source(root, 300)
    build_companion(str(root), str(tmp_path / "idx"), source_format="parquet", options=options)
    table = open_table(str(tmp_path / "idx"))
    config = companion_config(table._view.configuration)
    assert config is not None
    assert config["recordOptions"] == '{"message": "basic"}'
    con = duckdb.connect()
    matched = 0
    try:
        for value in ("disk ok 5", "disk café 7", "disk full 12", "disk ok 12", ""):
            rows = duck(con, f"SELECT id FROM {_source_sql(tmp_path)} WHERE message = '{value}'")
            found = table.search(where=f"message = '{value}'", columns=["id"])
            assert canonical(found) == canonical(rows), value
            matched += rows.num_rows
            if value:
                assert table.count(f'message:"{value}"') == rows.num_rows, value
    finally:
        con.close()
    assert matched > 0
