"""``max_term_expansions=`` on ``itp.search``, ``itp.count`` and ``itp.aggregate``: over the
``spark.indextables.query.maxTermExpansions`` option both ways, bad values refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import indextables.pyspark as itp
from indextables.search import write_table

pytestmark = [pytest.mark.spark, pytest.mark.integration]

LIMIT_KEY = "spark.indextables.query.maxTermExpansions"
# w0* stands for the 20 terms w000..w019.
WORDS = [f"w{i:03d}" for i in range(20)] + [f"x{i:03d}" for i in range(5)]
W0 = [i for i, w in enumerate(WORDS) if w.startswith("w0")]


def test_the_keyword_overrides_the_option_both_ways(spark: Any, tmp_path: Path) -> None:
    from pyspark.errors import PythonException

    path = str(tmp_path / "t")
    data = pa.table({"id": list(range(len(WORDS))), "message": WORDS})
    write_table(path, data, options={"spark.indextables.indexing.typemap.message": "text"})
    query = "message:w0*"
    refused = r"'message:w0\*' stands for more than 19 terms"
    high = {LIMIT_KEY: "100"}
    assert sorted(r["id"] for r in itp.search(spark, path, query, options=high).collect()) == W0
    with pytest.raises(itp.QuerySyntaxError, match=refused):
        itp.search(spark, path, query, options=high, max_term_expansions=19).collect()
    with pytest.raises(itp.QuerySyntaxError, match=refused):
        itp.count(spark, path, query=query, options=high, max_term_expansions=19)
    # An aggregation counts on the splits in Spark tasks: the task's error.
    with pytest.raises(PythonException, match="QuerySyntaxError: .*" + refused):
        itp.aggregate(
            spark, path, metrics={"n": "count"}, query=query, options=high, max_term_expansions=19
        ).collect()

    low = {LIMIT_KEY: "5"}
    with pytest.raises(itp.QuerySyntaxError, match=r"stands for more than 5 terms"):
        itp.count(spark, path, query=query, options=low)
    found = itp.search(spark, path, query, options=low, max_term_expansions=20)
    assert sorted(r["id"] for r in found.collect()) == W0
    assert itp.count(spark, path, query=query, options=low, max_term_expansions=20) == len(W0)
    counted = itp.aggregate(
        spark, path, metrics={"n": "count"}, query=query, options=low, max_term_expansions=20
    )
    assert [r["n"] for r in counted.collect()] == [len(W0)]

    for bad in (0, True, "20"):
        with pytest.raises(itp.ArgumentError, match=rf"max_term_expansions={bad!r}"):
            itp.search(spark, path, query, max_term_expansions=bad)
        with pytest.raises(itp.ArgumentError, match=rf"max_term_expansions={bad!r}"):
            itp.count(spark, path, query=query, max_term_expansions=bad)
