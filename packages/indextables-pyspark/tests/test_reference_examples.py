"""The reference's documented example settings, used as a migrating pipeline would.

The settings are the examples of the reference's README and configuration,
field-indexing and SQL-command references (indextables_spark, docs/reference).
They are written and read with ``df.write`` / ``spark.read`` and the ``itp.*``
helpers, and the session settings (``spark.conf``) reach the helpers.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import indextables.pyspark as itp
from indextables.pyspark.errors import FieldKindError

pytestmark = [pytest.mark.spark, pytest.mark.integration]

P = "spark.indextables."
WRITE_EXAMPLES = {
    # README: declare "message" as full-text searchable.
    P + "indexing.typemap.message": "text",
    # Configuration reference, index writer and token lengths.
    P + "indexWriter.heapSize": "100M",
    P + "indexWriter.batchSize": "10000",
    P + "indexWriter.maxBatchBufferSize": "90M",
    P + "indexWriter.threads": "2",
    P + "splitConversion.maxParallelism": "2",
    P + "checkpoint.enabled": "true",
    P + "checkpoint.interval": "10",
    P + "transaction.compression.enabled": "true",
    P + "transaction.retry.maxAttempts": "10",
    P + "transaction.retry.baseDelayMs": "100",
    P + "transaction.retry.maxDelayMs": "5000",
    P + "state.format": "avro",
    P + "state.compression": "zstd",
    P + "state.compressionLevel": "3",
    P + "state.entriesPerManifest": "50000",
    P + "state.compaction.tombstoneThreshold": "0.10",
    P + "state.retention.versions": "2",
    P + "state.retention.hours": "168",
    P + "stats.truncation.enabled": "true",
    P + "stats.truncation.maxLength": "32",
    P + "indexing.text.maxTokenLength": "255",
    P + "dataSkippingNumIndexedCols": "32",
    P + "write.optimizeWrite.enabled": "false",
    P + "write.optimizeWrite.targetSplitSize": "1G",
    P + "mergeOnWrite.enabled": "false",
    P + "mergeOnWrite.targetSize": "4G",
    P + "mergeOnWrite.async.enabled": "true",
    P + "mergeOnWrite.batchCpuFraction": "0.167",
    P + "mergeOnWrite.maxConcurrentBatches": "3",
    P + "purgeOnWrite.enabled": "false",
    P + "purgeOnWrite.splitRetentionHours": "168",
    P + "purgeOnWrite.txLogRetentionHours": "720",
    P + "indexWriter.tempDirectoryPath": "/local_disk0/temp",
    # Field-indexing reference.
    P + "indexing.typemap.text": "title,content",
    P + "indexing.typemap.string": "status,category",
    P + "indexing.indexrecordoption.position": "title,content",
    P + "indexing.indexrecordoption.basic": "logs",
    P + "indexing.tokenizer.en_stem": "title,content",
    P + "indexing.tokenLength.255": "content",
    P + "indexing.tokenLength.legacy": "logs",
    P + "indexing.fastfields": "score,value,timestamp",
    P + "indexing.json.mode": "full",
}
READ_EXAMPLES = {
    P + "read.splitsPerTask": "auto",
    P + "read.maxSplitsPerTask": "8",
    P + "read.defaultLimit": "250",
    P + "read.batchOptimization.enabled": "true",
    P + "read.batchOptimization.profile": "balanced",
    P + "read.batchOptimization.maxRangeSize": "16M",
    P + "read.adaptiveTuning.enabled": "true",
    P + "cache.disk.enabled": "false",
    P + "filter.stringStartsWith.pushdown": "false",
    P + "partitionPruning.filterCacheEnabled": "true",
    P + "transaction.cache.ttl.ms": "300000",
}


def _frame(spark: Any, start: int) -> Any:
    rows = [
        (
            i,
            f"critical infrastructure alert {i}" if i % 3 == 0 else f"routine message {i}",
            f"Title {i}",
            "running jumps" if i % 2 else "quiet",
            f"log line {i}",
            "active" if i % 2 else "idle",
            "technology",
            float(i),
            i * 2,
            i * 1000,
            {"host": f"h{i % 2}"},
        )
        for i in range(start, start + 12)
    ]
    schema = (
        "id long, message string, title string, content string, logs string, status string, "
        "category string, score double, value long, timestamp long, metadata struct<host:string>"
    )
    return spark.createDataFrame(rows, schema)


@pytest.fixture
def clean_session_conf(spark: Any) -> Iterator[Any]:
    yield spark
    for key in list(spark.conf.getAll):
        if key.lower().startswith(P):
            spark.conf.unset(key)


def test_documented_settings_write_merge_and_read(spark: Any, tmp_path: Path) -> None:
    path = str(tmp_path / "table")
    for start in (0, 12):
        _frame(spark, start).write.format("indextables").mode("append").options(
            **WRITE_EXAMPLES
        ).save(path)
    # README: merge, then read and search.
    merged = itp.sql(spark, f"MERGE SPLITS '{path}' TARGET SIZE 4G").first().asDict(recursive=True)
    assert merged["metrics"]["status"] == "success"
    df = spark.read.format("indextables").options(**READ_EXAMPLES).load(path)
    assert df.count() == 24
    found = (
        spark.read.format("indextables")
        .options(**READ_EXAMPLES)
        .option("textsearch.message", "critical AND infrastructure")
        .load(path)
        .where("category = 'technology'")
    )
    assert sorted(r.id for r in found.collect()) == list(range(0, 24, 3))
    stemmed = itp.textsearch(spark, path, "content", "jump")  # en_stem: jumps -> jump
    assert stemmed.count() == 12
    exact = itp.fieldmatch(spark, path, "status", "active")
    assert exact.count() == 12


def test_session_settings_reach_every_helper(clean_session_conf: Any, tmp_path: Path) -> None:
    spark = clean_session_conf
    path = str(tmp_path / "table")
    spark.conf.set(P + "indexing.typemap.message", "text")
    itp.write(_frame(spark, 0), path)
    # The session's typemap made "message" a text field: textsearch accepts it.
    assert itp.textsearch(spark, path, "message", "critical").count() == 4
    assert itp.search(spark, path, "message:routine").count() == 8
    spark.conf.set(P + "read.splitsPerTask", "not-a-number")
    with pytest.raises(Exception, match=r"read\.splitspertask"):
        itp.textsearch(spark, path, "message", "critical").count()
    # An explicit option wins over the session's setting, whatever its case.
    explicit = {"SPARK.INDEXTABLES.READ.SPLITSPERTASK": "2"}
    assert itp.textsearch(spark, path, "message", "critical", **explicit).count() == 4
    spark.conf.unset(P + "read.splitsPerTask")
    spark.conf.set(P + "merge.heapSize", "1M")
    with pytest.raises(Exception, match=r"merge\.heapsize"):
        itp.sql(spark, f"MERGE SPLITS '{path}'")
    spark.conf.unset(P + "merge.heapSize")


def test_without_the_session_setting_message_stays_a_string(
    clean_session_conf: Any, tmp_path: Path
) -> None:
    spark = clean_session_conf
    path = str(tmp_path / "table")
    itp.write(_frame(spark, 0), path)
    with pytest.raises(FieldKindError):
        itp.search(spark, path, textsearch={"message": "critical"}).count()


def test_session_settings_read_in_few_calls_equal_the_public_reading(
    clean_session_conf: Any,
) -> None:
    from indextables.pyspark import sessionconf

    spark = clean_session_conf
    spark.conf.set(P + "aws.region", "eu-west-1")
    spark.conf.set("SPARK.IndexTables.Read.SplitsPerTask", "auto")
    spark.conf.set(P + "azure.connectionString", "a=b;c=d,e é ✓")
    public = {k: str(v) for k, v in spark.conf.getAll.items() if k.lower().startswith(P)}
    fast = sessionconf._settings_by_name(spark)
    assert fast == public
    assert sessionconf.session_settings(spark) == public
    assert len(public) == 3
    assert sessionconf._settings_by_name(object()) is None  # type: ignore[arg-type]
