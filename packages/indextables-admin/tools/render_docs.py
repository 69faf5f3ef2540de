"""Regenerate docs/admin.md from real runs of the ``indextables`` command.

Copies the partitioned golden table to /tmp/indextables-demo/events, runs
every command on it (as a real subprocess of the installed script), and
writes the outputs into the page. Run from the repository root::

    python packages/indextables-admin/tools/render_docs.py > docs/admin.md
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
GOLDEN = ROOT / "testdata/golden/indextables_spark_v0.5.4"  # the repository's own copy
DEMO = Path("/tmp/indextables-demo")
EVENTS = DEMO / "events"
SCRIPT = shutil.which("indextables", path=os.path.dirname(sys.executable)) or "indextables"


def run(*args: str) -> str:
    """Run one command; return a console transcript (command, output, exit code)."""
    done = subprocess.run([SCRIPT, *args], capture_output=True, text=True, check=False, env=_env())
    shown = " ".join(_quote(a) for a in args)
    lines = [f"$ indextables {shown}", (done.stdout + done.stderr).rstrip()]
    if done.returncode:
        lines.append(f"$ echo $?\n{done.returncode}")
    return "```console\n" + "\n".join(lines) + "\n```\n"


def _quote(arg: str) -> str:
    """Shell quoting that reads well: double quotes around SQL-ish literals."""
    if shlex.quote(arg) == arg:
        return arg
    if not any(c in arg for c in '"$`\\!'):
        return f'"{arg}"'
    return shlex.quote(arg)


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("INDEXTABLES_")}
    env["COLUMNS"] = "120"
    return env


def prepare() -> None:
    """A private copy of the golden table, plus one old orphaned split."""
    shutil.rmtree(DEMO, ignore_errors=True)
    DEMO.mkdir(parents=True)
    shutil.copytree(GOLDEN / "04_partitioned", EVENTS)
    for crc in EVENTS.rglob(".*.crc"):
        crc.unlink()  # Hadoop side files: noise in the listings below
    source = next((EVENTS / "date=2024-01-02").glob("part-*.split"))
    orphan = EVENTS / "date=2024-01-02/part-00000-failed-write.split"
    shutil.copyfile(source, orphan)
    old = time.time() - 30 * 24 * 3600
    os.utime(orphan, (old, old))


def main() -> None:
    prepare()
    page = TEMPLATE
    steps = {
        "VERSION": ("version",),
        "DESCRIBE": ("describe", str(EVENTS)),
        "DESCRIBE_JSON": ("describe", str(EVENTS), "--output", "json"),
        "FILES": ("files", str(EVENTS)),
        "FILES_JSON": ("files", str(EVENTS), "--where", "date = '2024-01-03'", "-o", "json"),
        "HISTORY": ("history", str(EVENTS)),
        "CHANGES": ("changes", str(EVENTS), "--since-version", "0"),
        "SCHEMA": ("schema", str(EVENTS)),
        "SEARCH": ("search", str(EVENTS), "text:doc1 OR text:doc3"),
        "SEARCH_JSON": ("search", str(EVENTS), "text:doc1", "--columns", "id,score", "-o", "json"),
        "SEARCH_CSV": (
            "search",
            str(EVENTS),
            "--columns",
            "id,date,text",
            "--limit",
            "2",
            "-o",
            "csv",
        ),
        "COUNT": ("count", str(EVENTS), "text:doc1 OR text:doc3"),
        "COUNT_JSON": ("count", str(EVENTS), "-o", "json"),
        "AGGREGATE": (
            "aggregate",
            str(EVENTS),
            "--group-by",
            "date",
            "--metrics",
            "n=count,sum(score)",
        ),
        "CHECKPOINT": ("checkpoint", str(EVENTS)),
        "VALIDATE": ("validate", str(EVENTS)),
        "DROP_DRY": ("drop-partitions", str(EVENTS), "--where", "date = '2024-01-01'", "--dry-run"),
        "DROP": ("drop-partitions", str(EVENTS), "--where", "date = '2024-01-01'", "--yes"),
        "COMPACT": ("compact", str(EVENTS), "-o", "json"),
        "HISTORY2": ("history", str(EVENTS)),
        "TRUNCATE_DRY": ("truncate-time-travel", str(EVENTS), "--dry-run"),
        "TRUNCATE": ("truncate-time-travel", str(EVENTS), "--yes", "-o", "json"),
        "PURGE_DRY": ("purge", str(EVENTS), "--older-than", "7d", "--dry-run"),
        "PURGE": ("purge", str(EVENTS), "--older-than", "7d", "--yes", "-o", "json"),
        "GC_DRY": (
            "gc",
            str(EVENTS),
            "--retention",
            "0d",
            "--keep-versions",
            "0",
            "--min-manifest-age",
            "0s",
            "--dry-run",
        ),
        "GC": (
            "gc",
            str(EVENTS),
            "--retention",
            "0d",
            "--keep-versions",
            "0",
            "--min-manifest-age",
            "0s",
            "--yes",
            "-o",
            "json",
        ),
        "REPAIR": ("repair", str(EVENTS), "--to", str(DEMO / "events-repaired")),
        "REPAIR_AGAIN": ("repair", str(EVENTS), "--to", str(DEMO / "events-repaired")),
    }
    for name, args in steps.items():
        page = page.replace(f"@@{name}@@", run(*args))
    broken = DEMO / "broken"
    shutil.copytree(EVENTS, broken)
    for split in (broken / "date=2024-01-03").glob("*.split"):
        split.unlink()
    page = page.replace("@@VALIDATE_FAIL@@", run("validate", str(broken)))
    page = page.replace("@@VALIDATE_FAIL_JSON@@", run("validate", str(broken), "-o", "json"))
    page = page.replace("@@MISSING@@", run("describe", str(DEMO / "missing")))
    page = page.replace("@@MISSING_JSON@@", run("describe", str(DEMO / "missing"), "-o", "json"))
    page = page.replace("@@BAD_OPTION@@", run("files", str(EVENTS), "--where", "score > 10"))
    sys.stdout.write(page)


TEMPLATE = (Path(__file__).with_name("admin.md.in")).read_text()

if __name__ == "__main__":
    main()
