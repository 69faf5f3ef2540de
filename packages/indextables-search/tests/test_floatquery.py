"""Numeric ``query`` clauses on float/double fields compare as Spark does:
-0.0 = 0.0, every NaN (either sign bit, any payload) equals NaN and sorts above +inf."""

from __future__ import annotations

import math
import random
import re
import struct
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest

from indextables.search import open_table, write_table
from indextables.search.query.floatquery import spark_float_clauses

NAN = float("nan")
INF = float("inf")


def _bits(text: str) -> float:
    value: float = struct.unpack(">d", bytes.fromhex(text))[0]
    return value


NEGATIVE_NAN = _bits("fff8000000000000")  # the sign bit set: what -NaN is in Arrow and Java
PAYLOAD_NAN = _bits("7ff0000000000001")  # another NaN payload, sign bit clear
NEGATIVE_PAYLOAD_NAN = _bits("fff0000000000002")
VALUES = [
    NAN,
    NEGATIVE_NAN,
    PAYLOAD_NAN,
    NEGATIVE_PAYLOAD_NAN,
    INF,
    -INF,
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    1e300,
    None,
]


def _key(value: float) -> tuple[int, float]:
    """Spark's order of doubles: NaN above every number, -0.0 equal to 0.0."""
    return (1, 0.0) if math.isnan(value) else (0, value)


def _cmp(op: str, operand: float) -> Callable[[float | None], bool]:
    def keeps(value: float | None) -> bool:
        if value is None:
            return False
        a, b = _key(value), _key(operand)
        return {
            "=": a == b,
            "<": a < b,
            "<=": a <= b,
            ">": a > b,
            ">=": a >= b,
        }[op]

    return keeps


def _both(
    first: Callable[[float | None], bool], second: Callable[[float | None], bool]
) -> Callable[[float | None], bool]:
    return lambda v: first(v) and second(v)


def _not_null(value: float | None) -> bool:
    return value is not None


CASES: list[tuple[str, Callable[[float | None], bool]]] = [
    ("d:NaN", _cmp("=", NAN)),
    ("d:nan", _cmp("=", NAN)),
    ("d:-NaN", _cmp("=", NAN)),
    ('d:"NaN"', _cmp("=", NAN)),
    ("d:inf", _cmp("=", INF)),
    ("d:-inf", _cmp("=", -INF)),
    ("d:-Infinity", _cmp("=", -INF)),
    ("d:0", _cmp("=", 0.0)),
    ("d:1", _cmp("=", 1.0)),
    ("d:[-NaN TO *]", _cmp(">=", NAN)),
    ("d:[NaN TO *]", _cmp(">=", NAN)),
    ("d:{NaN TO *]", _cmp(">", NAN)),
    ("d:[* TO NaN]", _cmp("<=", NAN)),
    ("d:[* TO NaN}", _cmp("<", NAN)),
    ("d:[* TO -NaN]", _cmp("<=", NAN)),
    ("d:[NaN TO NaN]", _cmp("=", NAN)),
    ("d:[NaN TO 1]", _both(_cmp(">=", NAN), _cmp("<=", 1.0))),
    ("d:[1 TO *]", _cmp(">=", 1.0)),
    ("d:{inf TO *]", _cmp(">", INF)),
    ("d:[* TO 1]", _cmp("<=", 1.0)),
    ("d:[* TO -inf]", _cmp("<=", -INF)),
    ("d:[* TO *]", _not_null),
    ("d:[-inf TO inf]", _both(_cmp(">=", -INF), _cmp("<=", INF))),
    ("d:{-inf TO inf}", _both(_cmp(">", -INF), _cmp("<", INF))),
    ("d:[-1 TO 0}", _both(_cmp(">=", -1.0), _cmp("<", 0.0))),
    ("d:[0 TO NaN]", _cmp(">=", 0.0)),
    ("d:[0 TO NaN}", _both(_cmp(">=", 0.0), _cmp("<", NAN))),
    ("d:>1", _cmp(">", 1.0)),
    ("d:>=NaN", _cmp(">=", NAN)),
    ("d:>NaN", _cmp(">", NAN)),
    ("d:<NaN", _cmp("<", NAN)),
    ("d:<=NaN", _cmp("<=", NAN)),
    ("d:<0", _cmp("<", 0.0)),
    ("d:>-inf", _cmp(">", -INF)),
    ("d:<=-1", _cmp("<=", -1.0)),
    ("d:NaN OR d:1", lambda v: _cmp("=", NAN)(v) or _cmp("=", 1.0)(v)),
    ("id:[0 TO 99] AND -d:NaN", lambda v: not _cmp("=", NAN)(v)),
    ("+d:[0 TO *] -d:NaN", lambda v: _cmp(">=", 0.0)(v) and not _cmp("=", NAN)(v)),
    # A boost changes no match (nothing here scores).
    ("d:0^2", _cmp("=", 0.0)),
    ("d:NaN^2 OR d:1", lambda v: _cmp("=", NAN)(v) or _cmp("=", 1.0)(v)),
    # Term sets are Spark's IN: each member compares as `=` does.
    ("d: IN [0]", _cmp("=", 0.0)),
    ("d:IN [-0.0 1]", lambda v: _cmp("=", 0.0)(v) or _cmp("=", 1.0)(v)),
    ("d: IN [NaN]", _cmp("=", NAN)),
    ('d: IN ["-nan" inf]', lambda v: _cmp("=", NAN)(v) or _cmp("=", INF)(v)),
    ("d: IN [-inf 0.5]", lambda v: _cmp("=", -INF)(v) or _cmp("=", 0.5)(v)),
    ("id:[0 TO 99] AND -d: IN [0 NaN]", lambda v: not (_cmp("=", 0.0)(v) or _cmp("=", NAN)(v))),
]


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("floatquery")
    rows = VALUES * 2
    data = pa.table(
        {
            "id": pa.array(range(len(rows)), pa.int64()),
            "d": pa.array(rows, pa.float64()),
            "f": pa.array(rows, pa.float64()).cast(pa.float32(), safe=False),
        }
    )
    write_table(str(root), data)
    return str(root)


def _sign_bits(table: str) -> set[bool]:
    values = open_table(table).search(columns=["d"]).column("d").to_pylist()
    return {math.copysign(1.0, v) < 0 for v in values if v is not None and math.isnan(v)}


def test_the_table_holds_nan_of_both_signs(table: str) -> None:
    assert _sign_bits(table) == {True, False}


@pytest.mark.parametrize(("query", "keeps"), CASES)
@pytest.mark.parametrize("column", ["d", "f"])
def test_query_clauses_compare_as_spark(
    table: str, query: str, keeps: Callable[[float | None], bool], column: str
) -> None:
    rows = open_table(table).search(columns=["id", column]).to_pylist()
    expected = sorted(r["id"] for r in rows if keeps(r[column]))
    text = re.sub(r"(?<!\w)d:", f"{column}:", query)
    got = open_table(table).search(text, columns=["id"]).column("id").to_pylist()
    assert sorted(got) == expected
    assert open_table(table).count(text) == len(expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("d:1.5", "d:1.5"),  # exact already
        ("x:NaN", "x:NaN"),  # not a float field
        ("d:NaN", "(d:[* TO -inf} OR d:{inf TO *])"),
        ("d:0", "d:[-0.0 TO 0.0]"),
        ("d:[1 TO 2}", "d:[1.0 TO 2.0}"),
        ("d:>NaN", "d:{inf TO inf}"),
        ("d:[a TO 2]", "d:[a TO 2]"),  # left for Tantivy to refuse
        ('s:"d:NaN"', 's:"d:NaN"'),  # inside a quoted phrase
        ("d: IN [0 1.5]", "(d:[-0.0 TO 0.0] OR d:1.5)"),
        ("d: IN [a 1]", "d: IN [a 1]"),  # left for Tantivy to refuse
    ],
)
def test_rewrites(text: str, expected: str) -> None:
    assert spark_float_clauses(text, {"d"}) == expected


def test_no_float_fields_nothing_rewritten(tmp_path: Path) -> None:
    assert spark_float_clauses("d:NaN", ()) == "d:NaN"


def _java_string(value: float) -> str:
    """Java's ``Double.toString`` (Spark's text of a double): positional between 1e-3 and
    1e7, else ``d.dddE-n``."""
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0 or 1e-3 <= abs(value) < 1e7:
        return repr(value)
    exact = Decimal(repr(value))
    digits = "".join(str(d) for d in exact.as_tuple().digits).rstrip("0") or "0"
    sign = "-" if value < 0 else ""
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exact.adjusted()}"


def _forms(value: float, rng: random.Random) -> list[str]:
    """Texts of ``value`` in Python's and Spark's notations (repr, str, %e, %E, %g, Java's
    toString, ``.5``, ``5.``, an explicit ``+`` exponent)."""
    forms = [repr(value), str(value), f"{value:e}", f"{value:E}", f"{value:.17g}"]
    forms += [_java_string(value), f"{value:.{rng.randint(0, 16)}e}".replace("e", "E")]
    plain = repr(value)
    if "e" not in plain and "inf" not in plain:
        if plain.lstrip("-").startswith("0."):
            forms.append(plain.replace("0.", ".", 1))  # .5
        if plain.endswith(".0"):
            forms.append(plain[:-1])  # 5.
    if "e+" in plain:
        forms.append(plain.replace("e+", "e"))  # 1e20
    return forms


def _random_double(rng: random.Random) -> float:
    if rng.random() < 0.1:
        return rng.choice([0.0, -0.0, 5e-324, -5e-324, 1.7976931348623157e308, -1e308])
    value = rng.uniform(1, 10) * 10.0 ** rng.randint(-320, 307)
    return -value if rng.random() < 0.5 else value


@pytest.fixture(scope="module")
def spread_table(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[float]]:
    rng = random.Random(7)
    values = [-1e308, -1e20, -1e-5, -5e-324, 0.0] + [_random_double(rng) for _ in range(120)]
    values += [math.nextafter(v, math.inf) for v in values[:40]]  # neighbours of bounds
    values += [math.nextafter(v, -math.inf) for v in values[:40]]
    values += [INF, -INF, NAN]
    root = tmp_path_factory.mktemp("floatspread")
    data = pa.table({"id": pa.array(range(len(values)), pa.int64()), "d": values})
    write_table(str(root), data)
    return str(root), values


@pytest.mark.parametrize("seed", range(4))
def test_bounds_in_every_float_notation_are_answered(
    spread_table: tuple[str, list[float]], seed: int
) -> None:
    """Any Python or Spark notation of a double is a bound or term (Tantivy's grammar refused
    a negative number with an exponent: ``d:[-1e-5 TO 0]``, ``d:<-1e20`` raised)."""
    uri, values = spread_table
    rng = random.Random(seed)
    table = open_table(uri)
    for _ in range(40):
        low, high = rng.choice(values[:-3]), rng.choice(values[:-3])
        low_text, high_text = rng.choice(_forms(low, rng)), rng.choice(_forms(high, rng))
        low, high = float(low_text), float(high_text)
        op = rng.choice(["<", "<=", ">", ">="])
        opening, closing = rng.choice("[{"), rng.choice("]}")
        cases = [
            (f"d:{op}{low_text}", _cmp(op, low)),
            (f"d:{low_text}", _cmp("=", low)),
            (
                f"d:{opening}{low_text} TO {high_text}{closing}",
                _both(
                    _cmp(">=" if opening == "[" else ">", low),
                    _cmp("<=" if closing == "]" else "<", high),
                ),
            ),
        ]
        for query, keeps in cases:
            want = sorted(i for i, v in enumerate(values) if keeps(v))
            got = sorted(table.search(query, columns=["id"]).column("id").to_pylist())
            assert got == want, query


@pytest.mark.parametrize(
    ("query", "keeps"),
    [
        ("d:[-1e-5 TO 0]", _both(_cmp(">=", -1e-5), _cmp("<=", 0.0))),
        ("d:<-1e20", _cmp("<", -1e20)),
        ("d:[-5e-324 TO 0]", _both(_cmp(">=", -5e-324), _cmp("<=", 0.0))),
        ("d:[-1e308 TO 0]", _both(_cmp(">=", -1e308), _cmp("<=", 0.0))),
        ("d:-1E+308", _cmp("=", -1e308)),
    ],
)
def test_negative_exponent_bounds_are_read(
    spread_table: tuple[str, list[float]], query: str, keeps: Callable[[float | None], bool]
) -> None:
    uri, values = spread_table
    want = sorted(i for i, v in enumerate(values) if keeps(v))
    assert want  # the table holds values the clause keeps
    got = open_table(uri).search(query, columns=["id"]).column("id").to_pylist()
    assert sorted(got) == want


@pytest.mark.parametrize(
    ("value", "text"),
    [(-1e-5, "-0.00001"), (1e20, "100000000000000000000.0"), (-0.0, "-0.0"), (-INF, "-inf")],
)
def test_positional_prints_no_exponent(value: float, text: str) -> None:
    from indextables.search.query.floatquery import positional

    assert positional(value) == text
    assert float(positional(5e-324)) == 5e-324
