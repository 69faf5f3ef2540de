"""A distributed ``itp.count`` over Spark Connect vs the same count on a classic session.

Figures, same run, same table (``--splits`` splits, above ``localMaxSplits``, 32
by default, so a query count runs as Spark tasks, one per 8 splits; a plain
count is answered from the splits' row counts in the log, in the client): the
classic session's median time per count,
then a Spark Connect client's (this script again, with ``--client``, in a process
of its own: a Connect client cannot share a process with a classic session) on
the same table, and their ratio (connect / classic). ``--remote`` is the
server: ``local[2]`` (PySpark's in-process local Connect server, started by
the client) or ``sc://host:port`` (a running ``start-connect-server.sh``).

Usage: python benchmarks/connect_count.py [--splits 100] [--rows 100000]
           [--repeat 5] [--remote local[2]] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import OPTIONS, logs, measure, scratch_session

QUERY = "message:needlezz"


def _counts(spark: Any, path: str, repeat: int) -> dict[str, Any]:
    """Median seconds (and the answer) of a plain and a query count, each warmed once."""
    import indextables.pyspark as itp

    plain = measure(lambda: itp.count(spark, path), repeat)
    query = measure(lambda: itp.count(spark, path, query=QUERY), repeat)
    return {
        "count_seconds": plain[0],
        "count": plain[2],
        "query_count_seconds": query[0],
        "query_count": query[2],
    }


def client(path: str, remote: str, repeat: int) -> None:
    """The Connect side: connect, register, time the counts, print one JSON line."""
    os.environ["SPARK_TESTING"] = "1"  # the local server on a free port, not 15002
    from pyspark.sql import SparkSession

    import indextables.pyspark as itp

    start = time.perf_counter()
    spark = SparkSession.builder.remote(remote).getOrCreate()
    itp.register(spark)
    connected = time.perf_counter() - start
    found = _counts(spark, path, repeat)
    spark.stop()
    print("RESULT " + json.dumps({**found, "connect_seconds": connected}))


def _connect_side(path: str, remote: str, repeat: int) -> dict[str, Any]:
    script = os.path.abspath(__file__)
    done = subprocess.run(
        [sys.executable, script, "--client", path, "--remote", remote, "--repeat", str(repeat)],
        env={**os.environ, "PYSPARK_PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=3600,
        check=False,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"the Connect client exited {done.returncode}:\n{done.stderr[-3000:]}")
    found: dict[str, Any] = json.loads(lines[-1][len("RESULT ") :])
    return found


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--splits", type=int, default=100)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--remote", default="local[2]")
    parser.add_argument("--json", default=None, help="write the figures to this file")
    parser.add_argument("--client", default=None, help=argparse.SUPPRESS)
    return parser.parse_args()


def main() -> int:
    args = _arguments()
    if args.client is not None:
        client(args.client, args.remote, args.repeat)
        return 0
    from indextables.search.table.tableaccess import load_view

    with scratch_session("connect-count") as (spark, work):
        path = f"{work}/t"
        data = logs(spark, args.rows, partitions=args.splits)
        data.write.format("indextables").options(**OPTIONS).mode("overwrite").save(path)
        splits = len(load_view(path, {}).splits)
        classic = _counts(spark, path, args.repeat)
        connect = _connect_side(path, args.remote, args.repeat)
    if (connect["count"], connect["query_count"]) != (classic["count"], classic["query_count"]):
        raise RuntimeError(f"the counts differ: classic {classic}, connect {connect}")
    ratio = connect["count_seconds"] / classic["count_seconds"]
    query_ratio = connect["query_count_seconds"] / classic["query_count_seconds"]
    print(f"table: {args.rows} rows in {splits} splits; Connect server {args.remote}")
    labels = (
        ("count (from the log)", "count_seconds"),
        ("count, text query (tasks)", "query_count_seconds"),
    )
    for label, key in labels:
        print(
            f"{label:<27} classic {classic[key] * 1000:8.1f} ms  "
            f"connect {connect[key] * 1000:8.1f} ms"
        )
    print(
        f"connect / classic = {query_ratio:.2f}x (distributed count), {ratio:.2f}x (from the log)"
    )
    if args.json:
        figures = {
            "benchmark": "connect_count",
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "python": platform.python_version(),
            "machine": {"cpus": os.cpu_count(), "load_1min": os.getloadavg()[0]},
            "rows": args.rows,
            "splits": splits,
            "repeat": args.repeat,
            "remote": args.remote,
            "classic": classic,
            "connect": connect,
            "ratio_distributed_count": query_ratio,
            "ratio_log_count": ratio,
        }
        with open(args.json, "w") as out:
            json.dump(figures, out, indent=2)
            out.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
