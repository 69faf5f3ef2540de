"""Query text beyond the size or nesting limit is refused with a typed error before any
parser reads it (10,000 nested parentheses killed the interpreter with SIGSEGV inside
Tantivy's parser)."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from indextables.search import open_table, write_table
from indextables.search.errors import QuerySyntaxError
from indextables.search.query.querylimits import (
    MAX_QUERY_BYTES,
    MAX_QUERY_DEPTH,
    check_query_limits,
    nesting_depth,
)
from indextables.search.query.searchoptions import SearchSpec

TEXTS = ["alpha", "beta", "alpha beta", "gamma"]


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> str:
    uri = str(Path(tmp_path_factory.mktemp("limits")) / "t")
    data = pa.table({"id": list(range(len(TEXTS))), "t": TEXTS})
    write_table(uri, data, options={"spark.indextables.indexing.typemap.t": "text"})
    return uri


_HOSTILE = {
    "parens": lambda n: "(" * n + "t:alpha" + ")" * n,
    "open": lambda n: "(" * n,
    "nots": lambda n: "NOT " * n + "t:alpha",
    "exclusions": lambda n: "-(" * n + "t:alpha" + ")" * n,
}


@pytest.mark.parametrize("form", sorted(_HOSTILE))
@pytest.mark.parametrize("levels", [10_000, 100_000])
def test_deep_nesting_is_refused_without_crashing(table: str, form: str, levels: int) -> None:
    # In a child process: before the limit, Tantivy's parser overflowed the native stack.
    script = (
        "import sys\n"
        "from indextables.search import open_table\n"
        "from indextables.search.errors import QuerySyntaxError\n"
        "try:\n"
        "    open_table(sys.argv[1]).count(sys.stdin.read())\n"
        "except QuerySyntaxError as error:\n"
        "    print(error)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, table],
        input=_HOSTILE[form](levels),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"option query: the query nests groups and NOT more than {MAX_QUERY_DEPTH}" in (
        done.stdout
    )


def test_nesting_at_the_limit_is_answered_and_one_more_refused(table: str) -> None:
    alpha = sum("alpha" in t.split() for t in TEXTS)
    deepest = MAX_QUERY_DEPTH
    assert open_table(table).count(_HOSTILE["parens"](deepest)) == alpha
    # An even number of NOTs is the term itself.
    assert open_table(table).count(_HOSTILE["nots"](deepest)) == alpha
    assert open_table(table).count(_HOSTILE["nots"](deepest - 1)) == len(TEXTS) - alpha
    for form in ("parens", "nots", "exclusions"):
        with pytest.raises(QuerySyntaxError, match=f"option query: .* {MAX_QUERY_DEPTH} levels"):
            open_table(table).count(_HOSTILE[form](deepest + 1))


def test_the_textsearch_option_is_named(table: str) -> None:
    with pytest.raises(QuerySyntaxError, match=r"option textsearch\.t: .*MAX_QUERY_DEPTH"):
        open_table(table).count(textsearch={"t": _HOSTILE["parens"](MAX_QUERY_DEPTH + 1)})


def test_size_limit_edge_in_utf8_bytes() -> None:
    check_query_limits("a" * MAX_QUERY_BYTES, "query")
    check_query_limits("\u00e9" * (MAX_QUERY_BYTES // 2), "query")  # two bytes each
    with pytest.raises(QuerySyntaxError, match=r"option query: .*1,048,577 UTF-8 bytes"):
        check_query_limits("a" * (MAX_QUERY_BYTES + 1), "query")
    with pytest.raises(QuerySyntaxError, match="MAX_QUERY_BYTES"):
        SearchSpec(query="\u00e9" * (MAX_QUERY_BYTES // 2) + "a")
    with pytest.raises(QuerySyntaxError, match=r"option textsearch\.msg"):
        SearchSpec(text_search={"msg": "a" * (MAX_QUERY_BYTES + 1)})


def _nested(rng: random.Random, budget: int) -> tuple[str, int, bool]:
    """Random query text, its nesting depth as built (groups and NOTs one level each;
    quoted phrases, ranges and escapes none) and whether it is one operand."""
    pick = rng.random() if budget else 0.0
    if pick < 0.3:
        leaf = rng.choice(
            ["t:alpha", 't:"a (b"', "n:[1 TO 5]", "t:a\\(b", 't:")) NOT"', "n:{( TO )}", "*"]
        )
        return rng.choice(["", "+", "-"]) + leaf, 0, True
    if pick < 0.5:
        inner, depth, one = _nested(rng, budget - 1)
        if not one:
            inner, depth = f"({inner})", depth + 1
        return rng.choice(["NOT ", "NOT\t", "-NOT "]) + inner, depth + 1, True
    if pick < 0.7:
        inner, depth, _ = _nested(rng, budget - 1)
        prefix = rng.choice(["", "-", "+", "NOT ", "NOT"])
        return f"{prefix}({inner})", depth + (2 if prefix.startswith("NOT") else 1), True
    (left, ld, _), (right, rd, _) = _nested(rng, budget - 1), _nested(rng, budget - 1)
    return f"{left} {rng.choice(['AND', 'OR', '&&', '||', ''])} {right}", max(ld, rd), False


@pytest.mark.parametrize("seed", range(6))
def test_nesting_depth_matches_the_built_depth(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(200):
        text, depth, _ = _nested(rng, rng.randint(0, 12))
        assert nesting_depth(text) == depth, text
        assert nesting_depth(text, stop=depth) == depth
        if depth:
            assert nesting_depth(text, stop=depth - 1) == depth  # stops past the limit
