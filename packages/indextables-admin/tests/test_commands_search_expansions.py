"""``--max-term-expansions N`` on search, count and aggregate: it overrides the
``spark.indextables.query.maxTermExpansions`` setting both ways, and bad values are
usage errors (no Spark)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from indextables.search import write_table

KEY = "spark.indextables.query.maxTermExpansions"
# w0* stands for the 20 terms w000..w019; x* for 5 others.
WORDS = [f"w{i:03d}" for i in range(20)] + [f"x{i:03d}" for i in range(5)]
W0 = [i for i, w in enumerate(WORDS) if w.startswith("w0")]


@pytest.fixture
def words_table(tmp_path: Path) -> str:
    uri = str(tmp_path / "t")
    data = pa.table({"id": list(range(len(WORDS))), "message": WORDS})
    write_table(uri, data, options={"spark.indextables.indexing.typemap.message": "text"})
    return uri


def _ids(run: Any) -> list[int]:
    assert run.exit_code == 0, run.stderr
    return sorted(r["id"] for r in run.json()["rows"])


def _refused(run: Any, limit: int) -> None:
    assert run.exit_code != 0
    assert f"'message:w0*' stands for more than {limit} terms" in run.stderr


def test_the_flag_lowers_the_setting(words_table: str, cli_run: Any) -> None:
    setting = ("-S", f"{KEY}=100")
    query = "message:w0*"
    assert _ids(cli_run("search", words_table, query, *setting, "-o", "json")) == W0
    flag = ("--max-term-expansions", "19")
    _refused(cli_run("search", words_table, query, *flag, *setting, "-o", "json"), 19)
    _refused(cli_run("count", words_table, query, *flag, *setting, "-o", "json"), 19)
    aggregate = ("aggregate", words_table, query, "--group-by", "id", "--metrics", "count")
    _refused(cli_run(*aggregate, *flag, *setting, "-o", "json"), 19)


def test_the_flag_raises_the_setting(words_table: str, cli_run: Any) -> None:
    setting = ("-S", f"{KEY}=5")
    query = "message:w0*"
    _refused(cli_run("search", words_table, query, *setting, "-o", "json"), 5)
    _refused(cli_run("count", words_table, query, *setting, "-o", "json"), 5)
    flag = ("--max-term-expansions", "20")
    run = cli_run("search", words_table, query, *flag, *setting, "-o", "json")
    assert _ids(run) == W0
    assert run.json()["max_term_expansions"] == 20
    counted = cli_run("count", words_table, query, *flag, *setting, "-o", "json")
    assert counted.exit_code == 0, counted.stderr
    assert counted.json()["count"] == len(W0)
    aggregate = ("aggregate", words_table, query, "--group-by", "id", "--metrics", "count")
    grouped = cli_run(*aggregate, *flag, *setting, "-o", "json")
    assert grouped.exit_code == 0, grouped.stderr
    assert sorted(r["id"] for r in grouped.json()["rows"]) == W0


@pytest.mark.parametrize("bad", ["0", "-3", "ten", "1.5"])
def test_bad_values_are_usage_errors_naming_the_flag(
    words_table: str, cli_run: Any, bad: str
) -> None:
    for command in (
        ("search",),
        ("count",),
        ("aggregate", "--group-by", "id", "--metrics", "count"),
    ):
        run = cli_run(*command, words_table, "message:w0*", "--max-term-expansions", bad)
        assert run.exit_code == 1, (command, run.stderr)  # a user error
        assert "Invalid value for '--max-term-expansions'" in run.stderr
