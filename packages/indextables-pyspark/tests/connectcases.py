"""The Connect suites' tables, their Python model, the client run and the comparisons.

Each Connect test module builds its tables with the classic session
(:func:`build_tables`: one copy per session kind of every table a step changes),
runs the steps once over Connect (:func:`run_client`, ``connectrun.py`` in a
subprocess) and once on the classic session (``connectrun.answers``), and
:func:`check` compares the two answers of a step and the classic one with a
Python model of the rows.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import connectrun

_RUNNER = Path(__file__).with_name("connectrun.py")
_TYPEMAP = {"spark.indextables.indexing.typemap.message": "text"}
_CHANGED = ("merge", "mutations", "onwrite", "maintenance", "stream", "companion")


def model_rows() -> list[tuple[int, str, str, float]]:
    rnd = random.Random(47)
    rows = []
    for i in range(240):
        level = rnd.choice(["ERROR", "INFO", "WARN"])
        message = f"request {i} " + rnd.choice(["timed out", "ok", "retried"])
        rows.append((i, level, message, round(rnd.uniform(0, 100), 3)))
    return rows


def build_tables(spark: Any, root: Path) -> tuple[dict[str, str], dict[str, str]]:
    """The paths each session kind works on: (classic, connect)."""
    schema = "id long, level string, message string, latency double"
    frame = spark.createDataFrame(model_rows(), schema).repartition(12)
    frame.write.format("indextables").options(**_TYPEMAP).mode("append").save(str(root / "t"))
    source = root / "merge-source"
    for start in range(0, 60, 10):
        part = spark.range(start, start + 10, numPartitions=1).selectExpr("id", "id * 2 as y")
        part.write.format("indextables").mode("append").save(str(source))
    mutations = root / "mutations-source"
    for start in range(0, 240, 60):
        rows = model_rows()[start : start + 60]
        part = spark.createDataFrame(rows, schema).repartition(2)
        part.write.format("indextables").options(**_TYPEMAP).mode("append").save(str(mutations))
    kinds: list[dict[str, str]] = []
    for kind in ("classic", "connect"):
        shutil.copytree(source, root / f"merge-{kind}")
        shutil.copytree(mutations, root / f"mutations-{kind}")
        paths = {"table": str(root / "t"), "missing": str(root / "no-table")}
        paths.update({name: str(root / f"{name}-{kind}") for name in _CHANGED})
        kinds.append(paths)
    return kinds[0], kinds[1]


def run_client(remote: str, paths: dict[str, str], steps: list[str], workdir: Path) -> Any:
    """What a Connect session at ``remote`` answered for ``steps`` (one client process)."""
    job_file = workdir / "connect-job.json"
    job_file.write_text(json.dumps({"remote": remote, "paths": paths, "steps": steps}))
    done = subprocess.run(
        [sys.executable, str(_RUNNER), str(job_file)],
        capture_output=True,
        text=True,
        timeout=1500,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert answer["connect"] is True
    return answer


def classic_answers(spark: Any, paths: dict[str, str], steps: list[str]) -> Any:
    """The same steps on the classic session, registered as a user's session is (another
    test of the session may have changed the settings ``itp.register`` makes)."""
    import indextables.pyspark as itp

    itp.register(spark)
    return connectrun.answers(spark, paths, steps)


def _model_count() -> dict[str, int]:
    rows = model_rows()
    return {
        "count": len(rows),
        "count_query": sum("timed" in r[2] for r in rows),
        "count_where": sum(r[1] == "ERROR" for r in rows),
    }


def _check_counts(classic: Any, connect: Any) -> None:
    model = _model_count()
    assert {k: classic[k] for k in model} == model
    assert {k: connect[k] for k in model} == model


def _check_aggregate(classic: Any, connect: Any) -> None:
    model: dict[str, list[Any]] = {}
    for i, level, _, latency in model_rows():
        n, total, top = model.get(level, [0, 0, float("-inf")])
        model[level] = [n + 1, total + i, max(top, latency)]
    assert {r[0]: list(r[1:]) for r in classic["aggregate"]} == model
    assert connect["aggregate"] == classic["aggregate"]


def _check_search(classic: Any, connect: Any) -> None:
    hits = [r for r in model_rows() if "timed" in r[2] and r[3] > 10]
    expected = [list(r) for r in sorted(hits)[:25]]
    assert [row[:4] for row in classic["search"]] == expected
    # the highlight column marks the matched term in each hit's message
    assert all("timed" in str(row[4:]) for row in classic["search"])
    assert connect["search"] == classic["search"]


def _check_merge(classic: Any, connect: Any) -> None:
    assert classic["merge"]["splits"] < 6
    assert sorted(tuple(r) for r in classic["merge"]["rows"]) == [(i, i * 2) for i in range(60)]
    assert connect["merge"] == classic["merge"]


def _mutations_model() -> dict[str, Any]:
    """The rows and counts of the mutations step, from the model rows: DELETE FROM
    with WHERE, with QUERY and WHERE, one matching nothing, then a replaceWhere."""
    rows = model_rows()
    kept = [r for r in rows if r[1] != "ERROR"]
    left = [r for r in kept if not ("retried" in r[2].split() and r[3] > 50)]
    new = [(i, "INFO", f"replaced {i}", float(i % 10)) for i in range(1000, 1010)]
    replaced = [r for r in left if not r[3] < 20] + new
    return {
        "deleted": [len(rows) - len(kept), len(kept) - len(left), 0],
        "rows": sorted([list(r) for r in replaced], key=repr),
    }


def _check_mutations(classic: Any, connect: Any) -> None:
    found, model = classic["mutations"], _mutations_model()
    assert [d[1] for d in found["deletes"]] == model["deleted"]
    assert [d[0] for d in found["deletes"]] == ["SUCCESS", "SUCCESS", "NO_ACTION"]
    assert found["deletes"][2][2] == 0
    assert found["replaced"] == found["rows"] == model["rows"]
    assert found["count"] == len(model["rows"])
    assert found["mismatch"] == "ReplaceWhereMismatchError"
    assert found["purge"] == "success"
    before, after = found["with_deletes"]
    assert before > 0
    assert after == 0
    assert connect["mutations"] == found


def _check_onwrite(classic: Any, connect: Any) -> None:
    outcome = classic["onwrite"]
    assert (outcome["merged_groups"], outcome["error"], outcome["splits"]) == (2, None, 2)
    assert sorted(outcome["rows"]) == sorted([[i, str(i % 2)] for i in range(40)] * 2)
    assert connect["onwrite"] == outcome


def _check_environment(classic: Any, connect: Any) -> None:
    def part(rows: list[dict[str, Any]], role: str) -> set[tuple[Any, ...]]:
        kinds = {"python", "package"}
        return {
            tuple(r.values()) for r in rows if r["role"] == role and r["property_type"] in kinds
        }

    workers = part(classic["environment"], "worker")
    assert ("package", "indextables-pyspark") in {(w[2], w[3]) for w in workers}
    assert part(connect["environment"], "worker") == workers
    assert part(connect["environment"], "driver") == part(classic["environment"], "driver")
    settings = {r["property_name"] for r in connect["environment"] if r["property_type"] == "spark"}
    assert "spark.sql.session.timeZone" in settings


def _check_maintenance(classic: Any, connect: Any) -> None:
    found = classic["maintenance"]
    # a table's first write commits versions 0 (its metadata) and 1 (its files)
    assert found["state"] == [3, 3]
    assert found["checkpoint"] == ["SUCCESS", 3]
    assert found["purge"] == [True, 0]
    assert sorted(found["rows"]) == [[i] for i in range(30)]
    assert connect["maintenance"] == found


def _check_stream(classic: Any, connect: Any) -> None:
    expected = sorted([[r[0], r[1]] for r in model_rows()], key=repr)
    assert classic["stream"] == expected
    assert connect["stream"] == expected


def _check_companion(classic: Any, connect: Any) -> None:
    # the vendored Delta table holds 0..9 with 0 and 9 deleted by a deletion vector
    expected = {
        "built": ["success", 1],
        "values": list(range(1, 9)),
        "count": 1,
        "aggregate": [8, 36],
    }
    assert classic["companion"] == expected
    assert connect["companion"] == expected


def _check_errors(classic: Any, connect: Any) -> None:
    found = classic["errors"]
    assert found["read_missing"]["rebuilt"][0] == "NotATableError"
    assert found["read_bad_query"]["rebuilt"][0] == "QuerySyntaxError"
    assert found["count_bad_query"]["raised"] == "QuerySyntaxError"
    assert found["sql_bad"]["raised"] == "SqlCommandError"
    for answer in (classic["errors"], connect["errors"]):
        for case in answer.values():
            message = case["rebuilt"][1]
            # our message whole on the first lines, no Python or JVM frames after it
            assert message in case["first_line"]
            assert case["lines"] <= 2, case
    rebuilt = {name: case["rebuilt"] for name, case in found.items()}
    assert {name: case["rebuilt"] for name, case in connect["errors"].items()} == rebuilt


_CHECKS = {
    "counts": _check_counts,
    "aggregate": _check_aggregate,
    "search": _check_search,
    "merge": _check_merge,
    "mutations": _check_mutations,
    "onwrite": _check_onwrite,
    "environment": _check_environment,
    "maintenance": _check_maintenance,
    "stream": _check_stream,
    "companion": _check_companion,
    "errors": _check_errors,
}

#: The step names each check needs.
STEPS = {
    "counts": ["count", "count_query", "count_where"],
    **{name: [name] for name in _CHECKS if name != "counts"},
}


def steps_for(checks: list[str]) -> list[str]:
    return [step for check in checks for step in STEPS[check]]


def check(name: str, classic: Any, connect: Any) -> None:
    """The classic answer against the model, the Connect answer against the classic one."""
    for step in STEPS[name]:
        for answer in (classic, connect):
            failed = isinstance(answer[step], dict) and "step_failed" in answer[step]
            assert not failed, answer[step]
    _CHECKS[name](classic, connect)
