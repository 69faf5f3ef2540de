"""Build a plan as IndexTables and as Parquet, run the cases, report every difference.

The oracle is Parquet written from the same DataFrames in the same session,
with the same ``partitionBy``, read back with the table's schema (no partition
type inference): what Spark's own partitioned files return, so a ``''``
partition value reads back as null there too. One Parquet query selects every
row with one boolean flag per case (``(<where>) AS q<i>``); a case's expected
rows are those whose flag is true, which is exactly what ``WHERE`` keeps. The
same flagged query over IndexTables with pushdown off gives the
``read.nopushdown`` result of every case in one action; every other path runs
each case on its own.
"""

from __future__ import annotations

import itertools
import random
import re
import time
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql.types import DoubleType, FloatType, LongType, TimestampNTZType, TimestampType

from difftest import paths, values
from difftest.compare import Row, difference, normalize_rows
from difftest.predicates import (
    Pred,
    column_pools,
    negated_query,
    random_filter,
    sql_literal,
    sql_string,
    translatable_filter,
)
from difftest.tables import FASTFIELDS, STOREONLY, TYPEMAP, TablePlan, may_be_refused

UNFILTERED_PATHS = ("read.pushdown", "read.nopushdown", "search.local", "search.distributed")
FILTER_PATHS = ("read.pushdown", "read.nopushdown", "search.local", "search.distributed")
_table_ids = itertools.count()
# Seconds spent per read path (and in writes), for keeping the bounded run bounded.
TIMINGS: dict[str, float] = defaultdict(float)
# Which path answered each filtered ``read.pushdown`` case: (seed, where, drawn to be
# translatable, "index" when the scan returned exactly the rows kept, else "spark").
ANSWERS: list[tuple[int, str, bool, str]] = []
# A where clause of this many digits holds an integer literal past a bigint.
_LONG_DIGITS = re.compile(r"\d{19,}")


@dataclass(frozen=True)
class Case:
    """One query on one read path, and the Parquet condition that gives its expected rows.

    ``pred`` is the filter (``where``); ``oracle`` overrides the Parquet condition for
    search options (``fieldmatch``/``query``) that have no ``where``.
    """

    path: str
    pred: Pred | None = None
    oracle: str | None = None
    query: str | None = None
    fieldmatch: tuple[tuple[str, str], ...] = ()
    translatable: bool = False  # the filter was drawn to be answered by the index

    @property
    def where(self) -> str | None:
        return None if self.pred is None else self.pred.render()

    @property
    def oracle_where(self) -> str | None:
        return self.oracle if self.oracle is not None else self.where

    def describe(self) -> str:
        parts = [self.path]
        if self.where is not None:
            parts.append(f"where {_clip(self.where)}")
        if self.query is not None:
            parts.append(f"query {_clip(self.query)!r}")
        if self.fieldmatch:
            parts.append(f"fieldmatch {_clip(repr(dict(self.fieldmatch)))}")
        return " ".join(parts)


@dataclass(frozen=True)
class Failure:
    """A case whose rows differ from Parquet's (or that raised)."""

    seed: int
    case: Case
    detail: str
    error: bool
    plan: TablePlan = field(repr=False)

    def signature(self) -> str:
        """What kind of failure: the exception's class, or which way rows differ."""
        if self.error:
            return "error:" + self.detail.split(":", 1)[0]
        return (
            "rows:"
            + ("missing" if "missing" in self.detail else "")
            + ("extra" if "extra" in self.detail else "")
        )


@dataclass(frozen=True)
class Built:
    """The two tables of a plan."""

    plan: TablePlan
    table: str
    parquet: str


def _clip(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + f"...({len(text)} chars)"


_ERROR_LINE = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Invalid|Failure)\b:? ?")
_WRAPPER = ("PythonException", "org.apache.", "[PYTHON_EXCEPTION]", "py4j.")


def error_text(exc: BaseException) -> str:
    """The most telling line of an exception (the Python worker's last error line)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    found = [line for line in lines if _ERROR_LINE.match(line) and not line.startswith(_WRAPPER)]
    best = found[-1] if found else (lines[0] if lines else "")
    return type(exc).__name__ + ": " + _clip(best, 400)


class WriteFailed(Exception):
    """IndexTables refused or failed a write that Parquet took."""


def build(spark: SparkSession, plan: TablePlan, root: Path) -> Built:
    """Write ``plan`` to a new IndexTables table and a new Parquet copy.

    A column of a type the docs list as refused (decimal, binary) may be
    refused at planning with an error naming it; it is then left out and
    recorded in ``plan.refused``. Any other write error raises ``WriteFailed``.
    """
    from pyspark.errors import AnalysisException

    while True:
        n = next(_table_ids)
        table, copy = str(root / f"it{n}"), str(root / f"pq{n}")
        started = time.monotonic()
        try:
            _write_all(spark, plan, table, copy)
            return Built(plan, table, copy)
        except AnalysisException as exc:
            refusable = [
                f.name
                for f in plan.schema.fields
                if may_be_refused(f.dataType) and re.search(rf"\b{f.name}\b", str(exc))
            ]
            if not refusable:
                raise WriteFailed(error_text(exc)) from exc
            plan = plan.without_columns(refusable[:1])
            plan = replace(plan, refused=(*plan.refused, refusable[0]))
        finally:
            TIMINGS["writes"] += time.monotonic() - started


def _write_all(spark: SparkSession, plan: TablePlan, table: str, copy: str) -> None:
    options = plan.write_options()
    for index, write in enumerate(plan.writes):
        df = spark.createDataFrame(list(write.rows), plan.schema)
        try:
            df.write.format(paths.FMT).options(**options).mode(write.mode).save(table)
        except Exception as exc:
            from pyspark.errors import AnalysisException

            if isinstance(exc, AnalysisException) and index == 0:
                raise
            raise WriteFailed(f"write {index} ({write.mode}): {error_text(exc)}") from exc
        _write_parquet(spark, df, plan.partition_by, write.mode, copy)


# Spark's sorted partition writer sees -0.0 and 0.0 as one partition key while sorting but
# names two directories, so it reopens a file it already wrote (FileAlreadyExistsException);
# the concurrent writer keys its files by the exact value.
_CONCURRENT_WRITERS = "spark.sql.maxConcurrentOutputFileWriters"


def _write_parquet(
    spark: SparkSession, df: Any, partition_by: Sequence[str], mode: str, copy: str
) -> None:
    previous = spark.conf.get(_CONCURRENT_WRITERS)
    spark.conf.set(_CONCURRENT_WRITERS, "256")
    try:
        df.write.partitionBy(*partition_by).mode(mode).parquet(copy)
    finally:
        spark.conf.set(_CONCURRENT_WRITERS, previous)


# -- cases ------------------------------------------------------------------


@dataclass(frozen=True)
class Budget:
    """How much to run per table."""

    filters: int = 30
    local_every: int = 1  # run search.local for every n-th filter
    distributed_every: int = 1  # run search.distributed for every n-th filter
    fieldmatch: int = 3
    queries: int = 3
    stream: bool = True


def cases_for(plan: TablePlan, rng: random.Random, budget: Budget) -> list[Case]:
    """Every case of one table: unfiltered reads, random filters, search options."""
    cases = [Case(p) for p in UNFILTERED_PATHS]
    pools = column_pools(plan)
    for i in range(budget.filters):
        # Every third filter is drawn to be translatable: random trees mostly are not.
        drawn = i % 3 == 1
        pred = translatable_filter(rng, plan, pools) if drawn else random_filter(rng, plan, pools)
        for p in FILTER_PATHS:
            if p == "search.distributed" and i % budget.distributed_every:
                continue
            if p == "search.local" and i % budget.local_every:
                continue
            cases.append(Case(p, pred, translatable=drawn))
    cases += _fieldmatch_cases(plan, rng, budget.fieldmatch)
    cases += _query_cases(plan, rng, budget.queries)
    if budget.stream:
        cases.append(Case("stream"))  # last: its worker start-up can time out on a busy host
    return cases


def _exact_string_columns(plan: TablePlan) -> list[str]:
    store_only = set(plan.options.get(STOREONLY, "").split(","))
    return [
        c
        for c in ("c_str", "c_str2")
        if c in plan.columns
        and c not in store_only
        and plan.options.get(TYPEMAP + c, "string") == "string"
        and c not in plan.partition_by
    ]


def _live_values(plan: TablePlan, column: str) -> list[Any]:
    index = plan.columns.index(column)
    return [r[index] for r in plan.live_rows() if r[index] is not None]


def _fieldmatch_cases(plan: TablePlan, rng: random.Random, count: int) -> list[Case]:
    cases: list[Case] = []
    columns = _exact_string_columns(plan)
    for _ in range(count if columns else 0):
        column = rng.choice(columns)
        pool = _live_values(plan, column)
        value = rng.choice(pool) if pool and rng.random() < 0.85 else "absent value"
        oracle = f"{column} = {sql_string(value)}"
        match = ((column, value),)
        cases.append(Case("fieldmatch.read", oracle=oracle, fieldmatch=match))
        cases.append(Case("fieldmatch.search.local", oracle=oracle, fieldmatch=match))
    return cases


def _rfc3339(value: datetime) -> str:
    value = value.astimezone(UTC)
    return f"{value.year:04d}-{value:%m-%dT%H:%M:%S}.{value.microsecond:06d}Z"


def _query_cases(plan: TablePlan, rng: random.Random, count: int) -> list[Case]:
    """``query`` strings with an exact Parquet equivalent: i64 and date ranges, string terms."""
    options: list[tuple[str, str]] = []
    for _ in range(count):
        kinds = [c for c in ("c_long", "c_ts", "c_str") if c in plan.columns]
        kinds = [c for c in kinds if c not in plan.options.get(STOREONLY, "").split(",")]
        if not kinds:
            break
        column = rng.choice(kinds)
        pool = _live_values(plan, column)
        if column == "c_str":
            pool = [v for v in pool if v and '"' not in v and "\\" not in v]
            if pool and plan.options.get(TYPEMAP + column, "string") == "string":
                value = rng.choice(pool)
                options.append((f'{column}:"{value}"', f"{column} = {sql_string(value)}"))
            continue
        if len(pool) < 2:
            continue
        low, high = sorted(rng.sample(pool, 2))
        data_type = LongType() if column == "c_long" else TimestampType()
        if column == "c_long":
            text = f"{column}:[{low} TO {high}]"
        else:
            text = f"{column}:[{_rfc3339(low)} TO {_rfc3339(high)}]"
        oracle = (
            f"{column} BETWEEN {sql_literal(low, data_type)} AND {sql_literal(high, data_type)}"
        )
        options.append((text, oracle))
    options += _numeric_queries(plan, rng, count)
    options += _negated_queries(plan, options, count)
    options += _term_set_queries(plan, count)
    options += _valued_queries(plan, count)
    cases: list[Case] = []
    for text, oracle in options:
        cases.append(Case("query.read", oracle=oracle, query=text))
        cases.append(Case("query.search.local", oracle=oracle, query=text))
    return cases


def _negated_queries(
    plan: TablePlan, options: Sequence[tuple[str, str]], count: int
) -> list[tuple[str, str]]:
    """``a AND NOT b`` / ``a AND -b`` / ``a -b`` over two of the drawn clauses, with the
    equal Spark filter (:func:`~difftest.predicates.negated_query`). Drawn from a generator
    of their own, so every other draw of a seed stays as it was. Timestamp ranges are left
    out: a refused bound is recognised on a lone clause only."""
    usable = [o for o in options if not _QUERY_DATE.fullmatch(o[0])]
    if len(usable) < 2:
        return []
    rng = random.Random(plan.seed * 104_729 + 11)
    drawn = [negated_query(rng, *rng.sample(usable, 2)) for _ in range(count)]
    return list(dict.fromkeys(drawn))


def _term_set_queries(plan: TablePlan, count: int) -> list[tuple[str, str]]:
    """``c: IN [a b ...]`` on numeric fields (live values, signed zeros, NaN, infinities) with
    Spark's ``c IN (...)``, whose members compare as ``=`` does. Drawn from a generator of
    their own, so every other draw of a seed stays as it was."""
    store_only = set(plan.options.get(STOREONLY, "").split(","))
    numeric = [
        c
        for c in ("c_double", "c_float", "c_int", "c_long")
        if c in plan.columns and c not in store_only
    ]
    rng = random.Random(plan.seed * 7_919 + 5)
    out: list[tuple[str, str]] = []
    for _ in range(count // 2 if numeric else 0):
        column = rng.choice(numeric)
        floating = isinstance(plan.type_of(column), FloatType | DoubleType)
        pool = [v for v in _live_values(plan, column) if not floating or _plain(v)]
        members: list[tuple[str, str]] = [(str(v), f"{v!r}D" if floating else str(v)) for v in pool]
        if floating:
            members += list(_SPECIAL_OPERANDS.items())
        else:
            members.append(("0", "0"))
        drawn = rng.sample(members, min(len(members), rng.randint(1, 3)))
        texts = [t for t, _ in drawn if "e" not in t]
        if texts:
            sqls = [sql for t, sql in drawn if "e" not in t]
            out.append((f"{column}: IN [{' '.join(texts)}]", f"{column} IN ({', '.join(sqls)})"))
    return out


def _valued_queries(plan: TablePlan, count: int) -> list[tuple[str, str]]:
    """``c:[* TO *]`` (has a value) with Spark's ``c IS NOT NULL``; on a column that is not
    fast the engine refuses it (:func:`_documented_refusal`). Drawn from a generator of
    their own, so every other draw of a seed stays as it was."""
    store_only = set(plan.options.get(STOREONLY, "").split(","))
    columns = [
        c
        for c in ("c_long", "c_int", "c_double", "c_str", "c_ts", "c_bool", "c_date")
        if c in plan.columns and c not in store_only
    ]
    rng = random.Random(plan.seed * 6_007 + 3)
    drawn = [rng.choice(columns) for _ in range(min(count, 2))] if columns else []
    return [(f"{c}:[* TO *]", f"{c} IS NOT NULL") for c in dict.fromkeys(drawn)]


def _plain(value: float) -> bool:
    """A finite double a query spells without an exponent."""
    return value == value and abs(value) != float("inf") and abs(value) < 1e15


def _shortest_text(value: float, single: bool) -> str:
    """The shortest decimal text that parses back to ``value`` (as a 32-bit float when
    ``single``): ``0.1`` for ``0.1f``, as a user would type it."""
    for digits in range(1, 18):
        text = f"{value:.{digits}g}"
        back = values.to_float32(float(text)) if single else float(text)
        if back == value:
            return text
    return repr(value)


def _numeric_queries(plan: TablePlan, rng: random.Random, count: int) -> list[tuple[str, str]]:
    """``query`` terms and ranges on numeric fields (``d:0``, ``f:[0 TO 1]``, ``f:0.1``),
    each with the equal Spark filter over the same text (docs/pyspark.md): signed zeros
    match each other, and a number compares with a float column as a double, so ``f:0.1``
    matches what ``f = 0.1`` does (not ``0.1f``), and the float's exact double text does."""
    store_only = set(plan.options.get(STOREONLY, "").split(","))
    numeric = [
        c
        for c in ("c_double", "c_float", "c_int", "c_long")
        if c in plan.columns and c not in store_only
    ]
    out: list[tuple[str, str]] = []
    for _ in range(count if numeric else 0):
        column = rng.choice(numeric)
        data_type = plan.type_of(column)
        single = isinstance(data_type, FloatType)
        floating = isinstance(data_type, FloatType | DoubleType)
        pool = [
            v
            for v in _live_values(plan, column)
            if not floating or (v == v and abs(v) != float("inf") and abs(v) < 1e15)
        ]
        pool += [0.0, -0.0] if floating else [0]

        def text(v: Any, floating: bool = floating, single: bool = single) -> str:
            if not floating:
                return str(v)
            sign = "-" if str(v).startswith("-") else ""
            # A user's spelling (shortest text) or the value's exact double text.
            short = rng.random() < 0.5
            return sign + (_shortest_text(abs(v), single) if short else repr(abs(v)))

        if floating and rng.random() < 0.4:
            out.append(_special_query(rng, column, [text(v) for v in pool]))
            continue
        if rng.random() < 0.5:
            term = text(rng.choice(pool))
            if "e" not in term:  # Tantivy's query syntax has no exponents
                out.append((f"{column}:{term}", f"{column} = {term}"))
            continue
        low, high = (text(v) for v in sorted(rng.choice(pool) for _ in "ab"))
        if "e" not in low + high:
            out.append((f"{column}:[{low} TO {high}]", f"{column} BETWEEN {low} AND {high}"))
    return out


# Query spellings of NaN, the infinities and the zeros, with their Spark SQL operand.
_SPECIAL_OPERANDS = {
    "NaN": "CAST('NaN' AS DOUBLE)",
    "-NaN": "CAST('NaN' AS DOUBLE)",  # every NaN is NaN to Spark
    "nan": "CAST('NaN' AS DOUBLE)",
    "inf": "CAST('Infinity' AS DOUBLE)",
    "-inf": "CAST('-Infinity' AS DOUBLE)",
    "-Infinity": "CAST('-Infinity' AS DOUBLE)",
    "0": "0.0D",
    "-0.0": "-0.0D",
}


def _special_query(rng: random.Random, column: str, pool: list[str]) -> tuple[str, str]:
    """A term, range or comparison on a float/double ``column`` with NaN, an infinity or a
    signed zero among its operands, and the equal Spark filter (docs/pyspark.md: every NaN
    equals NaN and sorts above every number, ``-0.0 = 0.0``; ``*`` leaves a side open)."""
    operands = list(_SPECIAL_OPERANDS)
    plain = [t for t in pool if "e" not in t]

    def operand() -> tuple[str, str]:
        if plain and rng.random() < 0.3:
            chosen = rng.choice(plain)
            return chosen, f"{chosen}D"
        chosen = rng.choice(operands)
        return chosen, _SPECIAL_OPERANDS[chosen]

    pick = rng.random()
    if pick < 0.35:
        term, sql = operand()
        quoted = f'"{term}"' if rng.random() < 0.2 else term
        return f"{column}:{quoted}", f"{column} = {sql}"
    if pick < 0.6:
        op = rng.choice([">", ">=", "<", "<="])
        term, sql = operand()
        return f"{column}:{op}{term}", f"{column} {op} {sql}"
    (low, low_sql), (high, high_sql) = (
        ("*", "") if rng.random() < 0.25 else operand() for _ in "ab"
    )
    opening, closing = rng.choice("[{"), rng.choice("]}")
    conditions = [f"{column} IS NOT NULL"]
    if low != "*":
        conditions.append(f"{column} {'>=' if opening == '[' else '>'} {low_sql}")
    if high != "*":
        conditions.append(f"{column} {'<=' if closing == ']' else '<'} {high_sql}")
    return f"{column}:{opening}{low} TO {high}{closing}", " AND ".join(conditions)


# -- running ----------------------------------------------------------------


def _flag_exprs(wheres: Sequence[str]) -> list[str]:
    return [f"({w}) AS q{i}" for i, w in enumerate(wheres)]


def _flagged(
    records: list[dict[str, Any]], columns: Sequence[str], types: Sequence[Any], n: int
) -> tuple[Counter[Row], list[Counter[Row]]]:
    """The whole multiset, and for each flag the multiset of rows where it is true."""
    everything = normalize_rows(records, columns, types)
    per_flag = [
        normalize_rows([r for r in records if r[f"q{i}"] is True], columns, types) for i in range(n)
    ]
    return everything, per_flag


def run_cases(spark: SparkSession, built: Built, cases: Sequence[Case], seed: int) -> list[Failure]:
    """Run ``cases`` against ``built``; one :class:`Failure` per case that differs."""
    plan = built.plan
    columns = plan.columns
    types = [plan.type_of(c) for c in columns]
    started = time.monotonic()
    every = sorted({c.oracle_where for c in cases if c.oracle_where is not None})
    parquet = paths.parquet(spark, built.parquet, plan.schema)
    refused = _refused_by_spark(parquet, every)
    wheres = [w for w in every if w not in refused]
    index = {w: i for i, w in enumerate(wheres)}
    extra = _flag_exprs(wheres)
    oracle_df = parquet.selectExpr(*[f"`{c}`" for c in columns], *extra)
    everything, expected = _flagged(oracle_df.toArrow().to_pylist(), columns, types, len(wheres))

    def want(case: Case) -> Counter[Row]:
        where = case.oracle_where
        return everything if where is None else expected[index[where]]

    failures: list[Failure] = []

    def check(case: Case, got: Counter[Row]) -> None:
        if case.oracle_where in refused:
            spark_error = refused[case.oracle_where]
            detail = f"answered {sum(got.values())} rows where Spark raises {spark_error}"
            failures.append(Failure(seed, case, detail, False, plan))
            return
        diff = difference(want(case), got)
        if not diff.empty:
            failures.append(Failure(seed, case, diff.summary(columns), False, plan))

    TIMINGS["parquet"] += time.monotonic() - started
    nopush = [c for c in cases if c.path == "read.nopushdown" and c.oracle_where not in refused]
    for case in cases:
        if case.path == "read.nopushdown" and case.oracle_where in refused:
            _expect_refusal(spark, built, case, columns, failures, seed)
    started = time.monotonic()
    if nopush:
        try:
            records = paths.read(
                spark, built.table, None, pushed=False, columns=columns, extra=extra
            )
        except Exception as exc:
            failures += [Failure(seed, c, error_text(exc), True, plan) for c in nopush]
        else:
            all_rows, flagged = _flagged(records, columns, types, len(wheres))
            for case in nopush:
                where = case.oracle_where
                check(case, all_rows if where is None else flagged[index[where]])
    TIMINGS["read.nopushdown"] += time.monotonic() - started
    for case in cases:
        if case.path == "read.nopushdown":
            continue
        started = time.monotonic()
        try:
            got = normalize_rows(_run(spark, built, case, columns), columns, types)
        except Exception as exc:
            # Where Spark refuses the filter (a 40-digit literal), so must we.
            if case.oracle_where not in refused and not _documented_refusal(case, exc, plan):
                failures.append(Failure(seed, case, error_text(exc), True, plan))
            continue
        finally:
            TIMINGS[case.path] += time.monotonic() - started
        check(case, got)
    return failures


# Tantivy never indexes a term over this many UTF-8 bytes (platform.md).
TERM_LIMIT = 65_530


# The first and last instants a Tantivy date field can hold (i64 nanoseconds, at microseconds).
DATE_SPAN = (
    datetime(1677, 9, 21, 0, 12, 43, 145_225, tzinfo=UTC),
    datetime(2262, 4, 11, 23, 47, 16, 854_775, tzinfo=UTC),
)
_INSTANT = r"(\d{4}-\d\d-\d\dT[\d:.]+Z)"
_QUERY_DATE = re.compile(rf"(\w+):\[{_INSTANT} TO {_INSTANT}\]")
# A has-a-value query: ``c:[* TO *]``.
_QUERY_VALUED = re.compile(r"(\w+):\[\* TO \*\]")
# A string term of a drawn query (its values hold no quote or backslash).
_QUERY_STRING = re.compile(r'c_str:"([^"]*)"')


def _documented_refusal(case: Case, exc: Exception, plan: TablePlan) -> bool:
    """Refusals docs/pyspark.md documents, each naming the column: ``fieldmatch`` with a value
    or a ``query`` string term Tantivy cannot index, ``c:[* TO *]`` on a column that is not
    fast, a ``query`` date bound at or beyond an
    end of Tantivy's date span, a ``query`` timestamp range with an inclusive upper bound on a
    column that is not fast (its index compares whole seconds)."""
    text = str(exc)
    if any(
        len(value.encode()) > TERM_LIMIT and column in text for column, value in case.fieldmatch
    ):
        return True
    if "option query: a term on column 'c_str'" in text and any(
        len(value.encode()) > TERM_LIMIT for value in _QUERY_STRING.findall(case.query or "")
    ):
        return True
    valued = _QUERY_VALUED.fullmatch(case.query or "")
    if valued is not None:
        column = valued.group(1)
        return "is not fast" in text and f"column {column!r}" in text and _not_fast(plan, column)
    match = _QUERY_DATE.fullmatch(case.query or "")
    if match is None:
        return False
    column = match.group(1)
    if "option query" not in text or f"column '{column}'" not in text:
        return False
    bounds = [datetime.fromisoformat(b.replace("Z", "+00:00")) for b in match.group(2, 3)]
    if any(b <= DATE_SPAN[0] or b >= DATE_SPAN[1] for b in bounds):
        return True
    return "cannot be matched exactly" in text and _coarse_timestamps(plan, column)


def _not_fast(plan: TablePlan, column: str) -> bool:
    """A column the table's options leave out of the fast fields (a text column is never
    fast unless listed)."""
    options = {k.lower(): v for k, v in plan.options.items()}
    fast = options.get(FASTFIELDS.lower())
    if fast is not None:
        return column not in fast.split(",")
    return options.get((TYPEMAP + column).lower(), "string") == "text"


def _coarse_timestamps(plan: TablePlan, column: str) -> bool:
    """A timestamp column that the table's options leave out of the fast fields."""
    timestamp = isinstance(plan.type_of(column), TimestampType | TimestampNTZType)
    return timestamp and _not_fast(plan, column)


def _refused_by_spark(parquet: Any, wheres: Sequence[str]) -> dict[str, str]:
    """The filters Spark refuses at analysis (an integer literal past 38 digits), each with
    its error; only those holding a literal past a bigint are tried (analysis is eager)."""
    refused: dict[str, str] = {}
    for where in wheres:
        if not _LONG_DIGITS.search(where):
            continue
        try:
            parquet.where(where)
        except Exception as exc:
            refused[where] = error_text(exc)
    return refused


def _expect_refusal(
    spark: SparkSession,
    built: Built,
    case: Case,
    columns: list[str],
    failures: list[Failure],
    seed: int,
) -> None:
    """``read.nopushdown`` of a filter Spark refuses: it must raise too."""
    try:
        rows = paths.read(spark, built.table, case.where, pushed=False, columns=columns)
    except Exception:
        return
    detail = f"answered {len(rows)} rows where Spark raises"
    failures.append(Failure(seed, case, detail, False, built.plan))


def _run(spark: SparkSession, built: Built, case: Case, columns: list[str]) -> Any:
    table = built.table
    fieldmatch = dict(case.fieldmatch)
    if case.path == "read.pushdown" and case.where is not None:
        rows, scanned = paths.read_scanned(spark, table, case.where, columns=columns)
        answered = "index" if scanned == len(rows) else "spark"
        ANSWERS.append((built.plan.seed, case.where, case.translatable, answered))
        return rows
    if case.path == "read.pushdown":
        return paths.read(spark, table, case.where, pushed=True, columns=columns)
    if case.path in ("search.local", "search.distributed"):
        mode = case.path.split(".")[1]
        return paths.search(spark, table, mode=mode, columns=columns, where=case.where)
    if case.path == "stream":
        return paths.stream(spark, table, columns)
    if case.path == "fieldmatch.read":
        ((column, value),) = case.fieldmatch
        options = {f"fieldmatch.{column}": value}
        return paths.read(spark, table, None, pushed=True, columns=columns, options=options)
    if case.path == "query.read":
        assert case.query is not None
        options = {"query": case.query}
        return paths.read(spark, table, None, pushed=True, columns=columns, options=options)
    if case.path in ("fieldmatch.search.local", "query.search.local"):
        return paths.search(
            spark, table, mode="local", columns=columns, query=case.query, fieldmatch=fieldmatch
        )
    raise ValueError(f"unknown path {case.path}")


def check_pushdown(spark: SparkSession, built: Built, seed: int) -> list[Failure]:
    """The pushdown setting takes effect per query: with it on, a filter on ``id`` makes
    the scan return fewer rows than with it off (where the scan returns every row)."""
    rows = built.plan.live_rows()
    if len(rows) < 2:
        return []
    ident = rows[len(rows) // 2][built.plan.columns.index("id")]
    where = f"id = {ident}"
    scanned: dict[bool, int] = {}
    for pushed in (False, True):
        case = Case("read.pushdown" if pushed else "read.nopushdown", Pred("leaf", where))
        try:
            scanned[pushed], _ = paths.scanned_rows(spark, built.table, where, pushed=pushed)
        except Exception as exc:
            return [Failure(seed, case, error_text(exc), True, built.plan)]
    if scanned[False] > 1 and not scanned[True] < scanned[False]:
        detail = (
            f"pushdown on: the scan returned {scanned[True]} rows for {where}, with it off "
            f"{scanned[False]}: the setting did not take effect"
        )
        case = Case("read.pushdown", Pred("leaf", where))
        return [Failure(seed, case, detail, False, built.plan)]
    return []


def check_case_twins(spark: SparkSession, built: Built, root: Path, seed: int) -> list[Failure]:
    """A column beside one whose name differs only by case (``c_long`` and ``C_LONG``):
    Spark's Parquet writer refuses it (``COLUMN_ALREADY_EXISTS``), so must IndexTables,
    before writing anything."""
    plan = built.plan
    rng = random.Random(seed * 31 + 5)
    column = rng.choice([c for c in plan.columns if c not in plan.partition_by])
    twin = column.upper() if column != column.upper() else column.lower()
    df = paths.parquet(spark, built.parquet, plan.schema).limit(1)
    df = df.selectExpr("*", f"`{column}` AS `{twin}`")
    outcome: dict[str, str | None] = {}
    for name, writer in (
        ("parquet", lambda: df.write.mode("append").parquet(str(root / "twin_pq"))),
        ("indextables", lambda: df.write.format(paths.FMT).mode("append").save(built.table)),
    ):
        try:
            writer()
            outcome[name] = None
        except Exception as exc:
            outcome[name] = error_text(exc)
    if (outcome["parquet"] is None) == (outcome["indextables"] is None):
        ours = outcome["indextables"]
        if ours is None or column.lower() in ours.lower():
            return []
    theirs, ours = outcome["parquet"], outcome["indextables"]
    detail = f"columns {column}, {twin}: parquet {theirs}, ours {ours}"
    return [Failure(seed, Case("write"), detail, True, plan)]


def run_seed(
    spark: SparkSession,
    seed: int,
    root: Path,
    *,
    rows_per_write: int,
    writes: int,
    budget: Budget,
) -> tuple[TablePlan, list[Failure]]:
    """Generate, build and check one table; every failure of every case."""
    from difftest.tables import random_plan

    plan = random_plan(seed, rows_per_write=rows_per_write, writes=writes)
    try:
        built = build(spark, plan, root)
    except WriteFailed as exc:
        return plan, [Failure(seed, Case("write"), str(exc), True, plan)]
    rng = random.Random(seed * 7919 + 1)
    cases = cases_for(built.plan, rng, budget)
    failures = run_cases(spark, built, cases, seed)
    failures += check_pushdown(spark, built, seed)
    failures += check_case_twins(spark, built, root, seed)
    return built.plan, failures


def reproduces(
    spark: SparkSession, plan: TablePlan, case: Case, root: Path, signature: str
) -> Failure | None:
    """Build ``plan`` afresh and run ``case``: the failure if it still fails the same way."""
    try:
        built = build(spark, plan, root)
    except WriteFailed as exc:
        failure = Failure(plan.seed, Case("write"), str(exc), True, plan)
        return failure if case.path == "write" and failure.signature() == signature else None
    if case.path == "write":
        return None
    cases = [case]
    found = run_cases(spark, built, cases, plan.seed)
    return next((f for f in found if f.signature() == signature), None)


def options_text(options: Mapping[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(options.items()))
