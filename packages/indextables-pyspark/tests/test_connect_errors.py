"""Short errors on a classic session, and store errors rebuilt from PySpark's wrapper.

``itp.register`` leaves the Python frames out of a data source error (our line
whole, after Spark's one-line prefix); setting
``spark.sql.execution.pyspark.udf.hideTraceback.enabled`` back to false shows
them. ``from_spark_error`` rebuilds a store's error (a missing bucket on moto, a
refused signature on SeaweedFS) carried in the text, as it does the engine's.
The same short errors over Spark Connect are checked in test_connect_server.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import indextables.pyspark as itp
from indextables.storage.errors import AuthenticationError, ContainerNotFoundError, StorageError
from indextables.storage.testing import moto_server, seaweedfs_server

pytestmark = [pytest.mark.spark, pytest.mark.integration]

_HIDE = "spark.sql.execution.pyspark.udf.hideTraceback.enabled"


def _raised(call: Any) -> Exception:
    with pytest.raises(Exception) as caught:
        call()
    return caught.value


@pytest.fixture
def tracebacks_shown(spark: Any) -> Iterator[None]:
    spark.conf.set(_HIDE, "false")
    try:
        yield
    finally:
        itp.register(spark)


def test_a_read_error_is_our_line_without_frames(spark: Any, tmp_path: Path) -> None:
    itp.register(spark)
    missing = str(tmp_path / "none")
    error = _raised(lambda: spark.read.format("indextables").load(missing).collect())
    text = str(error)
    rebuilt = itp.from_spark_error(error)
    assert isinstance(rebuilt, itp.NotATableError)
    assert missing in str(rebuilt)
    first, *rest = text.splitlines()
    assert first.endswith(f"indextables.search.errors.NotATableError: {rebuilt}")
    assert "Traceback" not in text
    assert all(line.strip().startswith("SQLSTATE") for line in rest), text


def test_the_documented_setting_shows_the_frames(
    spark: Any, tmp_path: Path, tracebacks_shown: None
) -> None:
    missing = str(tmp_path / "none")
    error = _raised(lambda: spark.read.format("indextables").load(missing).collect())
    text = str(error)
    assert "Traceback (most recent call last)" in text
    assert 'File "' in text
    assert isinstance(itp.from_spark_error(error), itp.NotATableError)


def test_a_missing_bucket_is_rebuilt_as_the_store_error(spark: Any) -> None:
    with moto_server() as server:
        options = {f"storage.{k}": str(v) for k, v in server.store_options().items()}
        uri = "s3://indextables-no-such-bucket/t"
        reader = spark.read.format("indextables").options(**options)
        read = _raised(lambda: reader.load(uri).collect())
        frame = spark.range(3)
        writer = frame.write.format("indextables").options(**options).mode("append")
        write = _raised(lambda: writer.save(uri + "w"))
    for error in (read, write):
        rebuilt = itp.from_spark_error(error)
        assert isinstance(rebuilt, ContainerNotFoundError), str(error)[:2000]
        assert "indextables-no-such-bucket" in str(rebuilt)
        assert str(rebuilt) in str(error).splitlines()[0]


def test_a_refused_signature_is_rebuilt_as_the_store_error(spark: Any) -> None:
    with seaweedfs_server() as server:
        bucket = server.create_bucket()
        options = {f"storage.{k}": str(v) for k, v in server.store_options().items()}
        secret_keys = [k for k in options if "secret" in k]
        assert secret_keys
        for key in secret_keys:
            options[key] = "not-the-secret"
        reader = spark.read.format("indextables").options(**options)
        error = _raised(lambda: reader.load(f"s3://{bucket}/t").collect())
    rebuilt = itp.from_spark_error(error)
    assert isinstance(rebuilt, StorageError), str(error)[:2000]
    assert isinstance(rebuilt, (AuthenticationError, PermissionError))
    assert "not-the-secret" not in str(error)
    assert str(rebuilt) in str(error).splitlines()[0]


def test_a_store_error_object_is_returned_as_it_is() -> None:
    error = ContainerNotFoundError("s3://b/t key 'x': NoSuchBucket")
    assert itp.from_spark_error(error) is error
    assert itp.from_spark_error(RuntimeError("indextables.storage.errors.Nope: x")) is None
