"""Unknown option keys are refused, naming the closest known key; credentials never shown."""

from __future__ import annotations

import logging
import traceback
from typing import Any

import pytest

from indextables.pyspark.errors import OptionError
from indextables.search.options import check_option_keys

SECRET = "c2VjcmV0UFc9PQ=="


@pytest.mark.parametrize(
    ("key", "closest"),
    [
        ("querry", "query"),
        ("QUERRY", "query"),
        ("textsearh.message", "textsearch.<column>"),
        ("versionAsOff", "versionAsOf"),
        ("spark.indextables.indexwritr.heapsize", "spark.indextables.indexWriter.heapSize"),
        ("spark.indextables.cache.maxsiz", "spark.indextables.cache.maxSize"),
        ("storage.regoin", "storage.region"),
    ],
)
def test_an_unknown_key_is_refused_naming_the_closest(key: str, closest: str) -> None:
    with pytest.raises(OptionError) as caught:
        check_option_keys({key: "x", "path": "/t"})
    message = str(caught.value)
    assert key in message
    assert closest in message


@pytest.mark.parametrize(
    "options",
    [
        {"path": "/t", "paths": "[]", "__partition_columns": "[]"},
        {"query": "a:b", "textSearch.Message": "x", "fieldMatch.level": "x"},
        {"versionAsOf": "1", "timestampAsOf": "1", "startingVersion": "0", "writerId": "w"},
        {"partitionBy": "d", "checkpointLocation": "/c"},
        {"storage.region": "x", "storage.endpoint_url": "http://h", "storage.account_key": "k"},
        {"spark.indextables.indexing.typemap.Title": "text"},
        {"spark.indextables.indexing.tokenizer.title": "raw"},
        {"spark.indextables.mergeOnWrite.enabled": "true"},
        {"spark.indextables.aws.region": "x", "spark.indextables.azure.accountName": "a"},
        {"spark.indextables.read.defaultLimit": "5"},  # the reference's, accepted and ignored
        {"spark.indextables.indexWriter.heapSize": "64M"},
        {"spark.indextables.search.mode": "auto"},
    ],
)
def test_known_keys_are_accepted(options: dict[str, str]) -> None:
    check_option_keys(options)


@pytest.mark.parametrize(
    "key",
    [
        f"storage.secret_access_key:{SECRET}",
        f"storage.secret_access_key {SECRET}",
        f"spark.indextables.aws.secretKey:{SECRET}",
        f"ACCOUNT_KEY:{SECRET}",
        f"sas_token: {SECRET}",
    ],
)
def test_a_typo_key_carrying_a_secret_is_refused_without_it(key: str) -> None:
    with pytest.raises(OptionError) as caught:
        check_option_keys({key: "x"})
    shown = "".join(traceback.format_exception(caught.value))
    assert SECRET not in shown
    assert "c2VjcmV0UFc9" not in shown


@pytest.mark.spark
@pytest.mark.integration
def test_a_misspelt_search_option_fails_the_read(spark: Any, logs: str) -> None:
    reader = spark.read.format("indextables").option("querry", "message:timeout")
    with pytest.raises(Exception) as caught:
        reader.load(logs).count()
    assert "querry" in str(caught.value)
    assert "query" in str(caught.value).replace("querry", "")


@pytest.mark.spark
@pytest.mark.integration
def test_a_misspelt_option_fails_itp_helpers_and_writes(
    spark: Any, logs: str, tmp_path: Any
) -> None:
    import indextables.pyspark as itp

    with pytest.raises(OptionError, match="querry"):
        itp.count(spark, logs, options={"querry": "message:timeout"})
    with pytest.raises(OptionError, match="querry"):
        itp.sql(spark, f"DESCRIBE INDEXTABLES STATE '{logs}'", options={"querry": "x"})
    df = spark.createDataFrame([(1,)], "id INT")
    with pytest.raises(Exception, match=r"(?i)partitionBi"):
        df.write.format("indextables").option("partitionBi", "id").mode("append").save(
            str(tmp_path / "w")
        )


@pytest.mark.spark
@pytest.mark.integration
def test_no_credential_in_describe_environment_or_errors(
    spark: Any, logs: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Attack: endpoint passwords and typo'd credentials through conf, options and itp."""
    import indextables.pyspark as itp

    caplog.set_level(logging.DEBUG)
    url = f"http://user:{SECRET}@127.0.0.1:1"
    options = {
        "storage.endpoint_url": url,
        "spark.indextables.aws.endpoint": f"ht!tp://user:{SECRET}@host",
    }
    spark.conf.set("spark.indextables.aws.endpoint", url)
    spark.conf.set("spark.indextables.s3.endpoint", f"ht!tp://user:{SECRET}@host")
    try:
        rows = itp.sql(spark, "DESCRIBE INDEXTABLES ENVIRONMENT", options=options).collect()
        texts = [str(row) for row in rows]
        assert any("127.0.0.1:1" in text for text in texts)  # the endpoint shows, redacted
        failures: list[str] = []
        for form in (
            {"storage.endpoint_url": f"ht!tp://user:{SECRET}@host"},
            {"spark.indextables.aws.endpoint": f"ht!tp://user:{SECRET}@host"},
            {f"storage.secret_access_key:{SECRET}": "x"},
            {f"storage.secret_access_key {SECRET}": "x"},
        ):
            for call in (
                lambda o=form: itp.count(spark, "s3://bucket/t", options=o),
                lambda o=form: (
                    spark.read.format("indextables").options(**o).load("s3://bucket/t").count()
                ),
            ):
                try:
                    call()
                except Exception as error:  # the refusal itself is the point
                    failures.append("".join(traceback.format_exception(error)))
                else:
                    raise AssertionError(f"{form} was accepted")
        texts += failures
    finally:
        spark.conf.unset("spark.indextables.aws.endpoint")
        spark.conf.unset("spark.indextables.s3.endpoint")
    # py4j's own DEBUG log echoes every JVM command the test itself sends
    # (``spark.conf.set`` above): the user's call, not this package's output.
    texts += [r.getMessage() for r in caplog.records if not r.name.startswith("py4j")]
    for text in texts:
        assert SECRET not in text, text
        assert "c2VjcmV0UFc9" not in text, text
