"""search, count and aggregate: rows out of a table as text, JSON and CSV (no Spark).

Tables are written with indextables.search's SplitWriter and committed through
its table access, or are the golden tables the reference wrote.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import math
import os
import tempfile
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from indextables.search import SearchTable, open_table
from indextables.search.options import parse_indexing, parse_write
from indextables.search.schema.mapping import field_specs
from indextables.search.schema.schemajson import spark_json
from indextables.search.splits.splitcache import CACHE_DIR_ENV, default_cache_dir
from indextables.search.table.tableaccess import commit_write, open_table_store
from indextables.search.write.splitwriter import SplitWriter

TEXT_OPTIONS = {"spark.indextables.indexing.typemap.message": "text"}


def write_table(uri: str, data: pa.Table, options: dict[str, str] | None = None) -> None:
    """Append ``data`` as one split (a commit per call), as a Spark write would."""
    opts = dict(options or {})
    write = parse_write(opts)
    writer = SplitWriter(
        open_table_store(uri, opts),
        field_specs(data.schema, parse_indexing(opts)),
        (),
        heap_size=write.heap_size,
        batch_size=write.batch_size,
    )
    writer.write(data.to_batches())
    commit_write(
        uri,
        opts,
        schema_json=spark_json(data.schema),
        partition_columns=(),
        adds=writer.finish(),
        overwrite=False,
        configuration={k: v for k, v in opts.items() if "indexing" in k},
    )


def logs(start: int, count: int) -> pa.Table:
    ids = list(range(start, start + count))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "level": [("INFO", "WARN", "ERROR")[i % 3] for i in ids],
            "host": [f"host-{i % 7}" for i in ids],
            "message": [f"request {i} served {'needlezz' if i % 10 == 0 else 'ok'}" for i in ids],
        }
    )


@pytest.fixture
def log_table(tmp_path: Path) -> str:
    """Three splits (three appends) of 40 log rows each; every tenth has the needle."""
    uri = str(tmp_path / "logs")
    for start in (0, 40, 80):
        write_table(uri, logs(start, 40), TEXT_OPTIONS)
    return uri


HOSTILE = pa.table(
    {
        "id": pa.array([1, 2, 3, None], pa.int64()),
        "big": pa.array([2**63 - 1, -(2**63), 0, None], pa.int64()),
        "score": pa.array([math.nan, math.inf, -0.0, None], pa.float64()),
        "name": pa.array(['a,"b"\nc', "é ☃", "", None]),
        "day": pa.array([date(2024, 1, 2), None, date(1, 1, 1), date(9999, 12, 31)]),
        "ts": pa.array(
            [datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=UTC), None, None, None],
            pa.timestamp("us", tz="UTC"),
        ),
        "raw": pa.array([b"\x00\xff", None, b"", b"x"]),
        "tags": pa.array([["x", "y"], None, [], ["z", None]], pa.list_(pa.string())),
        "m": pa.array([[("k", 1)], None, [], [("a", None)]], pa.map_(pa.string(), pa.int32())),
        "flag": pa.array([True, False, None, True]),
    }
)


@pytest.fixture
def hostile_table(tmp_path: Path) -> str:
    uri = str(tmp_path / "hostile")
    write_table(uri, HOSTILE)
    return uri


def by_id(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: (r["id"] is None, r["id"] or 0))


# -- search --------------------------------------------------------------------------


def test_search_json_spells_every_value_exactly(hostile_table: str, cli_run: Any) -> None:
    run = cli_run("search", hostile_table, "-o", "json")
    assert run.exit_code == 0, run.stderr
    answer = run.json()
    assert answer["columns"] == HOSTILE.schema.names
    assert answer["num_rows"] == 4
    assert answer["version"] == open_table(hostile_table).version
    first, second, third, last = by_id(answer["rows"])
    assert first == {
        "id": 1,
        "big": 2**63 - 1,
        "score": "NaN",
        "name": 'a,"b"\nc',
        "day": "2024-01-02",
        "ts": "2024-01-02T03:04:05.000006+00:00",
        "raw": base64.b64encode(b"\x00\xff").decode(),
        "tags": ["x", "y"],
        "m": {"k": 1},
        "flag": True,
    }
    assert second["big"] == -(2**63)
    assert second["score"] == "Infinity"
    assert second["name"] == "é ☃"
    assert second["tags"] is None
    assert second["m"] is None
    assert math.copysign(1.0, third["score"]) == -1.0  # -0.0 keeps its sign
    assert third["raw"] == ""
    assert third["tags"] == []
    assert third["m"] == {}
    assert last["id"] is None
    assert last["day"] == "9999-12-31"
    assert last["m"] == {"a": None}


def test_search_csv_round_trips_through_a_csv_reader(hostile_table: str, cli_run: Any) -> None:
    run = cli_run("search", hostile_table, "-o", "csv", "--columns", "id,name,score,tags")
    assert run.exit_code == 0, run.stderr
    rows = list(csv.reader(io.StringIO(run.stdout)))
    assert rows[0] == ["id", "name", "score", "tags"]
    body = sorted(rows[1:], key=lambda r: (r[0] == "", r[0]))
    assert body == [
        ["1", 'a,"b"\nc', "NaN", '["x","y"]'],
        ["2", "é ☃", "Infinity", ""],
        ["3", "", "-0.0", "[]"],
        ["", "", "", '["z",null]'],
    ]


def test_search_query_columns_and_limit(log_table: str, cli_run: Any) -> None:
    run = cli_run("search", log_table, "message:needlezz", "--columns", "message,id", "-o", "json")
    assert run.exit_code == 0, run.stderr
    rows = run.json()["rows"]
    assert sorted(r["id"] for r in rows) == list(range(0, 120, 10))
    assert all(list(r) == ["message", "id"] and "needlezz" in r["message"] for r in rows)
    limited = cli_run("search", log_table, "message:needlezz", "--limit", "3", "-o", "json")
    assert limited.json()["num_rows"] == 3
    assert all(r["id"] % 10 == 0 for r in limited.json()["rows"])


def test_search_fills_the_sessions_private_cache_not_the_users(
    log_table: str, cli_run: Any
) -> None:
    # conftest.py gives the session its own cache directory (INDEXTABLES_CACHE_DIR).
    private = os.environ[CACHE_DIR_ENV]
    assert default_cache_dir() == private
    assert private != os.path.join(tempfile.gettempdir(), f"indextables-split-cache-{os.getuid()}")
    run = cli_run("search", log_table, "message:needlezz", "-o", "json")
    assert run.exit_code == 0, run.stderr
    assert [name for name in os.listdir(private) if not name.startswith(".")]


def test_search_reads_only_the_columns_and_splits_the_answer_needs(
    log_table: str, cli_run: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import indextables.search.read.splitbatches as splitbatches

    reads: list[list[str]] = []
    original = splitbatches.read_any_split

    def counted(*args: Any, **kwargs: Any) -> Any:
        reads.append(list(kwargs["schema"].names))
        return original(*args, **kwargs)

    monkeypatch.setattr(splitbatches, "read_any_split", counted)
    run = cli_run("search", log_table, "--columns", "host", "--limit", "5", "-o", "csv")
    assert run.exit_code == 0, run.stderr
    assert len(run.stdout.splitlines()) == 6
    # One split of three, and only its host column: the limit stopped the scan.
    assert reads == [["host"]]


def test_search_text_shows_at_most_the_first_rows_and_stops_reading(
    log_table: str, cli_run: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import indextables.admin.rowsout as rowsout
    import indextables.search.read.splitbatches as splitbatches

    monkeypatch.setattr(rowsout, "TEXT_MAX_ROWS", 30)
    reads: list[int] = []
    original = splitbatches.read_any_split

    def counted(*args: Any, **kwargs: Any) -> Any:
        reads.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(splitbatches, "read_any_split", counted)
    # One split at a time (a full read otherwise reads splitThreads splits ahead).
    one = ("-S", "spark.indextables.read.splitThreads=1")
    run = cli_run("search", log_table, "--columns", "id,level", *one)
    assert run.exit_code == 0, run.stderr
    assert "(30+ rows)" in run.stdout
    assert "only the first 30 rows are shown" in run.stdout
    assert len(reads) == 1  # the first split had more than 30 rows: nothing else was read
    exact = cli_run("search", log_table, "message:needlezz", "--columns", "id")
    assert "(12 rows)" in exact.stdout
    assert "only the first" not in exact.stdout


def api_answer(uri: str, where: str) -> tuple[str, Any]:
    """The API's rows for ``where``, or its error's type name and message."""
    try:
        return "rows", open_table(uri).search(where=where).to_pylist()
    except Exception as error:  # the API's own refusal is the oracle
        return "error", {"type": type(error).__name__, "message": str(error)}


def test_search_where_answers_as_the_api_does(log_table: str, cli_run: Any) -> None:
    """The command passes --where to SearchTable.scan: same rows, or the same error."""
    where = "host = 'host-3' AND id >= 50"
    run = cli_run("search", log_table, "--where", where, "-o", "json")
    kind, expected = api_answer(log_table, where)
    if kind == "error":
        assert run.exit_code == 1
        error = json.loads(run.stderr)["error"]
        assert {"type": error["type"], "message": error["message"]} == expected
    else:
        assert run.exit_code == 0, run.stderr
        assert by_id(run.json()["rows"]) == by_id(expected)


def test_search_golden_tables_give_the_reference_rows(
    golden_copy: Path, golden_expected: dict[str, Any], cli_run: Any
) -> None:
    run = cli_run("search", str(golden_copy), "-o", "json")
    assert run.exit_code == 0, run.stderr
    key = lambda r: json.dumps(r, sort_keys=True)  # noqa: E731
    assert sorted(run.json()["rows"], key=key) == sorted(golden_expected["rows"], key=key)
    count = cli_run("count", str(golden_copy), "-o", "json")
    assert count.json()["count"] == golden_expected["numRows"]


def test_search_on_s3_takes_store_options_and_never_echoes_secrets(
    s3_table: tuple[str, list[str]], cli_run: Any
) -> None:
    uri, args = s3_table
    run = cli_run("search", uri, "text:doc3", "-o", "json", *args)
    assert run.exit_code == 0, run.stderr
    assert [r["id"] for r in run.json()["rows"]] == [3]
    secret = next(a.split("=", 1)[1] for a in args if a.startswith("secret_access_key="))
    missing = cli_run("search", uri + "-missing", *args, "-v")
    assert missing.exit_code == 2
    assert secret not in missing.stdout + missing.stderr


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (("--columns", "id,nope"), 1, "'nope'"),
        (("message:(",), 1, "message:("),
        (("--limit", "-1"), 1, "--limit"),
        (("--version", "99"), 2, "99"),
    ],
)
def test_search_errors_exit_with_a_clear_message(
    log_table: str, cli_run: Any, args: tuple[str, ...], code: int, says: str
) -> None:
    run = cli_run("search", log_table, *args)
    assert run.exit_code == code, run.stdout
    assert says in run.stderr
    assert "Traceback" not in run.stderr


def test_a_missing_table_is_not_found(tmp_path: Path, cli_run: Any) -> None:
    run = cli_run("search", str(tmp_path / "none"), "-o", "json")
    assert run.exit_code == 2
    assert json.loads(run.stderr)["error"]["exit_code"] == 2


def test_csv_is_refused_by_document_commands_and_accepted_before_the_name(
    log_table: str, cli_run: Any
) -> None:
    refused = cli_run("describe", log_table, "-o", "csv")
    assert refused.exit_code == 1
    assert "'csv' is not one of 'text', 'json'" in refused.stderr
    before = cli_run("-o", "csv", "describe", log_table)
    assert before.exit_code == 1
    assert "--output csv is not available for this command" in before.stderr
    run = cli_run("-o", "csv", "search", log_table, "--columns", "id", "--limit", "2")
    assert run.exit_code == 0, run.stderr
    assert run.stdout.splitlines()[0] == "id"
    assert len(run.stdout.splitlines()) == 3


# -- count ---------------------------------------------------------------------------


def test_count_in_every_form(log_table: str, cli_run: Any) -> None:
    table = open_table(log_table).to_arrow()
    needles = pc.sum(pc.match_substring(table["message"], "needlezz")).as_py()
    answer = cli_run("count", log_table, "message:needlezz", "-o", "json").json()
    assert answer["count"] == needles == 12
    assert answer["query"] == "message:needlezz"
    assert answer["table"] == log_table
    assert cli_run("count", log_table, "-o", "json").json()["count"] == table.num_rows == 120
    assert cli_run("count", log_table, "message:needlezz", "-o", "csv").stdout == "count\n12\n"
    text = cli_run("count", log_table, "message:needlezz").stdout
    assert "count" in text
    assert "12" in text


def test_count_reads_no_column_it_does_not_need(
    log_table: str, cli_run: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import indextables.search.read.splitbatches as splitbatches

    reads: list[list[str]] = []
    original = splitbatches.read_any_split

    def counted(*args: Any, **kwargs: Any) -> Any:
        reads.append(list(kwargs["schema"].names))
        return original(*args, **kwargs)

    monkeypatch.setattr(splitbatches, "read_any_split", counted)
    assert cli_run("count", log_table, "message:needlezz", "-o", "json").json()["count"] == 12
    assert all(len(names) <= 1 for names in reads)


# -- aggregate -----------------------------------------------------------------------


def test_aggregate_without_the_engine_method_is_a_clear_error(
    log_table: str, cli_run: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delattr(SearchTable, "aggregate", raising=False)
    run = cli_run("aggregate", log_table, "--group-by", "level", "--metrics", "count")
    assert run.exit_code == 1
    assert "SearchTable.aggregate" in run.stderr
    assert "Traceback" not in run.stderr


def test_aggregate_passes_the_specs_and_writes_the_answer(
    log_table: str, cli_run: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from indextables.search.aggregate import aggspec

    calls: list[dict[str, Any]] = []

    def aggregate(self: SearchTable, **kwargs: Any) -> pa.Table:
        calls.append(kwargs)
        rows = self.search(kwargs["query"], columns=["level"]).column("level")
        counts = pc.value_counts(rows)
        answer = pa.table({"level": counts.field("values"), "n": counts.field("counts")})
        return answer.sort_by("level")

    monkeypatch.setattr(SearchTable, "aggregate", aggregate, raising=False)
    args = ("--group-by", "level", "--group-by", "histogram(id, 10) as bucket")
    run = cli_run(
        "aggregate",
        log_table,
        "message:needlezz",
        *args,
        "--metrics",
        "n=count,max(id)",
        "-o",
        "json",
    )
    assert run.exit_code == 0, run.stderr
    assert calls == [
        {
            "group_by": ["level", aggspec.histogram("id", 10, name="bucket")],
            "metrics": {"n": "count", "max_id": ("max", "id")},
            "where": None,
            "query": "message:needlezz",
        }
    ]
    assert run.json()["rows"] == [
        {"level": "ERROR", "n": 4},
        {"level": "INFO", "n": 4},
        {"level": "WARN", "n": 4},
    ]
    csv_run = cli_run(
        "aggregate", log_table, "--group-by", "level", "--metrics", "n=count", "-o", "csv"
    )
    assert csv_run.stdout.splitlines()[0] == "level,n"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--group-by", "histogram(id)"), "--group-by"),
        (("--group-by", "a b"), "--group-by"),
        (("--group-by", "range(id, x)"), "not a number"),
        (("--group-by", "level", "--metrics", "median(id)x"), "--metrics"),
        (("--group-by", "level", "--metrics", "count,n=count,count"), "two metrics"),
    ],
)
def test_aggregate_bad_specs_are_usage_errors(
    log_table: str, cli_run: Any, args: tuple[str, ...], says: str
) -> None:
    full = args if "--metrics" in args else (*args, "--metrics", "count")
    run = cli_run("aggregate", log_table, *full)
    assert run.exit_code == 1
    assert says in run.stderr
    assert "Traceback" not in run.stderr
