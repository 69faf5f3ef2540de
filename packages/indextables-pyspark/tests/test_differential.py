"""Differential test: every read path of IndexTables against Parquet over the same random data.

Each seed builds one random table (every supported type, nested ones, nulls,
NaN/infinities/-0.0, empty and huge strings, unicode, Tantivy syntax
characters, extreme dates, partition columns with null and '' values), writes
it with appends and an overwrite to IndexTables and to Parquet from the same
DataFrames, then compares, as exact multisets of rows, the unfiltered table and
random filters on every read path (``spark.read`` with pushdown on and off,
``itp.search`` in the driver and distributed, the streaming source, the
``fieldmatch`` and ``query`` options). See ``difftest/`` for the parts.

Settings (environment):

- ``INDEXTABLES_DIFF_SEEDS``: seeds for both tests, ``"1,2,7"`` or ``"1-40"``.
- ``INDEXTABLES_DIFF_SHRINK_SECONDS``: time to shrink a failure into a minimal
  reproducer (default 60; 0: no shrinking).
- ``INDEXTABLES_DIFF_SHRINK_COUNT``: how many failures of a seed to shrink and print,
  one per read path and kind of difference (default 1).
- ``INDEXTABLES_DIFF_REPORT``: a file to append every failure to (JSON lines).

A failing seed's message lists each failing case and, for the first (or more),
a self-contained PySpark script that reproduces it.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from difftest.runner import ANSWERS, TIMINGS, Budget, Failure, run_seed
from difftest.shrink import reproducer, shrink

pytestmark = [
    pytest.mark.spark,
    pytest.mark.integration,
    # A case-mismatched term on a `string` column (`c_str:"A"` where only "a" is in a
    # split) warns, and local searches run in this process, where warnings are errors
    # (seed 642): the answer, not the notice, is what is compared.
    pytest.mark.filterwarnings("ignore::indextables.search.query.casenotice.CaseMismatchWarning"),
]

# Chosen so that together they hold every hostile feature and most partition types,
# with dates outside Tantivy's range in one table only.
BOUNDED_SEEDS = (294, 312, 358)
SLOW_SEEDS = tuple(range(100, 130))


def _seeds(default: tuple[int, ...]) -> list[int]:
    text = os.environ.get("INDEXTABLES_DIFF_SEEDS", "").strip()
    if not text:
        return list(default)
    seeds: list[int] = []
    for part in text.split(","):
        low, _, high = part.strip().partition("-")
        seeds += list(range(int(low), int(high) + 1)) if high else [int(low)]
    return seeds


def _report(failures: list[Failure]) -> None:
    target = os.environ.get("INDEXTABLES_DIFF_REPORT")
    if not target:
        return
    with open(target, "a", encoding="utf-8") as out:
        for f in failures:
            entry = {"seed": f.seed, "case": f.case.describe(), "detail": f.detail[:2000]}
            out.write(json.dumps(entry) + "\n")


def _check_seed(
    spark: Any, seed: int, root: Path, *, rows_per_write: int, writes: int, budget: Budget
) -> None:
    ANSWERS.clear()
    plan, failures = run_seed(
        spark, seed, root, rows_per_write=rows_per_write, writes=writes, budget=budget
    )
    _report(failures)
    _report_timings(seed)
    if not failures:
        _check_answered(seed)
        return
    lines = [f"seed {seed}: {len(failures)} case(s) differ from Parquet"]
    if plan.refused:
        lines.append(f"(columns refused at write, as documented: {', '.join(plan.refused)})")
    lines += [f"- {f.case.describe()}: {f.detail}" for f in failures[:40]]
    seconds = float(os.environ.get("INDEXTABLES_DIFF_SHRINK_SECONDS", "60"))
    count = int(os.environ.get("INDEXTABLES_DIFF_SHRINK_COUNT", "1"))
    # One failure per (path, kind of difference), the first `count` of them.
    picked: dict[tuple[str, str], Failure] = {}
    for f in failures:
        picked.setdefault((f.case.path, f.signature()), f)
    for failure in list(picked.values())[:count]:
        if seconds > 0:
            failure = shrink(spark, failure, root / "shrink", seconds=seconds)
            lines.append(f"minimal reproducer ({failure.case.describe()}):")
        else:
            lines.append(f"reproducer, not shrunk ({failure.case.describe()}):")
        script = reproducer(failure)
        _report_script(script)
        lines.append(script)
    pytest.fail("\n".join(lines), pytrace=False)


def _check_answered(seed: int) -> None:
    """Most filters drawn to be translatable were answered by the index (the scan returned
    exactly the rows kept), so the comparison is not Spark's filter against Spark's."""
    drawn = [answered for _, _, translatable, answered in ANSWERS if translatable]
    assert drawn, f"seed {seed}: no translatable filter was drawn"
    assert drawn.count("index") * 2 > len(drawn), (
        f"seed {seed}: translatable filters answered by Spark, not the index: "
        + "; ".join(w for _, w, t, a in ANSWERS if t and a != "index")
    )


def _report_timings(seed: int) -> None:
    target = os.environ.get("INDEXTABLES_DIFF_REPORT")
    if target:
        spent = {k: round(v, 1) for k, v in sorted(TIMINGS.items())}
        with open(target, "a", encoding="utf-8") as out:
            out.write(json.dumps({"seed": seed, "seconds": spent}) + "\n")
        TIMINGS.clear()


def _report_script(script: str) -> None:
    target = os.environ.get("INDEXTABLES_DIFF_REPORT")
    if target:
        with open(target, "a", encoding="utf-8") as out:
            out.write(json.dumps({"reproducer": script}) + "\n")


@pytest.mark.parametrize("seed", _seeds(BOUNDED_SEEDS))
def test_differential_bounded(spark: Any, tmp_path: Path, seed: int) -> None:
    """Three small tables, ~30 queries each: part of the default suite."""
    budget = Budget(
        filters=22, local_every=2, distributed_every=4, fieldmatch=2, queries=2, stream=True
    )
    _check_seed(spark, seed, tmp_path, rows_per_write=10, writes=3, budget=budget)


@pytest.mark.slow
@pytest.mark.long
@pytest.mark.parametrize("seed", _seeds(SLOW_SEEDS))
def test_differential_long(spark: Any, tmp_path: Path, seed: int) -> None:
    """Many seeds, bigger tables, more filters, every filter on every path."""
    budget = Budget(filters=80, distributed_every=1, fieldmatch=4, queries=4, stream=True)
    _check_seed(spark, seed, tmp_path, rows_per_write=60, writes=5, budget=budget)
