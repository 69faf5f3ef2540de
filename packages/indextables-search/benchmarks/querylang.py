"""Log-search term forms through the engine vs DuckDB over a Parquet copy (figures only).

On N log rows (``--rows``, default 2,000,000; the targets: ``--rows
20000000``) written as an IndexTables table and as Parquet, DuckDB with 2 threads:

- a prefix term on ``message`` matching ~0.05% of rows (``message:zyxq*``) vs
  DuckDB's ``LIKE '% zyxq%'``;
- ``where="host LIKE 'web-1%'"`` and ``"host LIKE '%b-1%'"`` (answered through the
  term dictionary of the exact ``host`` field) and ``host RLIKE '^web-1'``, rows
  and counts, vs the same ``LIKE``/``regexp_matches`` in DuckDB;
- a fuzzy term ``message:needlezq~1`` vs DuckDB's nearest, ``levenshtein`` over the
  message's last word, and a regex term ``message:/zyxq[0-4]/`` vs
  ``regexp_matches``;
- the top 10 by ``_score`` and the newest 100 by ``ts`` of the needle
  (``message:needlezz``, ~0.01%) and of the prefix term, each against the plain
  search of the same term, with the peak RSS of each (a fresh child process).

Prints every figure and ratio (never asserts a time) and writes them to
``--out`` (default ``benchmarks/results`` at the repository's top) as
``querylang-<UTC date and time>.json``. Tables are written once under ``--path``
and reused. Usage: ``python benchmarks/querylang.py [--rows 2000000] [--repeat 5]``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import duck_rows, measure, parser

OPTIONS = {"spark.indextables.indexing.typemap.message": "text"}
CHUNK = 1_000_000
PREFIX, PREFIX_SQL = "message:zyxq*", "message LIKE '% zyxq%'"
NEEDLE = "message:needlezz"
FUZZY, FUZZY_SQL = (
    "message:needlezq~1",
    "levenshtein(split_part(message, ' ', 4), 'needlezq') <= 1",
)
REGEX, REGEX_SQL = "message:/zyxq[0-4]/", "regexp_matches(message, ' zyxq[0-4]$')"
WHERES = ["host LIKE 'web-1%'", "host LIKE '%b-1%'"]
RLIKE, RLIKE_SQL = "host RLIKE '^web-1'", "regexp_matches(host, '^web-1')"
BASE_MICROS = 1_700_000_000 * 1_000_000


def log_rows(start: int, stop: int) -> pa.RecordBatch:
    """Rows ``start <= id < stop``: a timestamp a second apart, a host of ``web-``,
    ``db-`` or ``app-`` and 0..99, and a message whose last word is ``zyxq<digit>`` in
    1 row of 2,000, ``needlezz`` in 1 of 10,000, else ``ok`` (seeded per chunk)."""
    rng = np.random.default_rng(start)
    count = stop - start
    ids = np.arange(start, stop, dtype=np.int64)
    kinds = np.array(["web-", "db-", "app-"])[rng.integers(0, 3, count)]
    hosts = pc.binary_join_element_wise(
        pa.array(kinds), pa.array(rng.integers(0, 100, count)).cast("string"), ""
    )
    roll = rng.integers(0, 10_000, count)
    digits = np.char.add("zyxq", rng.integers(0, 10, count).astype(str))
    words = np.where(roll < 5, digits, np.where(roll == 9_999, "needlezz", "ok"))
    message = pc.binary_join_element_wise(
        "request ", pa.array(ids).cast("string"), " served ", pa.array(words), ""
    )
    ts = pa.array(BASE_MICROS + ids * 1_000_000, pa.timestamp("us", tz="UTC"))
    levels = pa.array(np.array(["INFO", "WARN", "ERROR"])[rng.integers(0, 3, count)])
    return pa.record_batch(
        {"id": ids, "ts": ts, "level": levels, "host": hosts, "message": message}
    )


def tables(root: str, rows: int) -> tuple[str, str]:
    """The table and its Parquet copy (one split and one row group per million rows),
    written on first use only."""
    from indextables.search import write_table

    base = os.path.join(root, f"querylang-{rows}")
    uri, parquet, marker = base + "-indextables", base + ".parquet", base + ".done"
    if os.path.exists(marker):
        print(f"tables: reusing {base}* ({rows:,} rows)")
        return uri, parquet
    import shutil

    shutil.rmtree(uri, ignore_errors=True)
    os.makedirs(root, exist_ok=True)
    start = time.perf_counter()
    schema = log_rows(0, 1).schema
    with pq.ParquetWriter(parquet, schema) as writer:
        for low in range(0, rows, CHUNK):
            batch = log_rows(low, min(rows, low + CHUNK))
            write_table(uri, pa.Table.from_batches([batch]), options=OPTIONS)
            writer.write_batch(batch, row_group_size=CHUNK)
    print(f"tables: {rows:,} rows written in {time.perf_counter() - start:.1f} s")
    Path(marker).write_text(f"{rows}\n", encoding="utf-8")
    return uri, parquet


def _figure(label: str, ours: tuple[float, float, Any], base: tuple[float, float, Any]) -> dict:
    ratio = base[0] / ours[0] if ours[0] else float("inf")
    print(
        f"{label:<34} indextables {ours[0] * 1000:9.2f} ms (±{ours[1] * 500:6.2f})  "
        f"duckdb {base[0] * 1000:9.2f} ms (±{base[1] * 500:6.2f})  "
        f"duckdb/indextables = {ratio:7.1f}x  results {ours[2]} / {base[2]}",
        flush=True,
    )
    return {
        "label": label,
        "indextables_ms": round(ours[0] * 1000, 3),
        "indextables_spread_ms": round(ours[1] * 1000, 3),
        "duckdb_ms": round(base[0] * 1000, 3),
        "duckdb_spread_ms": round(base[1] * 1000, 3),
        "duckdb_over_indextables": round(ratio, 2),
        "results": [ours[2], base[2]],
    }


def _peak_rss_mb(uri: str, question: str) -> float:
    """The peak RSS (``VmHWM``) of a fresh process that opens the table and asks
    ``question`` (a ``_QUESTIONS`` key) once."""
    args = [sys.executable, os.path.abspath(__file__), "--rss-child", uri, question]
    done = subprocess.run(args, capture_output=True, text=True, check=True)
    return float(done.stdout.strip().splitlines()[-1])


def _questions(table: Any) -> dict[str, Callable[[], int]]:
    def ask(**kwargs: Any) -> Callable[[], int]:
        return lambda: table.search(**kwargs).num_rows

    out = {}
    for name, term in (("needle", NEEDLE), ("prefix", PREFIX)):
        out[f"{name}, every hit"] = ask(query=term)
        out[f"{name}, top 10 by _score"] = ask(query=term, order_by="_score", limit=10)
        out[f"{name}, newest 100 by ts"] = ask(query=term, order_by="ts DESC", limit=100)
    return out


def _rss_child(uri: str, question: str) -> None:
    from indextables.search import open_table

    _questions(open_table(uri))[question]()
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                print(int(line.split()[1]) / 1024)
                return


def run(uri: str, parquet: str, repeat: int) -> dict:
    import duckdb

    from indextables.search import open_table

    table = open_table(uri)
    db = duckdb.connect()
    db.execute("SET threads = 2")
    src = f"read_parquet('{parquet}')"

    def duck_count(where: str) -> Callable[[], int]:
        return lambda: int(db.sql(f"SELECT count(*) FROM {src} WHERE {where}").fetchall()[0][0])

    figures = []
    print(f"table: {len(table.files)} splits; DuckDB {duckdb.__version__}, 2 threads")
    cases: list[tuple[str, Callable[[], Any], Callable[[], Any]]] = [
        (
            "prefix message:zyxq*, rows",
            lambda: table.search(PREFIX).num_rows,
            duck_rows(db, f"SELECT * FROM {src} WHERE {PREFIX_SQL}"),
        ),
        (
            "prefix message:zyxq*, count",
            lambda: table.count(PREFIX),
            duck_count(PREFIX_SQL),
        ),
    ]
    for where in WHERES:
        cases.append(
            (
                f"{where}, rows",
                lambda w=where: table.search(where=w).num_rows,
                duck_rows(db, f"SELECT * FROM {src} WHERE {where}"),
            )
        )
        cases.append((f"{where}, count", lambda w=where: table.count(where=w), duck_count(where)))
    cases += [
        (
            f"{RLIKE}, count",
            lambda: table.count(where=RLIKE),
            duck_count(RLIKE_SQL),
        ),
        (
            "fuzzy message:needlezq~1, rows",
            lambda: table.search(FUZZY).num_rows,
            duck_rows(db, f"SELECT * FROM {src} WHERE {FUZZY_SQL}"),
        ),
        (
            "regex message:/zyxq[0-4]/, rows",
            lambda: table.search(REGEX).num_rows,
            duck_rows(db, f"SELECT * FROM {src} WHERE {REGEX_SQL}"),
        ),
    ]
    for label, ours, theirs in cases:
        figures.append(_figure(label, measure(ours, repeat), measure(theirs, repeat)))
    topk = []
    questions = _questions(table)
    for name in ("needle", "prefix"):
        plain = measure(questions[f"{name}, every hit"], repeat)
        plain_rss = _peak_rss_mb(uri, f"{name}, every hit")
        for variant in ("top 10 by _score", "newest 100 by ts"):
            label = f"{name}, {variant}"
            found = measure(questions[label], repeat)
            peak = _peak_rss_mb(uri, label)
            ratio = found[0] / plain[0] if plain[0] else float("inf")
            print(
                f"{label:<34} {found[0] * 1000:9.2f} ms, {found[2]} rows; every hit "
                f"{plain[0] * 1000:9.2f} ms, {plain[2]} rows: {ratio:5.2f}x the time; "
                f"peak RSS {peak:.0f} MB vs {plain_rss:.0f} MB",
                flush=True,
            )
            topk.append(
                {
                    "label": label,
                    "ms": round(found[0] * 1000, 3),
                    "rows": found[2],
                    "every_hit_ms": round(plain[0] * 1000, 3),
                    "every_hit_rows": plain[2],
                    "time_over_every_hit": round(ratio, 3),
                    "peak_rss_mb": round(peak, 1),
                    "every_hit_peak_rss_mb": round(plain_rss, 1),
                }
            )
    return {"figures": figures, "topk": topk, "splits": len(table.files)}


def main(argv: list[str] | None = None) -> int:
    top = Path(__file__).resolve().parents[3]
    arguments = parser(
        repeat=5,
        path=os.path.join(os.path.expanduser("~"), ".cache", "indextables-bench-search"),
        path_help="where the tables are written once and reused",
    )
    arguments.add_argument("--out", default=str(top / "benchmarks" / "results"))
    arguments.add_argument("--rss-child", nargs=2, default=None, help="(internal)")
    args = arguments.parse_args(argv)
    if args.rss_child:
        _rss_child(*args.rss_child)
        return 0
    import duckdb

    started = dt.datetime.now(dt.UTC)
    uri, parquet = tables(args.path, args.rows)
    print(f"query forms, {args.rows:,} rows, median of {args.repeat} warm runs:")
    found = run(uri, parquet, args.repeat)
    record = {
        "benchmark": "querylang",
        "started": started.isoformat(timespec="seconds"),
        "rows": args.rows,
        "repeat": args.repeat,
        "duckdb": {"version": duckdb.__version__, "threads": 2},
        "machine": {
            "cpus": os.cpu_count(),
            "load_average_1m": round(os.getloadavg()[0], 1),
            "python": platform.python_version(),
        },
        **found,
    }
    os.makedirs(args.out, exist_ok=True)
    name = f"querylang-{started.strftime('%Y-%m-%dT%H%M%SZ')}.json"
    target = os.path.join(args.out, name)
    with open(target, "w", encoding="utf-8") as out:
        json.dump(record, out, indent=2)
        out.write("\n")
    print(f"results: {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
