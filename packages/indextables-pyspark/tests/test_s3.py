"""A table on the moto S3 server, end to end through Spark."""

from __future__ import annotations

from typing import Any

import pytest

import indextables.pyspark as itp
from indextables.storage.testing import moto_server

pytestmark = [pytest.mark.spark, pytest.mark.s3, pytest.mark.integration]


def test_table_on_moto_s3(spark: Any) -> None:
    with moto_server() as server:
        bucket = server.create_bucket()
        uri = f"s3://{bucket}/logs"
        options = {f"storage.{k}": str(v) for k, v in server.store_options().items()}
        df = spark.range(50).selectExpr("id", "concat('line ', id) as message")
        writer = df.write.format("indextables").options(**options).mode("append")
        writer.option("spark.indextables.indexing.typemap.message", "text").save(uri)
        reader = spark.read.format("indextables").options(**options)
        assert reader.load(uri).count() == 50
        assert reader.option("query", "message:42").load(uri).collect()[0].id == 42
        for mode in ("local", "distributed"):
            search_options = {**options, "spark.indextables.search.mode": mode}
            hits = itp.search(spark, uri, "message:42", where="id < 100", options=search_options)
            assert [r.id for r in hits.collect()] == [42]
        keys = [o.key for o in server.open_store(bucket, prefix="logs").list()]
        assert any(k.endswith(".split") for k in keys)
        assert any(k.startswith("_transaction_log/") for k in keys)
