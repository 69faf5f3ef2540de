"""Shrink a failure (delta debugging) and print a self-contained PySpark reproducer.

Each attempt rebuilds both tables from the candidate plan in a fresh folder
and runs the one failing case; a candidate is kept when it fails the same way
(same exception class, or rows missing/extra the same way). Steps, each while
time remains: unneeded columns, the filter (a subtree at a time), the writes
(all live rows in one append, then whole writes), the rows (ddmin),
``partitionBy`` and the write options.
"""

from __future__ import annotations

import itertools
import re
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from difftest.runner import Case, Failure, reproduces
from difftest.tables import TablePlan, Write


class _Shrinker:
    def __init__(self, spark: SparkSession, failure: Failure, root: Path, seconds: float) -> None:
        self.spark = spark
        self.signature = failure.signature()
        self.root = root
        self.deadline = time.monotonic() + seconds
        self.attempts = 0
        self.best = failure

    def out_of_time(self) -> bool:
        return time.monotonic() > self.deadline

    def attempt(self, plan: TablePlan, case: Case) -> bool:
        if self.out_of_time():
            return False
        self.attempts += 1
        folder = self.root / f"shrink{self.attempts}"
        try:
            found = reproduces(self.spark, plan, case, folder, self.signature)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        if found is not None:
            self.best = found
            return True
        return False


def _mentioned(case: Case) -> str:
    return " ".join(
        [case.where or "", case.oracle or "", case.query or ""] + [c for c, _ in case.fieldmatch]
    )


def _columns_step(s: _Shrinker) -> None:
    plan, case = s.best.plan, s.best.case
    text = _mentioned(case)
    unused = [c for c in plan.columns if not re.search(rf"\b{c}\b", text)]
    if unused and len(unused) < len(plan.columns) and s.attempt(plan.without_columns(unused), case):
        return
    for column in list(s.best.plan.columns):
        if column in s.best.plan.columns and len(s.best.plan.columns) > 1:
            s.attempt(s.best.plan.without_columns([column]), case)


def _filter_step(s: _Shrinker) -> None:
    progress = True
    while progress and s.best.case.pred is not None:
        progress = False
        for smaller in s.best.case.pred.simpler():
            if s.attempt(s.best.plan, replace(s.best.case, pred=smaller)):
                progress = True
                break


def _writes_step(s: _Shrinker) -> None:
    plan = s.best.plan
    one = (Write("append", tuple(plan.live_rows())),)
    if len(plan.writes) > 1 and s.attempt(replace(plan, writes=one), s.best.case):
        return
    i = 0
    while i < len(s.best.plan.writes) and len(s.best.plan.writes) > 1:
        writes = s.best.plan.writes
        candidate = writes[:i] + writes[i + 1 :]
        if not s.attempt(replace(s.best.plan, writes=candidate), s.best.case):
            i += 1


def _with_rows(plan: TablePlan, keep: Sequence[tuple[int, int]]) -> TablePlan:
    chosen: dict[int, list[tuple[Any, ...]]] = {}
    for w, r in keep:
        chosen.setdefault(w, []).append(plan.writes[w].rows[r])
    writes = tuple(
        Write(write.mode, tuple(chosen.get(i, [])))
        for i, write in enumerate(plan.writes)
        if i in chosen or write.mode == "overwrite"
    )
    return replace(plan, writes=writes)


def _rows_step(s: _Shrinker) -> None:
    """ddmin over the rows of every write."""
    base = s.best.plan
    items = [(w, r) for w, write in enumerate(base.writes) for r in range(len(write.rows))]
    granularity = 2
    while len(items) >= 2 and not s.out_of_time():
        size = max(1, len(items) // granularity)
        chunks = [items[i : i + size] for i in range(0, len(items), size)]
        reduced = False
        for chunk in chunks:
            complement = [x for x in items if x not in chunk]
            if complement and s.attempt(_with_rows(base, complement), s.best.case):
                items, granularity, reduced = complement, max(granularity - 1, 2), True
                break
        if not reduced:
            if granularity >= len(items):
                break
            granularity = min(len(items), granularity * 2)
    if len(items) == 1:
        s.attempt(_with_rows(base, items), s.best.case)


def _options_step(s: _Shrinker) -> None:
    if s.best.plan.partition_by:
        s.attempt(replace(s.best.plan, partition_by=()), s.best.case)
    for key in list(s.best.plan.options):
        options = {k: v for k, v in s.best.plan.options.items() if k != key}
        s.attempt(replace(s.best.plan, options=options), s.best.case)


STEPS: tuple[Callable[[_Shrinker], None], ...] = (
    _columns_step,
    _filter_step,
    _writes_step,
    _rows_step,
    _options_step,
)


def shrink(spark: SparkSession, failure: Failure, root: Path, *, seconds: float) -> Failure:
    """The smallest failure found within ``seconds`` that fails like ``failure``."""
    shrinker = _Shrinker(spark, failure, root, seconds)
    if not shrinker.attempt(failure.plan, failure.case):
        return failure  # does not reproduce on a fresh table: report it as it is
    for step in STEPS:
        if shrinker.out_of_time():
            break
        step(shrinker)
    return shrinker.best


# -- the reproducer -----------------------------------------------------------


def _string(value: str) -> str:
    """A Python literal for ``value``, long runs of one character written as ``'c' * n``."""
    parts: list[str] = []
    plain = ""
    for char, group in itertools.groupby(value):
        run = len(list(group))
        if run >= 20:
            if plain:
                parts.append(repr(plain))
                plain = ""
            parts.append(f"{char!r} * {run}")
        else:
            plain += char * run
    if plain or not parts:
        parts.append(repr(plain))
    return parts[0] if len(parts) == 1 else "(" + " + ".join(parts) + ")"


def python_value(value: Any) -> str:
    """Source text for a row value (NaN, infinities, -0.0, dates, decimals included)."""
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, float):
        if value != value:
            return "float('nan')"
        if value in (float("inf"), float("-inf")):
            return f"float('{'-' if value < 0 else ''}inf')"
        return repr(value)
    if isinstance(value, datetime):
        zone = ", tzinfo=datetime.timezone.utc" if value.tzinfo is not None else ""
        fields = (value.hour, value.minute, value.second, value.microsecond)
        return f"datetime.datetime({value.year}, {value.month}, {value.day}, " + (
            ", ".join(map(str, fields)) + zone + ")"
        )
    if isinstance(value, date):
        return f"datetime.date({value.year}, {value.month}, {value.day})"
    if isinstance(value, Decimal):
        return f"decimal.Decimal({str(value)!r})"
    if isinstance(value, tuple):
        inner = ", ".join(python_value(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(python_value(v) for v in value) + "]"
    if isinstance(value, dict):
        items = ", ".join(f"{python_value(k)}: {python_value(v)}" for k, v in value.items())
        return "{" + items + "}"
    return repr(value)


def reproducer(failure: Failure) -> str:
    """A self-contained PySpark script that shows the difference."""
    plan, case = failure.plan, failure.case
    ddl = ", ".join(f"{f.name} {f.dataType.simpleString()}" for f in plan.schema.fields)
    lines = [
        f"# IndexTables vs Parquet (seed {failure.seed}): {case.path}",
        f"# {failure.detail[:600]}",
        "import datetime, decimal, tempfile",
        "from pyspark.sql import SparkSession",
        "import indextables.pyspark as itp",
        "spark = (SparkSession.builder.master('local[2]')",
        "         .config('spark.sql.session.timeZone', 'UTC').getOrCreate())",
        "itp.register(spark)",
        f"schema = {ddl!r}",
        "writes = [",
    ]
    for write in plan.writes:
        lines.append(f"    ({write.mode!r}, [")
        lines += [f"        {python_value(row)}," for row in write.rows]
        lines.append("    ]),")
    lines += [
        "]",
        f"options = {plan.write_options()!r}",
        "root = tempfile.mkdtemp()",
        "# Spark's sorted partition writer fails on -0.0 and 0.0 partitions; this one does not",
        "spark.conf.set('spark.sql.maxConcurrentOutputFileWriters', '256')",
        "table, copy = root + '/indextables', root + '/parquet'",
        "for mode, rows in writes:",
        "    df = spark.createDataFrame(rows, schema)",
        "    df.write.format('indextables').options(**options).mode(mode).save(table)",
        f"    df.write.partitionBy(*{list(plan.partition_by)!r}).mode(mode).parquet(copy)",
    ]
    if case.path != "write":
        lines += _read_lines(case)
    return "\n".join(lines)


def _read_lines(case: Case) -> list[str]:
    where = case.oracle_where
    want = "spark.read.schema(schema).parquet(copy)" + (
        f".where({where!r})" if where is not None else ""
    )
    search_mode = {"search.local": "local", "search.distributed": "distributed"}
    pushed = "false" if case.path == "read.nopushdown" else "true"
    lines = [f"spark.conf.set('spark.sql.python.filterPushdown.enabled', {pushed!r})"]
    if case.path in ("read.pushdown", "read.nopushdown"):
        got = "spark.read.format('indextables').load(table)"
        got += f".where({case.where!r})" if case.where is not None else ""
    elif case.path in search_mode or case.path.endswith("search.local"):
        mode = search_mode.get(case.path, "local")
        args = [f"{case.query!r}" if case.query is not None else "None"]
        if case.where is not None:
            args.append(f"where={case.where!r}")
        if case.fieldmatch:
            args.append(f"fieldmatch={dict(case.fieldmatch)!r}")
        args.append(f"options={{'spark.indextables.search.mode': {mode!r}}}")
        got = f"itp.search(spark, table, {', '.join(args)})"
    elif case.path == "stream":
        lines += [
            "q = (spark.readStream.format('indextables').option('startingVersion', '-1')",
            "     .load(table).writeStream.format('memory').queryName('repro')",
            "     .trigger(availableNow=True).start())",
            "q.awaitTermination()",
        ]
        got = "spark.table('repro')"
    else:
        options = {"query": case.query} if case.query is not None else {}
        options.update({f"fieldmatch.{c}": v for c, v in case.fieldmatch})
        got = f"spark.read.format('indextables').options(**{options!r}).load(table)"
    return [
        *lines,
        f"got = {got}",
        f"want = {want}",
        "print('indextables:', sorted(map(repr, got.toArrow().to_pylist())))",
        "print('parquet:    ', sorted(map(repr, want.toArrow().to_pylist())))",
    ]
