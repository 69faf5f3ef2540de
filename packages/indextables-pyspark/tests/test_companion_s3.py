"""A companion whose source and index sit on an S3 server (SeaweedFS: SigV4 signatures
checked, conditional writes), built through ``itp.sql`` and read through Spark with the
endpoint and credentials as options only."""

from __future__ import annotations

import io
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import indextables.pyspark as itp
from indextables.storage.testing import seaweedfs_server

pytestmark = [pytest.mark.spark, pytest.mark.s3, pytest.mark.integration]


def test_companion_on_s3_through_spark(spark: Any) -> None:
    with seaweedfs_server() as server:
        bucket = server.create_bucket()
        store = server.open_store(bucket)
        messages = ["disk full", "", None, "zürich disk", "ok"]
        tables = {}
        for day in ("2024-01-01", "2024-01-02"):
            first = 0 if day.endswith("1") else 50
            table = pa.table(
                {
                    "id": pa.array(range(first, first + 50), pa.int64()),
                    "message": [messages[i % len(messages)] for i in range(first, first + 50)],
                }
            )
            sink = io.BytesIO()
            pq.write_table(table, sink, write_page_index=True)
            store.put(f"logs/day={day}/part-0.parquet", sink.getvalue())
            tables[day] = table
        options = {f"storage.{k}": str(v) for k, v in server.store_options().items()}
        source, index = f"s3://{bucket}/logs", f"s3://{bucket}/logs_index"
        result = itp.sql(
            spark,
            f"BUILD INDEXTABLES COMPANION FOR PARQUET '{source}' "
            f"INDEXING MODES ('message':'text') AT LOCATION '{index}'",
            options=options,
        ).first()
        assert (result.status, result.parquet_files_indexed) == ("success", 2)
        expected = sorted(
            (row["id"], row["message"], day)
            for day, table in tables.items()
            for row in table.to_pylist()
            if row["message"] is not None and "disk" in row["message"].split()
        )

        def reader() -> Any:  # DataFrameReader.option changes the reader it is called on
            return spark.read.format("indextables").options(**options)

        found = reader().option("query", "message:disk").load(index)
        assert sorted(tuple(r) for r in found.select("id", "message", "day").collect()) == expected
        assert reader().load(index).count() == 100
        hits = itp.search(spark, index, "message:disk", where="day = '2024-01-02'", options=options)
        assert sorted(r.id for r in hits.collect()) == [e[0] for e in expected if e[0] >= 50]


def test_a_source_with_its_own_credentials_through_spark(spark: Any) -> None:
    """The index on one SeaweedFS, the source on another with other SigV4 credentials:
    the reference's companion.parquet.aws.* keys reach the build and every read."""
    from pyspark.errors import PythonException

    with seaweedfs_server() as index_server, seaweedfs_server() as source_server:
        index_bucket, source_bucket = index_server.create_bucket(), source_server.create_bucket()
        table = pa.table(
            {
                "id": pa.array(range(40), pa.int64()),
                "message": [["disk full", "zürich", None, "ok disk"][i % 4] for i in range(40)],
            }
        )
        sink = io.BytesIO()
        pq.write_table(table, sink, write_page_index=True)
        source_server.open_store(source_bucket).put("src/part-0.parquet", sink.getvalue())
        index_only = {f"storage.{k}": str(v) for k, v in index_server.store_options().items()}
        prefix = "spark.indextables.companion.parquet.aws."
        options = {
            **index_only,
            prefix + "endpoint": source_server.endpoint_url,
            prefix + "region": source_server.region,
            prefix + "accessKey": source_server.access_key,
            prefix + "secretKey": source_server.secret_key,
        }
        source, index = f"s3://{source_bucket}/src", f"s3://{index_bucket}/src_index"
        result = itp.sql(
            spark,
            f"BUILD INDEXTABLES COMPANION FOR PARQUET '{source}' "
            f"INDEXING MODES ('message':'text') AT LOCATION '{index}'",
            options=options,
        ).first()
        assert (result.status, result.parquet_files_indexed) == ("success", 1)
        expected = sorted(i for i in range(40) if i % 4 in (0, 3))
        found = spark.read.format("indextables").options(**options)
        found = found.option("query", "message:disk").load(index)
        assert sorted(r.id for r in found.select("id").collect()) == expected
        hits = itp.search(spark, index, "message:disk", options=options)
        assert sorted(r.id for r in hits.collect()) == expected
        # Without them, the source is looked for with the index's keys: refused.
        without = spark.read.format("indextables").options(**index_only)
        without = without.option("query", "message:disk").load(index)
        with pytest.raises(PythonException, match="CompanionSourceError") as raised:
            without.collect()
        assert source_server.secret_key not in str(raised.value)
        assert index_server.secret_key not in str(raised.value)
