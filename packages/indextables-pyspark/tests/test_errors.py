"""This package's one-line error first, where PySpark lets it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import indextables.pyspark as itp
from indextables.pyspark.errors import (
    FieldKindError,
    NotATableError,
    OptionError,
    from_spark_error,
    planning_errors,
)

# What PySpark 4.3 reports for an error raised while a Python source plans a write.
WRAPPED = (
    "[PYTHON_DATA_SOURCE_ERROR] Failed to initialize Python data source writer: "
    "Traceback (most recent call last):\n"
    '  File "/x/datasource.py", line 88, in writer\n'
    "    plan_write(self._path(), self.options, schema), overwrite=overwrite\n"
    "indextables.pyspark.errors.OptionError: option spark.indextables.indexing.typemap.nope "
    "names column(s) nope that the DataFrame does not have (columns: id)\n"
)


def test_the_carried_error_is_rebuilt_with_its_class_and_message() -> None:
    error = from_spark_error(RuntimeError(WRAPPED))
    assert isinstance(error, OptionError)
    assert str(error).startswith("option spark.indextables.indexing.typemap.nope names")
    hidden = (
        "[PYTHON_DATA_SOURCE_ERROR] Failed to plan: "
        "indextables.pyspark.errors.NotATableError: /t is not an IndexTables table"
    )
    assert isinstance(from_spark_error(RuntimeError(hidden)), NotATableError)
    assert from_spark_error(RuntimeError("ValueError: something else")) is None


def test_planning_errors_raises_ours_and_keeps_the_spark_error() -> None:
    original = RuntimeError(WRAPPED)
    with pytest.raises(OptionError) as caught, planning_errors():
        raise original
    assert caught.value.spark_error is original
    assert caught.value.__suppress_context__
    with pytest.raises(KeyError), planning_errors():
        raise KeyError("not ours")


@pytest.fixture
def hidden_traceback(spark: Any) -> Iterator[Any]:
    key = "spark.sql.execution.pyspark.udf.hideTraceback.enabled"
    spark.conf.set(key, "true")
    yield spark
    spark.conf.unset(key)


@pytest.mark.spark
@pytest.mark.integration
def test_helpers_raise_the_one_line_error(spark: Any, tmp_path: Path) -> None:
    bad = {"spark.indextables.indexing.typemap.nope": "text"}
    with pytest.raises(OptionError) as caught:
        itp.write(spark.range(2), str(tmp_path / "t"), options=bad)
    assert "\n" not in str(caught.value)
    assert "typemap.nope" in str(caught.value)
    with pytest.raises(NotATableError):
        itp.textsearch(spark, str(tmp_path / "none"), "message", "x")
    itp.write(spark.range(2), str(tmp_path / "t"))
    with pytest.raises(Exception) as late:  # an action outside the helper: PySpark's wrapper
        spark.read.format("indextables").option("textsearch.id", "x").load(
            str(tmp_path / "t")
        ).count()
    assert isinstance(from_spark_error(late.value), FieldKindError)


@pytest.mark.spark
@pytest.mark.integration
def test_hidden_tracebacks_put_our_message_first(hidden_traceback: Any, tmp_path: Path) -> None:
    spark = hidden_traceback
    with pytest.raises(Exception) as caught:
        spark.range(2).write.format("indextables").option(
            "spark.indextables.indexing.typemap.nope", "text"
        ).mode("append").save(str(tmp_path / "t"))
    text = str(caught.value)
    assert "Traceback" not in text
    assert text.index("typemap.nope") < 200
