"""Seeded random hostile tables and search cases for the differential tests.

Shared by ``test_search_differential.py`` (the engine against DuckDB and Python
oracles) and the Spark-side twin (which imports it by path). Everything here is
deterministic per seed: the same seed gives the same rows and the same cases.

A case is a search (``query``, ``where``, ``textsearch``, ``fieldmatch``) with
``columns`` and ``limit``; its oracle is the set of row ids that match:

- ``where``: DuckDB's answer to the same condition over the same Arrow rows,
  written in DuckDB's dialect (float columns cast to DOUBLE, as Spark 4 widens
  them; decimal literals against doubles cast to DOUBLE; timestamps as
  ``TIMESTAMPTZ``/``TIMESTAMP`` literals; LIKE with ``ESCAPE '\\'``; strings with
  DuckDB's quoting). DuckDB shares Spark's three-valued logic, NaN and signed
  zero rules and byte order of strings.
- the text searches: the tokenizer's documented behaviour, in Python. The
  ``text`` column ``t`` uses the ``default`` analyzer: split on characters that
  are not alphanumeric, lowercase, drop tokens of 255 UTF-8 bytes or more; a
  term matches a row holding that token, a two-word phrase the two tokens next
  to each other. The ``string`` column ``s`` is indexed whole (``raw``): a term
  matches the exact value, case and spaces included. ``i32:[a TO b]`` is an
  inclusive range, ``b:true`` a boolean term.
"""

from __future__ import annotations

import datetime as dt
import math
import random
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import pyarrow as pa

UTC = dt.UTC
TOKEN_LIMIT = 255  # bytes: the reference's default analyzer drops longer tokens

WORDS = ["alpha", "Beta", "GAMMA", "delta", "über", "日本語", "x1", "42", "naïve", "é"]
LONG_WORD = "z" * 300  # one token beyond the analyzer's limit: never found
SEPARATORS = [" ", "-", ", ", "\t", "/", "!", "\n", ".", "_", "  "]
STRINGS = ["", " ", "a", "A", "a b", "é", "É", "日本", "😀", "x\ny", "it's", "a%b", "a_b", "null"]
IPS = ["10.0.0.1", "10.0.0.2", "192.168.1.1", "::1", "2001:db8::1", "255.255.255.255"]
PARTS = ["p1", "P1"]
DECIMALS = [Decimal("-1.50"), Decimal("999999.99")]
INT_BOUNDS = {
    "i8": (-(2**7), 2**7 - 1),
    "i16": (-(2**15), 2**15 - 1),
    "i32": (-(2**31), 2**31 - 1),
    "i64": (-(2**63), 2**63 - 1),
}
INT_TYPES = {"i8": pa.int8(), "i16": pa.int16(), "i32": pa.int32(), "i64": pa.int64()}
DOUBLES = [0.0, -0.0, math.nan, -math.nan, math.inf, -math.inf, 1.5, -2.25, 0.1, 1e308, 5e-324]
FLOATS = [0.0, -0.0, math.nan, math.inf, -math.inf, 0.5, 3.4028234663852886e38, 0.1]
#: NaNs of other bit patterns, each one value to Spark: signaling (quiet bit clear; R's
#: ``NA_real_`` is ``0x7FF00000000007A2``), with the sign bit set, with a payload.
NAN_BITS_64 = [0x7FF00000000007A2, 0x7FF0000000000123, 0xFFF0000000000123, 0x7FF8000000000001]
NAN_BITS_32 = [0x7F800123, 0xFF800001, 0x7FC00001, 0xFFC00000]
DOUBLES += [struct.unpack("<d", struct.pack("<Q", bits))[0] for bits in NAN_BITS_64]


def float32_array(values: Sequence[float | int | None]) -> pa.Array:
    """A ``float`` array of ``values``: floats rounded to 32 bits, ints taken as the bits
    themselves (a Python float cannot carry a signaling float32 NaN), None as null."""
    bits = [v if v is None or isinstance(v, int) else _bits32(v) for v in values]
    return pa.array(bits, pa.uint32()).view(pa.float32())


def _bits32(value: float) -> int:
    bits: int = struct.unpack("<I", struct.pack("<f", value))[0]
    return bits


DATES = [dt.date(1, 1, 1), dt.date(1969, 12, 31), dt.date(1970, 1, 1), dt.date(2024, 2, 29)]
DATES += [dt.date(9999, 12, 31)]
INSTANTS = [
    dt.datetime(1970, 1, 1, tzinfo=UTC),
    dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    dt.datetime(2024, 2, 29, 12, 30, 0, 123456, tzinfo=UTC),
    dt.datetime(1900, 1, 1, tzinfo=UTC),
    dt.datetime(2200, 6, 1, tzinfo=UTC),
]

#: Table options: ``t`` is full-text, ``ip`` an IP field, the rest by type.
OPTIONS = {
    "spark.indextables.indexing.typemap.t": "text",
    "spark.indextables.indexing.typemap.ip": "ip",
}
PARTITION_BY = ("p", "dec")
#: Columns a ``where`` may name, and their kinds.
WHERE_COLUMNS = {
    "i8": "int",
    "i16": "int",
    "i32": "int",
    "i64": "int",
    "f32": "float",
    "f64": "float",
    "b": "bool",
    "day": "date",
    "ts": "ts",
    "ntz": "ntz",
    "s": "string",
    "t": "string",
    "p": "string",
    "dec": "decimal",
}


def _maybe(rng: random.Random, make: Callable[[], Any], null_rate: float = 0.15) -> Any:
    return None if rng.random() < null_rate else make()


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(0, 5))]
    if rng.random() < 0.05:
        words.append(LONG_WORD)
    out = ""
    for i, word in enumerate(words):
        out += (rng.choice(SEPARATORS) if i else "") + word
    return out


def _int(rng: random.Random, kind: str) -> int:
    low, high = INT_BOUNDS[kind]
    middle = rng.randint(max(low, -1000), min(high, 1000))
    return rng.choice([low, high, 0, -1, 1, 7, 100, middle, rng.randint(low, high)])


def _micros(moment: dt.datetime) -> int:
    return (moment - INSTANTS[0]) // dt.timedelta(microseconds=1)


def rows(seed: int, n: int) -> pa.Table:
    """``n`` hostile rows with every column kind the engine writes; ``id`` is 0..n-1."""
    rng = random.Random(seed)

    def col(make: Callable[[], Any], type_: pa.DataType, null_rate: float = 0.15) -> pa.Array:
        return pa.array([_maybe(rng, make, null_rate) for _ in range(n)], type_)

    columns: dict[str, pa.Array] = {"id": pa.array(range(n), pa.int64())}
    for kind, type_ in INT_TYPES.items():
        columns[kind] = col(lambda kind=kind: _int(rng, kind), type_)
    floats = [*FLOATS, *NAN_BITS_32]
    columns["f32"] = float32_array(
        [_maybe(rng, lambda: rng.choice([*floats, rng.uniform(-100, 100)])) for _ in range(n)]
    )
    columns["f64"] = col(lambda: rng.choice([*DOUBLES, rng.uniform(-1e6, 1e6)]), pa.float64())
    columns["b"] = col(lambda: rng.random() < 0.5, pa.bool_())
    columns["day"] = col(lambda: rng.choice(DATES), pa.date32())
    columns["ts"] = col(lambda: _micros(rng.choice(INSTANTS)), pa.timestamp("us", tz="UTC"))
    columns["ntz"] = col(lambda: _micros(rng.choice(INSTANTS)), pa.timestamp("us"))
    columns["s"] = col(lambda: rng.choice(STRINGS), pa.string())
    columns["t"] = col(lambda: _sentence(rng), pa.string())
    columns["ip"] = col(lambda: rng.choice(IPS), pa.string())
    columns["bin"] = col(lambda: rng.randbytes(rng.randint(0, 6)), pa.binary())
    columns["j"] = col(
        lambda: {"k": rng.choice(STRINGS), "v": rng.choice([1.5, -0.0, None])},
        pa.struct([("k", pa.string()), ("v", pa.float64())]),
    )
    columns["p"] = col(lambda: rng.choice(PARTS), pa.string(), 0.1)
    columns["dec"] = col(lambda: rng.choice(DECIMALS), pa.decimal128(8, 2), 0.1)
    return pa.table(columns)


# The layouts other libraries hand the same strings and binaries in (Polars and deltalake:
# views; Polars' categoricals: dictionaries of views with unsigned indices).
STRING_LAYOUTS = ("string", "large_string", "string_view", "dictionary", "view_dictionary")
_INDEX_TYPES = (pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint32())


def relayout(
    data: pa.Table, seed: int, layouts: Sequence[str] = STRING_LAYOUTS, *, structs: bool = True
) -> pa.Table:
    """``data`` with each string, binary and struct column in a layout drawn per seed from
    ``layouts`` (binary: plain, large or view; with ``structs``, the string fields of
    structs as views). The values are the same: ``relayout(t, s).to_pylist() ==
    t.to_pylist()``. (For pyarrow's Parquet writer: it holds no dictionary of views, so
    leave ``view_dictionary`` out, and it cuts no struct of views into row groups.)"""
    rng = random.Random(seed)
    columns = []
    for column in data.columns:
        t = column.type
        if pa.types.is_string(t):
            columns.append(_string_layout(column.combine_chunks(), rng.choice(layouts), rng))
        elif pa.types.is_binary(t):
            columns.append(column.cast(rng.choice([t, pa.large_binary(), pa.binary_view()])))
        elif pa.types.is_struct(t) and structs:
            fields = [f.with_type(pa.string_view()) if pa.types.is_string(f.type) else f for f in t]
            columns.append(column.cast(pa.struct(fields)))
        else:
            columns.append(column)
    return pa.table(columns, names=data.column_names)


def _string_layout(array: pa.Array, layout: str, rng: random.Random) -> pa.Array:
    if layout in ("string", "large_string", "string_view"):
        return array.cast(getattr(pa, layout)())
    encoded = array.dictionary_encode()
    values = encoded.dictionary
    if layout == "view_dictionary":
        values = values.cast(pa.string_view())
    indices = encoded.indices.cast(rng.choice(_INDEX_TYPES))
    return pa.DictionaryArray.from_arrays(indices, values)


# -- the text oracle -------------------------------------------------------------------


def tokens(text: str) -> list[str]:
    """The default analyzer's tokens: alphanumeric runs, lowercased, under 255 bytes."""
    out: list[str] = []
    word = ""
    for ch in text + " ":
        if ch.isalnum():
            word += ch
            continue
        if word and len(word.lower().encode("utf-8")) < TOKEN_LIMIT:
            out.append(word.lower())
        word = ""
    return out


# -- cases -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One search and its oracle (``match``: row -> bool, over the row as a dict)."""

    query: str | None = None
    where: str | None = None
    duck_where: str | None = None
    textsearch: dict[str, str] | None = None
    fieldmatch: dict[str, str] | None = None
    columns: list[str] | None = None
    limit: int | None = None
    match: Callable[[dict[str, Any]], bool] = field(default=lambda row: True, repr=False)

    @property
    def filtered(self) -> bool:
        return bool(self.query or self.where or self.textsearch or self.fieldmatch)


def _spark_string(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _duck_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


NUMBERS = ["0", "1", "-1", "7", "100", "127", "-128", "32767", "2147483647", "-2147483648"]
NUMBERS += ["9223372036854775807", "-9223372036854775808", "1.5", "-0.5", "0.0", "1e3", "-2.5e0"]
FLOAT_LITERALS = [
    "0",
    "1",
    "-1",
    "0.5",
    "1.5",
    "0.1",
    "-0.0",
    "1e308",
    "-1e3",
    "3.4028234663852886e38",
]
DEC_LITERALS = ["0", "1", "-1.5", "2.25", "2.250", "999999.99", "1e0", "-1.49"]
LIKES = ["%", "_", "a%", "%a%", "a\\%b", "a\\_b", "%é", "", "%lpha%", "_ %"]
OPS = ["=", "<>", "<", "<=", ">", ">=", "!="]
FLIP = {"=": "=", "<>": "<>", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _literals(rng: random.Random, column: str, k: int) -> tuple[list[str], list[str]]:
    """``k`` literals for ``column`` as (Spark texts, DuckDB texts)."""
    kind = WHERE_COLUMNS[column]
    if kind == "int":
        spark = [rng.choice(NUMBERS) for _ in range(k)]
        return spark, spark
    if kind == "float":
        spark = [rng.choice(FLOAT_LITERALS) for _ in range(k)]
        duck = [f"CAST({t} AS DOUBLE)" if "e" not in t and "." in t else t for t in spark]
        return spark, duck
    if kind == "decimal":
        spark = [rng.choice(DEC_LITERALS) for _ in range(k)]
        return spark, spark
    if kind == "bool":
        spark = [rng.choice(["true", "false"]) for _ in range(k)]
        return spark, spark
    if kind == "date":
        days = [rng.choice(DATES).isoformat() for _ in range(k)]
        typed = rng.choice(["", "DATE ", "date"])  # Spark casts the string to a date alike
        return [f"{typed}'{d}'" for d in days], [f"DATE '{d}'" for d in days]
    if kind in ("ts", "ntz"):
        moments = [rng.choice(INSTANTS) for _ in range(k)]
        texts = [m.strftime("%Y-%m-%d %H:%M:%S.%f") for m in moments]
        if kind == "ts":
            return [f"'{t}Z'" for t in texts], [f"TIMESTAMPTZ '{t}+00:00'" for t in texts]
        typed = "TIMESTAMP_NTZ " if rng.random() < 0.5 else ""
        return [f"{typed}'{t}'" for t in texts], [f"TIMESTAMP '{t}'" for t in texts]
    pool = PARTS if column == "p" else STRINGS if column == "s" else [*STRINGS, *WORDS]
    values = [rng.choice(pool) for _ in range(k)]
    return [_spark_string(v) for v in values], [_duck_string(v) for v in values]


def _duck_column(column: str) -> str:
    return f"CAST({column} AS DOUBLE)" if column == "f32" else column


#: Column pairs a column-to-column comparison may name (the same kind of values).
PAIRS = [("i8", "i16"), ("i32", "i64"), ("i16", "i16"), ("f32", "f64"), ("f64", "f64")]
PAIRS += [("s", "t"), ("s", "p"), ("ts", "ts"), ("ntz", "ntz"), ("day", "day"), ("b", "b")]


def leaf(rng: random.Random, *, simple: bool = False) -> tuple[str, str]:
    """One predicate as (Spark text, DuckDB text); ``simple``: one the index can translate."""
    if simple:
        column = rng.choice(["i8", "i16", "i32", "i64", "s", "p", "b", "day"])
        op = rng.choice(
            ["=", "<", "<=", ">", ">=", "in"]
            if WHERE_COLUMNS[column] != "string"
            else ["=", "=", "in"]
        )
        if column == "b" and rng.random() < 0.3:
            bare = rng.choice(["b", "NOT b", "b != true", "false <> b", "TRUE = b"])
            return bare, bare
        spark, duck = _literals(rng, column, 3)
        if column in ("i8", "i16", "i32", "i64"):  # whole numbers within a long
            spark = duck = [t for t in spark if "." not in t and "e" not in t] or ["0"]
        if op == "in":
            return f"{column} IN ({', '.join(spark)})", f"{column} IN ({', '.join(duck)})"
        return f"{column} {op} {spark[0]}", f"{column} {op} {duck[0]}"
    form = rng.choice(["cmp", "cmp", "cmp", "in", "null", "like", "between", "pair"])
    if form == "pair":
        left, right = rng.choice(PAIRS)
        op = rng.choice(OPS)
        return f"{left} {op} {right}", f"{_duck_column(left)} {op} {_duck_column(right)}"
    column = rng.choice(list(WHERE_COLUMNS))
    kind = WHERE_COLUMNS[column]
    duck_col = _duck_column(column)
    if form == "null":
        text = f"{column} IS {rng.choice(['', 'NOT '])}NULL"
        return text, text
    if form == "like" and kind == "string":
        pattern = rng.choice(LIKES)
        neg = rng.choice(["", "NOT "])
        return (
            f"{column} {neg}LIKE {_spark_string(pattern)}",
            f"{column} {neg}LIKE {_duck_string(pattern)} ESCAPE '\\'",
        )
    spark, duck = _literals(rng, column, 3)
    if form == "in":
        neg = rng.choice(["", "NOT "])
        if rng.random() < 0.2:
            spark, duck = [*spark, "NULL"], [*duck, "NULL"]
        return f"{column} {neg}IN ({', '.join(spark)})", f"{duck_col} {neg}IN ({', '.join(duck)})"
    if form == "between":
        neg = rng.choice(["", "NOT "])
        return (
            f"{column} {neg}BETWEEN {spark[0]} AND {spark[1]}",
            f"{duck_col} {neg}BETWEEN {duck[0]} AND {duck[1]}",
        )
    op = rng.choice(OPS)
    if rng.random() < 0.5:
        return f"{column} {op} {spark[0]}", f"{duck_col} {op} {duck[0]}"
    return f"{spark[0]} {FLIP[op]} {column}", f"{duck[0]} {FLIP[op]} {duck_col}"


def condition(rng: random.Random, depth: int = 0) -> tuple[str, str]:
    """A random condition of leaves under AND/OR/NOT."""
    roll = rng.random()
    if depth >= 2 or roll < 0.5:
        return leaf(rng)
    if roll < 0.6:
        inner = condition(rng, depth + 1)
        return f"NOT ({inner[0]})", f"NOT ({inner[1]})"
    a, b = condition(rng, depth + 1), condition(rng, depth + 1)
    joint = rng.choice(["AND", "OR"])
    return f"({a[0]}) {joint} ({b[0]})", f"({a[1]}) {joint} ({b[1]})"


def _word(rng: random.Random) -> str:
    return rng.choice(WORDS).lower() if rng.random() < 0.8 else rng.choice(["nothere", "lpha"])


def _has(row: dict[str, Any], word: str) -> bool:
    return row["t"] is not None and word in tokens(row["t"])


def _phrase(row: dict[str, Any], first: str, second: str) -> bool:
    if row["t"] is None:
        return False
    found = tokens(row["t"])
    return any(found[i : i + 2] == [first, second] for i in range(len(found) - 1))


def _search_part(rng: random.Random) -> dict[str, Any]:
    """A random ``query``/``textsearch``/``fieldmatch`` and its oracle."""
    form = rng.choice(["term", "and", "or", "phrase", "exact", "range", "bool", "ts", "fm"])
    w1, w2 = _word(rng), _word(rng)
    if form == "term":
        return {"query": f"t:{w1}", "match": lambda r: _has(r, w1)}
    if form == "and":
        return {"query": f"t:{w1} AND t:{w2}", "match": lambda r: _has(r, w1) and _has(r, w2)}
    if form == "or":
        return {"query": f"t:{w1} OR t:{w2}", "match": lambda r: _has(r, w1) or _has(r, w2)}
    if form == "phrase":
        return {"query": f't:"{w1} {w2}"', "match": lambda r: _phrase(r, w1, w2)}
    if form == "exact":
        value = rng.choice([v for v in STRINGS if v and '"' not in v and "\\" not in v])
        return {"query": f's:"{value}"', "match": lambda r: r["s"] == value}
    if form == "range":
        low, high = sorted(rng.randint(-1000, 1000) for _ in range(2))
        return {
            "query": f"i32:[{low} TO {high}]",
            "match": lambda r: r["i32"] is not None and low <= r["i32"] <= high,
        }
    if form == "bool":
        flag = rng.random() < 0.5
        return {"query": f"b:{str(flag).lower()}", "match": lambda r: r["b"] is flag}
    if form == "ts":
        return {"textsearch": {"t": w1}, "match": lambda r: _has(r, w1)}
    value = rng.choice(STRINGS)
    return {"fieldmatch": {"s": value}, "match": lambda r: r["s"] == value}


def _float_text(rng: random.Random, value: float) -> str:
    """``value`` as a query literal in a random one of the notations users write."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    forms = [repr(value), f"{value:e}", f"{value:E}", f"{value:.17g}", str(value)]
    return rng.choice([f for f in forms if float(f) == value or value == 0.0])


def _spark_equal(value: Any, operand: Any) -> bool:
    """Spark's ``=`` on doubles: every NaN equals every NaN, ``-0.0`` equals ``0.0``."""
    if value is None:
        return False
    if isinstance(operand, float) and math.isnan(operand):
        return isinstance(value, float) and math.isnan(value)
    return bool(value == operand)


def _special_part(rng: random.Random, valued: Sequence[str]) -> dict[str, Any]:
    """A ``query`` clause Tantivy's parser alone answered wrongly, and its oracle: a term
    set on a float or timestamp field (Spark's IN), a range open at both ends (has a
    value) on one of the ``valued`` (fast) columns."""
    forms = ["floats", "instants", "bounds", "tokenless"] + (["valued"] if valued else [])
    form = rng.choice(forms)
    if form == "floats":
        members = rng.sample(DOUBLES, rng.randint(1, 3))
        texts = [_float_text(rng, m) for m in members]
        return {
            "query": f"f64: IN [{' '.join(texts)}]",
            "match": lambda r: any(_spark_equal(r["f64"], m) for m in members),
        }
    if form == "bounds":
        # Finite bounds in any notation a user or Spark prints (1e-05, -1E+20, .5, 5.).
        finite = [d for d in DOUBLES if math.isfinite(d)] + [-1e-5, -1e20, -5e-324, -1e308]
        low, high = sorted(rng.sample(finite, 2))
        text = f"f64:[{_float_text(rng, low)} TO {_float_text(rng, high)}]"

        def between(r: dict[str, Any]) -> bool:
            value = r["f64"]
            return value is not None and not math.isnan(value) and low <= value <= high

        return {"query": text, "match": between}
    if form == "tokenless":
        # A clause that yields no token matches nothing: a conjunction with it matches
        # nothing, a disjunction is its other side, its negation matches everything.
        other = _search_part(rng)
        while "query" not in other:
            other = _search_part(rng)
        empty = rng.choice(['t:"!!"', 't:"-"', 't:""', "t:" + "z" * 300])
        shape, keeps = rng.choice(
            [("({k}) AND {z}", False), ("+({k}) +{z}", False), ("{z} && ({k})", False),
             ("({k}) OR {z}", True), ("({k}) AND NOT {z}", True), ("({k}) -{z}", True)]
        )  # fmt: skip
        match = other["match"]
        return {
            "query": shape.format(k=other["query"], z=empty),
            "match": match if keeps else (lambda r: False),
        }
    if form == "instants":
        chosen = rng.sample(INSTANTS, rng.randint(1, 2))
        texts = [m.isoformat().replace("+00:00", "Z") for m in chosen]
        quoted = " ".join(f'"{t}"' for t in texts)
        return {"query": f"ts: IN [{quoted}]", "match": lambda r: r["ts"] in chosen}
    column = rng.choice(list(valued))
    return {"query": f"{column}:[* TO *]", "match": lambda r: r[column] is not None}


# How a query clause is excluded: Tantivy's ``-x`` (must not) in its forms, and ``NOT``
# wherever it stands (rewritten by the engine, module negation), each with whether the
# rows kept are ``k AND NOT e`` (True) or ``k OR NOT e`` (False).
NEGATIONS = (
    ("{k} AND NOT {e}", True),
    ("{k} && NOT {e}", True),
    ("{k} AND -{e}", True),
    ("{k} -{e}", True),
    ("NOT {e} AND {k}", True),
    ("(NOT {e}) && {k}", True),
    ("{k} OR NOT {e}", False),
    ("NOT {e} || {k}", False),
)


def _negated(rng: random.Random, search: dict[str, Any]) -> dict[str, Any]:
    """``search`` (a ``query``) without the rows of another query clause.

    The oracle keeps the rows ``search`` matches and the excluded clause does not:
    an exclusion keeps rows where the clause's column is null (its oracle is false
    there), as ``AND NOT (x <=> v)`` does in Spark.
    """
    excluded = _search_part(rng)
    while "query" not in excluded:
        excluded = _search_part(rng)
    kept_text, excluded_text = f"({search['query']})", f"({excluded['query']})"
    if rng.random() < 0.5 and " " not in excluded["query"]:
        excluded_text = excluded["query"]  # a bare clause: ``-t:alpha``
    keep, drop = search["match"], excluded["match"]
    form, conjunction = rng.choice(NEGATIONS)
    return {
        "query": form.format(k=kept_text, e=excluded_text),
        "match": (lambda r: keep(r) and not drop(r))
        if conjunction
        else (lambda r: keep(r) or not drop(r)),
    }


ALL_COLUMNS = list(rows(0, 1).column_names)


def cases(seed: int, count: int, *, valued: Sequence[str] = ("i32", "s", "f64", "b")) -> list[Case]:
    """``count`` random cases: searches, conditions, both, with columns and limits.

    ``valued``: fast columns a "has a value" clause (``c:[* TO *]``) may name.
    """
    rng = random.Random(seed * 7919 + 1)
    # Negations come from a generator of their own: every other draw of a seed stays as it was.
    negations = random.Random(seed * 104_729 + 11)
    specials = random.Random(seed * 15_485_863 + 17)
    out: list[Case] = []
    for _ in range(count):
        # Mostly what the index answers (searches, simple conjunctions), some of everything.
        shape = rng.choice(["search"] * 3 + ["simple", "simple", "both", "where", "where+"])
        search: dict[str, Any] = _search_part(rng) if shape in ("search", "both", "where+") else {}
        if "query" in search and specials.random() < 0.2:
            search = _special_part(specials, valued)
        if "query" in search and negations.random() < 0.3:
            search = _negated(negations, search)
        where = duck = None
        if shape in ("simple", "both"):
            parts = [leaf(rng, simple=True) for _ in range(rng.randint(1, 2))]
            where, duck = " AND ".join(p[0] for p in parts), " AND ".join(p[1] for p in parts)
        elif shape in ("where", "where+"):
            where, duck = condition(rng)
        columns = None
        if rng.random() < 0.5:
            columns = rng.sample(ALL_COLUMNS, rng.randint(1, 4))
            if rng.random() < 0.3:
                columns = [c.upper() for c in columns]
        limit = rng.choice([None, None, 0, 1, 5, 50])
        match = search.pop("match", lambda r: True)
        out.append(
            Case(where=where, duck_where=duck, columns=columns, limit=limit, match=match, **search)
        )
    return out
