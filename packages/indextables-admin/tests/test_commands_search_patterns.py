"""search and count with wildcard, fuzzy, regex and phrase-prefix terms, and the expansion
limit as a ``-S`` setting (no Spark)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from indextables.search import write_table

WORDS = [f"w{i:03d}" for i in range(20)]


@pytest.fixture
def words_table(tmp_path: Path) -> str:
    uri = str(tmp_path / "t")
    data = pa.table({"id": list(range(20)), "message": [f"go {w}" for w in WORDS]})
    write_table(uri, data, options={"spark.indextables.indexing.typemap.message": "text"})
    return uri


def _ids(run: Any) -> list[int]:
    assert run.exit_code == 0, run.stderr
    return sorted(r["id"] for r in run.json()["rows"])


def test_search_and_count_answer_the_term_forms(words_table: str, cli_run: Any) -> None:
    def search(query: str) -> list[int]:
        return _ids(cli_run("search", words_table, query, "-o", "json"))

    assert search("w01*") == list(range(10, 20))
    assert search("message:w00?") == list(range(10))
    assert search("w019~1") == [9, *range(10, 20)]  # w009 by one substitution; w01x
    assert search("/w01[89]/") == [18, 19]
    assert search('message:"go w01"*') == list(range(10, 20))
    assert search("message:go-w01*") == list(range(10, 20))
    count = cli_run("count", words_table, "w0*", "-o", "json")
    assert count.exit_code == 0, count.stderr
    assert count.json()["count"] == 20


def test_the_expansion_limit_is_a_setting(words_table: str, cli_run: Any) -> None:
    key = "spark.indextables.query.maxTermExpansions"
    run = cli_run("search", words_table, "w01*", "-S", f"{key}=10", "-o", "json")
    assert _ids(run) == list(range(10, 20))
    refused = cli_run("search", words_table, "w0*", "-S", f"{key}=10", "-o", "json")
    assert refused.exit_code != 0
    assert "'w0*' stands for more than 10 terms" in refused.stderr
    bad = cli_run("search", words_table, "w0*", "-S", f"{key}=0")
    assert bad.exit_code != 0
    assert key in bad.stderr
