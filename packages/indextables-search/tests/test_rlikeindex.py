"""``where`` RLIKE (Spark's Java regex, a find) through the row filter and the term dictionary.

Patterns are built from atoms, each written twice: as Java (what the ``where``
holds) and as Python's ``re`` with ``re.ASCII`` (the model): Java's ``.`` skips
five line terminators, its ``$`` matches before one final terminator of any
kind, its ``\\d \\w \\s`` are ASCII. The model's ``re.search`` over the rows is
the oracle, on hostile values (nulls, ``""``, line breaks of every kind,
unicode, values beyond the term limit).
"""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from indextables.search import open_table, write_table
from indextables.search.errors import QuerySyntaxError
from indextables.search.query.conditions import Condition, translate_where
from indextables.search.query.tantivyquery import MAX_TERM_BYTES
from indextables.search.query.whereeval import WhereFilter

sys.path.insert(0, str(Path(__file__).resolve().parent))
from goldenfixtures import GOLDEN_NAMES

ALPHABET = ["a", "b", "c", "1", "7", "-", ".", " ", "_", "\n", "\r", "\u0085", "\u2028", "é"]
ALPHABET += ["İ", "日", "\U0001f600", "$", "^", "(", "\\", "\t", "\x0b", "A", "Z", "٣"]

_DOT = "[^\n\r\x85\u2028\u2029]"
_END = "(?=(?:\r\n|[\n\r\x85\u2028\u2029])?\\Z)"

# (java, python) pairs: one atom each.
ATOMS = [
    ("a", "a"),
    ("b", "b"),
    ("1", "1"),
    ("é", "é"),
    ("日", "日"),
    ("\\.", "\\."),
    ("\\$", "\\$"),
    ("\\(", "\\("),
    ("\\\\", "\\\\"),
    ("-", "-"),
    (" ", " "),
    (".", _DOT),
    ("\\d", "\\d"),
    ("\\D", "\\D"),
    ("\\w", "\\w"),
    ("\\W", "\\W"),
    ("\\s", "\\s"),
    ("\\S", "\\S"),
    ("\\n", "\\n"),
    ("\\t", "\\t"),
    ("\\x{1F600}", "\U0001f600"),
    ("\\u00e9", "é"),
    ("\\x2d", "\\-"),
    ("[a-c]", "[a-c]"),
    ("[^a\\s]", "[^a\\s]"),
    ("[\\d.-]", "[\\d.\\-]"),
    ("[^\\w]", "[^\\w]"),
    ("[é-日]", "[é-日]"),
    ("\\Qa.$\\E", re.escape("a.$")),
]
QUANTIFIERS = [("*", "*"), ("+", "+"), ("?", "?"), ("{2}", "{2}"), ("{1,3}", "{1,3}")]
QUANTIFIERS += [("*?", "*"), ("{0,}", "{0,}")]


def _piece(rng: random.Random, depth: int = 0) -> tuple[str, str]:
    if depth < 2 and rng.random() < 0.15:
        left = _sequence(rng, depth + 1)
        right = _sequence(rng, depth + 1)
        java, python = (
            (f"({left[0]}|{right[0]})", f"(?:{left[1]}|{right[1]})")
            if rng.random() < 0.5
            else (f"(?:{left[0]})", f"(?:{left[1]})")
        )
    else:
        java, python = rng.choice(ATOMS)
    if rng.random() < 0.3:
        qj, qp = rng.choice(QUANTIFIERS)
        if java.startswith("\\Q"):  # a quantifier after \Q...\E takes its last character
            java, python = java + qj, re.escape("a.") + f"(?:\\$){qp}"
        else:
            java, python = java + qj, f"(?:{python}){qp}"
    return java, python


def _sequence(rng: random.Random, depth: int = 0) -> tuple[str, str]:
    pieces = [_piece(rng, depth) for _ in range(rng.randrange(0, 4))]
    return "".join(j for j, _ in pieces), "".join(p for _, p in pieces)


def _pattern(rng: random.Random) -> tuple[str, str]:
    java, python = _sequence(rng)
    if rng.random() < 0.25:
        java, python = "^" + java, "\\A" + python
    if rng.random() < 0.25:
        java, python = java + "$", python + _END
    return java, python


FIXED = [
    ("", ""),
    ("^", "\\A"),
    ("$", _END),
    ("^$", "\\A" + _END),
    ("a$", "a" + _END),
    ("^web-\\d+$", "\\Aweb-\\d+" + _END),
    ("a|b", "a|b"),
    (".", _DOT),
    ("zzz", "zzz"),
    ("\\s", "\\s"),
]


def _value(rng: random.Random) -> str | None:
    roll = rng.random()
    if roll < 0.1:
        return None
    if roll < 0.15:
        return ""
    return "".join(rng.choices(ALPHABET, k=rng.randrange(1, 8)))


def _rows(seed: int, count: int, *, huge: bool) -> pa.Table:
    rng = random.Random(seed)
    hosts = [_value(rng) for _ in range(count)]
    if huge:  # beyond the term limit: this split records no fullyIndexed tag
        hosts[0] = "a" * (MAX_TERM_BYTES + 1)
    return pa.table(
        {
            "id": pa.array(range(seed * 10_000, seed * 10_000 + count), pa.int64()),
            "host": pa.array(hosts, pa.string()),
        }
    )


def _sql(text: str) -> str:
    """``text`` as a Spark SQL string literal (whose value it is)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _model(data: pa.Table, python: str) -> set[int]:
    compiled = re.compile(python, re.ASCII)
    return {
        i
        for i, v in zip(data.column("id").to_pylist(), data.column("host").to_pylist(), strict=True)
        if v is not None and compiled.search(v)
    }


def _evaluated(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of rows each call of the ``where`` filter evaluates."""
    seen: list[int] = []
    original = WhereFilter.mask

    def counting(self: WhereFilter, batch: pa.RecordBatch) -> pa.BooleanArray:
        seen.append(batch.num_rows)
        return original(self, batch)

    monkeypatch.setattr(WhereFilter, "mask", counting)
    return seen


@pytest.mark.parametrize("seed", [1, 2])
def test_rlike_equals_a_java_model_on_hostile_strings(tmp_path: Path, seed: int) -> None:
    parts = [_rows(seed * 3 + k, 120, huge=k == 0) for k in range(3)]
    uri = str(tmp_path / "t")
    for part in parts:
        write_table(uri, part)
    table = open_table(uri)
    data = pa.concat_tables(parts)
    nulls = {
        i
        for i, v in zip(data["id"].to_pylist(), data["host"].to_pylist(), strict=True)
        if v is None
    }
    everything = set(data["id"].to_pylist())
    rng = random.Random(seed)
    patterns = FIXED + [_pattern(rng) for _ in range(70)]
    for java, python in patterns:
        expected = _model(data, python)
        for keyword in ("RLIKE", "REGEXP"):
            where = f"host {keyword} {_sql(java)}"
            got = set(table.search(where=where, columns=["id"]).column("id").to_pylist())
            assert got == expected, (java, sorted(got ^ expected)[:5])
        negated = everything - expected - nulls
        got = table.search(where=f"host NOT RLIKE {_sql(java)}", columns=["id"])
        assert set(got.column("id").to_pylist()) == negated, java
        assert table.count(where=f"regexp_like(host, {_sql(java)})") == len(expected), java


@pytest.mark.parametrize(
    "pattern", ["^web-1", "-7$", "b-1", "^w.b-2.$", "-1\\d$", "^(web|db)-3", "-3[0-9]$"]
)
def test_the_index_answers_rlike_on_fully_indexed_splits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pattern: str
) -> None:
    rng = random.Random(7)
    hosts = [
        None if rng.random() < 0.1 else rng.choice(["web", "db", "w_b"]) + f"-{rng.randrange(40)}"
        for _ in range(400)
    ]
    data = pa.table({"id": pa.array(range(400), pa.int64()), "host": pa.array(hosts)})
    uri = str(tmp_path / "t")
    write_table(uri, data.slice(0, 200))
    write_table(uri, data.slice(200))
    expected = _model(data, pattern.replace("$", _END))
    assert 0 < len(expected) < len(data) // 2
    seen = _evaluated(monkeypatch)
    got = open_table(uri).search(where=f"host RLIKE {_sql(pattern)}", columns=["id"])
    assert set(got.column("id").to_pylist()) == expected
    assert sum(seen) == len(expected)  # every row read is one the pattern keeps


def test_rlike_counts_come_from_the_index(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    import logging

    logger = "indextables.search.searchtable"
    caplog.set_level(logging.DEBUG, logger=logger)
    parts = [_rows(50 + k, 150, huge=False) for k in range(2)]
    uri = str(tmp_path / "t")
    for part in parts:
        write_table(uri, part)
    table = open_table(uri)
    data = pa.concat_tables(parts)
    rng = random.Random(3)
    for java, python in FIXED + [_pattern(rng) for _ in range(30)]:
        caplog.clear()
        assert table.count(where=f"host RLIKE {_sql(java)}") == len(_model(data, python)), java
        answered = [r.getMessage() for r in caplog.records if r.name == logger]
        assert answered[-1].endswith("index"), (java, answered)


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("(a", "not a valid Java regex"),
        ("a)", "not a valid Java regex"),
        ("*a", "not a valid Java regex"),
        ("a{", "not a valid Java regex"),
        ("[ab", "not a valid Java regex"),
        ("a\\", "not a valid Java regex"),
        ("(?i)a", "only by Spark's Java regex"),
        ("(a)\\1", "only by Spark's Java regex"),
        ("a++", "only by Spark's Java regex"),
        ("(?=a)", "only by Spark's Java regex"),
        ("\\bword", "only by Spark's Java regex"),
        ("\\p{L}", "only by Spark's Java regex"),
        ("a^b", "only by Spark's Java regex"),
        ("^a|b", "only by Spark's Java regex"),
        ("[a[b]]", "only by Spark's Java regex"),
        ("a{1001}", "only by Spark's Java regex"),
        ("(" * 101 + ")" * 101, "only by Spark's Java regex"),
        ("(a{1000}){1000}", "too large to evaluate"),
    ],
)
def test_rlike_refusals_are_typed_and_name_the_pattern(
    tmp_path: Path, pattern: str, message: str
) -> None:
    uri = str(tmp_path / "t")
    write_table(uri, pa.table({"host": ["a", "b"], "n": [1, 2]}))
    table = open_table(uri)
    where = f"host RLIKE {_sql(pattern)}"
    with pytest.raises(QuerySyntaxError, match=re.escape(_sql(pattern))) as raised:
        table.search(where=where)
    assert message in str(raised.value)
    with pytest.raises(QuerySyntaxError, match="RLIKE needs a string column"):
        table.search(where="n RLIKE '1'")


def test_rlike_translates_to_index_conditions() -> None:
    schema = pa.schema([("host", pa.string()), ("n", pa.int64())])
    cases = {
        "host RLIKE 'a.b'": Condition("rlike", "host", ("a.b",)),
        "host REGEXP '^x$'": Condition("rlike", "host", ("^x$",)),
        "regexp_like(host, 'x\\\\d')": Condition("rlike", "host", ("x\\d",)),
        "RLIKE(host, '')": Condition("rlike", "host", ("",)),
    }
    for where, condition in cases.items():
        translation = translate_where(where, schema)
        assert translation.conditions == (condition,), where
        assert translation.complete
    for where in ["host NOT RLIKE 'a'", "n RLIKE '1'", "NOT regexp(host, 'a')"]:
        assert not translate_where(where, schema).complete, where


GOLDEN_PATTERNS = [("", ""), ("^a", "\\Aa"), ("e$", "e" + _END), ("[0-9]", "[0-9]"), (".", _DOT)]
GOLDEN_PATTERNS += [("^[A-Z]", "\\A[A-Z]"), ("o.o|ab", f"o{_DOT}o|ab"), ("\\s", "\\s")]


@pytest.mark.parametrize("name", GOLDEN_NAMES)
def test_reference_splits_answer_rlike(name: str, golden_copy: Any) -> None:
    """The reference's golden tables (raw string fields, no fully-indexed record: the
    splits are checked): rows and counts equal the model over the table's rows."""
    table = open_table(str(golden_copy(name)))
    strings = [f.name for f in table.schema if pa.types.is_string(f.type)]
    assert strings, name
    rows = table.search()
    for column in strings:
        values = rows.column(column).to_pylist()
        for java, python in GOLDEN_PATTERNS:
            compiled = re.compile(python, re.ASCII)
            expected = sum(1 for v in values if v is not None and compiled.search(v))
            where = f"`{column}` RLIKE {_sql(java)}"
            assert table.count(where=where) == expected, (name, where)
            assert table.search(where=where).num_rows == expected, (name, where)
