"""search --order-by, --highlight and --snippet-chars: the engine's ordered and
highlighted search through the command line, compared with the engine's answer."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from indextables.search import open_table, write_table

OPTIONS = {"spark.indextables.indexing.typemap.message": "text"}


@pytest.fixture
def ranked_table(tmp_path: Path) -> str:
    rng = random.Random(3)
    uri = str(tmp_path / "ranked")
    for start in (0, 50):
        ids = list(range(start, start + 50))
        data = pa.table(
            {
                "id": pa.array(ids, pa.int64()),
                "latency": pa.array(
                    [rng.choice([None, 0.5, 1.0, float("nan")]) for _ in ids], pa.float64()
                ),
                "message": [
                    " ".join(rng.choices(["timeout", "ok", "<x>", "disk"], k=4)) for _ in ids
                ],
            }
        )
        write_table(uri, data, options=OPTIONS)
    return uri


def test_order_by_and_highlight_give_the_engines_rows(ranked_table: str, cli_run: Any) -> None:
    run = cli_run(
        "search",
        ranked_table,
        "message:timeout",
        "--order-by",
        "_score",
        "--limit",
        "7",
        "--highlight",
        "message",
        "--snippet-chars",
        "20",
        "-o",
        "json",
    )
    assert run.exit_code == 0, run.stderr
    answer = run.json()
    want = open_table(ranked_table).search(
        "message:timeout", order_by="_score", limit=7, highlight=["message"], snippet_chars=20
    )
    assert answer["columns"] == want.column_names
    assert [r["id"] for r in answer["rows"]] == want.column("id").to_pylist()
    assert [r["_snippet_message"] for r in answer["rows"]] == want.column(
        "_snippet_message"
    ).to_pylist()
    assert answer["order_by"] == "_score"


def test_order_by_a_fast_field_keeps_the_order(ranked_table: str, cli_run: Any) -> None:
    run = cli_run(
        "search", ranked_table, "--order-by", "latency DESC, id", "--limit", "30", "-o", "json"
    )
    assert run.exit_code == 0, run.stderr
    want = open_table(ranked_table).search(order_by="latency DESC, id", limit=30)
    assert [r["id"] for r in run.json()["rows"]] == want.column("id").to_pylist()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--order-by", "latency"), "needs a limit"),
        (("--order-by", "nope", "--limit", "3"), "nope"),
        (("--order-by", "latency UP", "--limit", "3"), "UP"),
        (("--highlight", "id"), "not a stored text"),
        (("--highlight", ","), "--highlight is empty"),
    ],
)
def test_bad_order_and_highlight_exit_with_a_clear_message(
    ranked_table: str, cli_run: Any, args: tuple[str, ...], says: str
) -> None:
    run = cli_run("search", ranked_table, *args, "-o", "json")
    assert run.exit_code != 0
    assert says in run.stderr
    assert "Traceback" not in run.stderr
    assert json.loads(run.stderr)["error"]
