"""Quoted date terms in query text become one-instant ranges (exact at any precision)."""

from __future__ import annotations

from datetime import UTC, datetime

import pyarrow as pa
import pytest

from indextables.search import open_table, write_table
from indextables.search.query.datequery import (
    edge_date_literals,
    exact_date_terms,
    inexact_date_literals,
)

T = "2020-01-01T00:00:00.3Z"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f'ts:"{T}"', f"ts:[{T} TO {T}]"),
        (f'ts:"{T}" AND s:x', f"ts:[{T} TO {T}] AND s:x"),
        (
            f'(ts:"{T}" OR ts:"2020-01-01T01:00:00+01:00")',
            f"(ts:[{T} TO {T}] OR ts:[2020-01-01T01:00:00+01:00 TO 2020-01-01T01:00:00+01:00])",
        ),
        (f'other:"{T}"', f'other:"{T}"'),
        (f'body:"says ts:" ts:"{T}"', f'body:"says ts:" ts:[{T} TO {T}]'),
        (f'body:"a ts:\\"{T}\\""', f'body:"a ts:\\"{T}\\""'),
        ('ts:"yesterday"', 'ts:"yesterday"'),
        (f'xts:"{T}"', f'xts:"{T}"'),
        (f"ts:[{T} TO *]", f"ts:[{T} TO *]"),
        (f'ts: IN ["{T}"]', f"(ts:[{T} TO {T}])"),
        (
            f'-ts:IN ["{T}" "1969-12-31T23:59:59.5Z"]',
            f"-(ts:[{T} TO {T}] OR ts:[1969-12-31T23:59:59.5Z TO 1969-12-31T23:59:59.5Z])",
        ),
        (f'ts: IN ["{T}" "x"]', f'ts: IN ["{T}" "x"]'),  # not all dates: left to Tantivy
        (f'other: IN ["{T}"]', f'other: IN ["{T}"]'),
    ],
)
def test_exact_date_terms(text: str, expected: str) -> None:
    assert exact_date_terms(text, {"ts"}) == expected


def test_nothing_to_rewrite_without_date_fields() -> None:
    assert exact_date_terms(f'ts:"{T}"', set()) == f'ts:"{T}"'


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ts:[1677-09-21T00:12:43.145225Z TO *]", [("ts", "1677-09-21T00:12:43.145225Z")]),
        ("ts:[1677-09-21T00:12:43.145226Z TO *]", []),
        (
            "ts:{2000-01-01T00:00:00Z TO 2262-04-11T23:47:16.854775Z}",
            [("ts", "2262-04-11T23:47:16.854775Z")],
        ),
        ("ts:[2000-01-01T00:00:00Z TO 2262-04-11T23:47:16.854774Z]", []),
        ("ts:>0001-01-01T00:00:00Z", [("ts", "0001-01-01T00:00:00Z")]),
        ("ts: <= 3000-01-01T00:00:00-01:00", [("ts", "3000-01-01T00:00:00-01:00")]),
        ("ts:[0000-01-01T00:00:00Z TO *]", [("ts", "0000-01-01T00:00:00Z")]),
        ("other:[1000-01-01T00:00:00Z TO *]", []),
        ('body:"ts:[1000-01-01T00:00:00Z TO *]"', []),
        ("(a:x OR ts:[* TO 1000-01-01T00:00:00z])", [("ts", "1000-01-01T00:00:00z")]),
        ("xts:[1000-01-01T00:00:00Z TO *]", []),
    ],
)
def test_edge_date_literals(text: str, expected: list[tuple[str, str]]) -> None:
    assert edge_date_literals(text, {"ts"}) == expected


W = "2024-01-01T00:00:00Z"  # a whole second after the epoch


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"ts:[{W} TO *]", []),
        (f"ts:[* TO {W}}}", []),
        (f"ts:[{W} TO 2024-01-02T00:00:00+01:00}}", []),
        (f"ts:>={W}", []),
        (f"ts:<{W}", []),
        (f"ts:[{W} TO {W}]", [("ts", W)]),  # inclusive upper bound (a quoted term, rewritten)
        (f"ts:{{{W} TO *]", [("ts", W)]),  # exclusive lower bound
        (f"ts:>{W} AND ts:<={W}", [("ts", W), ("ts", W)]),
        ("ts:[2024-01-01T00:00:00.5Z TO *]", [("ts", "2024-01-01T00:00:00.5Z")]),
        ("ts:[1970-01-01T00:00:00Z TO *]", [("ts", "1970-01-01T00:00:00Z")]),  # toward zero
        ("ts:[1955-01-01T00:00:00Z TO *]", [("ts", "1955-01-01T00:00:00Z")]),
        ("ts:[1970-01-01T00:00:01Z TO *]", []),
        (f"ts:{W}", [("ts", W)]),  # an unquoted term
        (f'other:[2024-01-01T00:00:00.5Z TO *] AND body:"ts:>{W}"', []),
        (f"(k:x OR ts:[{W} TO {W}])", [("ts", W)]),
        ("ts:[yesterday TO *]", [("ts", "yesterday")]),  # not a date Python reads: not exact
        (f'ts:"{W}"', [("ts", W)]),  # a quoted instant (before the rewrite into a range)
        # A quoted phrase of another field is skipped whole, the clause after it still seen.
        (f's:"{W} foo" AND ts:[2024-01-01T00:00:00.5Z TO *]', [("ts", "2024-01-01T00:00:00.5Z")]),
        (f'body:"x \\" ts:>{W}" AND k:1', []),  # inside a quoted phrase: not a clause
    ],
)
def test_inexact_date_literals(text: str, expected: list[tuple[str, str]]) -> None:
    assert inexact_date_literals(text, {"ts"}) == expected


def test_no_coarse_fields_no_inexact_literals() -> None:
    assert inexact_date_literals(f"ts:[{W} TO {W}]", set()) == []


@pytest.fixture(scope="module")
def dated(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("dated") / "t")
    instants = [
        datetime(2024, 1, 1, tzinfo=UTC),
        datetime(2024, 1, 1, 0, 0, 0, 500_000, tzinfo=UTC),  # the same second
        None,
        datetime(1969, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),  # indexed as the epoch
        datetime(1970, 1, 1, tzinfo=UTC),
    ]
    data = pa.table(
        {
            "id": pa.array(range(len(instants)), pa.int64()),
            "ts": pa.array(instants, pa.timestamp("us", tz="UTC")),
        }
    )
    write_table(path, data)
    return path


@pytest.mark.parametrize(
    "members",
    [
        ["2024-01-01T00:00:00Z"],
        ["2024-01-01T00:00:00.5Z"],
        ["1969-12-31T23:59:59.999999Z", "2024-01-01T01:00:00.5+01:00"],
        ["1970-01-01T00:00:00Z"],
    ],
)
def test_a_date_term_set_matches_as_sparks_in(dated: str, members: list[str]) -> None:
    # Tantivy's terms hold whole seconds: a term set read them as is, so `IN ["...00Z"]`
    # also matched 00:00:00.5, and a sub-second instant nothing.
    table = open_table(dated)
    wanted = {datetime.fromisoformat(m.replace("Z", "+00:00")) for m in members}
    rows = table.search(columns=["id", "ts"]).to_pylist()
    expected = sorted(r["id"] for r in rows if r["ts"] in wanted)
    text = "ts: IN [" + " ".join(f'"{m}"' for m in members) + "]"
    assert sorted(table.search(text, columns=["id"]).column("id").to_pylist()) == expected
    assert table.count(text) == len(expected)
    assert expected  # each set names a stored instant
