"""Driver-side logging of the itp.* helpers and SQL commands: one INFO line each.

Oracles: the rows written (a Python model) and the split files the table lists.
"""

from __future__ import annotations

import json
import logging
import random
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import indextables.pyspark as itp
from indextables.search import open_table

SECRETS = {
    "spark.indextables.aws.accessKey": "AKIAEXAMPLEACCESS77",
    "spark.indextables.aws.secretKey": "wJalrXUtnFEMIexampleSECRETkey42",
    "spark.indextables.azure.accountKey": "c2VjcmV0LWF6dXJlLWFjY291bnQta2V5PT0=",
    "spark.indextables.azure.connectionString": (
        "BlobEndpoint=https://acct.blob.core.windows.net;"
        "SharedAccessSignature=sv=2022-11-02&ss=b&sig=SASsignatureVALUE123"
    ),
}
SECRET_VALUES = [*SECRETS.values(), "SASsignatureVALUE123"]


def _infos(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [
        r for r in caplog.records if r.levelno == logging.INFO and r.name.startswith("indextables")
    ]


def _fields(record: logging.LogRecord) -> dict[str, str]:
    return dict(w.split("=", 1) for w in record.getMessage().split(" ") if "=" in w)


def _no_secret(caplog: pytest.LogCaptureFixture) -> None:
    for record in caplog.records:
        for value in SECRET_VALUES:
            assert value not in record.getMessage(), (record.name, record.getMessage())


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    rng = random.Random(47)
    return [
        {"day": rng.choice(["d1", "d2", "d3"]), "level": rng.choice(["INFO", "ERROR"]), "n": i}
        for i in range(120)
    ]


@pytest.fixture
def table(spark: Any, rows: list[dict[str, Any]], tmp_path: Path) -> str:
    path = str(tmp_path / "t")
    frame = spark.createDataFrame(rows, "day string, level string, n long")
    itp.write(frame, path, partition_by=["day"], options=SECRETS)
    itp.write(frame, path, options=SECRETS)  # a second version: more splits per partition
    return path


def test_itp_write_logs_one_line_with_its_version(
    spark: Any, rows: list[dict[str, Any]], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = str(tmp_path / "w")
    frame = spark.createDataFrame(rows, "day string, level string, n long")
    with caplog.at_level(logging.INFO, logger="indextables"):
        result = itp.write(frame, path, partition_by=["day"], options=SECRETS)
    infos = _infos(caplog)
    assert [r.name for r in infos] == ["indextables.pyspark.writing.tablewrite"]
    assert infos[0].getMessage().startswith("write ")
    fields = _fields(infos[0])
    assert fields["version"] == str(result.version)
    assert fields["rows"] == str(len(rows))
    assert fields["splits_written"] == str(len(open_table(path).files))
    metrics = itp.last_metrics()
    assert metrics is not None
    assert (metrics.operation, metrics.version) == ("write", result.version)
    _no_secret(caplog)


def test_count_and_aggregate_log_one_line_each(
    spark: Any, table: str, rows: list[dict[str, Any]], caplog: pytest.LogCaptureFixture
) -> None:
    expected = 2 * sum(1 for r in rows if r["day"] == "d2" and r["level"] == "ERROR")
    files = open_table(table).files
    in_day = sum(1 for f in files if f.startswith("day=d2/"))
    with caplog.at_level(logging.INFO, logger="indextables"):
        found = itp.count(spark, table, where="day = 'd2' AND level = 'ERROR'", options=SECRETS)
    assert found == expected
    infos = _infos(caplog)
    assert [r.name for r in infos] == ["indextables.pyspark.helpers.counting"]
    fields = _fields(infos[0])
    assert fields["rows"] == str(expected)
    assert fields["version"] == str(open_table(table).version)
    assert fields["splits_read"] == str(in_day)
    assert int(fields["splits_considered"]) - int(fields["splits_pruned"]) == in_day
    metrics = itp.last_metrics()
    assert metrics is not None
    assert (metrics.operation, metrics.rows) == ("count", expected)

    caplog.clear()
    with caplog.at_level(logging.INFO, logger="indextables"):
        out = itp.aggregate(spark, table, group_by="level", metrics={"c": "count"})
    groups = {r["level"] for r in rows}
    assert out.count() == len(groups)
    infos = _infos(caplog)
    assert [r.name for r in infos] == ["indextables.pyspark.helpers.aggregation"]
    assert _fields(infos[0])["rows"] == str(len(groups))
    assert _fields(infos[0])["splits_considered"] == str(len(files))
    _no_secret(caplog)


def test_search_logs_one_line_with_the_splits_read(
    spark: Any, table: str, rows: list[dict[str, Any]], caplog: pytest.LogCaptureFixture
) -> None:
    files = open_table(table).files
    in_day = sum(1 for f in files if f.startswith("day=d1/"))
    with caplog.at_level(logging.DEBUG, logger="indextables"):
        frame = itp.search(spark, table, where="day = 'd1'", options=SECRETS)
    assert frame.count() == 2 * sum(1 for r in rows if r["day"] == "d1")
    infos = _infos(caplog)
    assert [r.name for r in infos] == ["indextables.pyspark.read.localsearch"]
    fields = _fields(infos[0])
    assert fields["splits_read"] == str(in_day)
    assert int(fields["splits_considered"]) - int(fields["splits_pruned"]) == in_day
    split_lines = [
        r for r in caplog.records if r.levelno == logging.DEBUG and " split " in r.getMessage()
    ]
    assert len(split_lines) == in_day
    _no_secret(caplog)


@pytest.mark.parametrize(
    ("statement", "name"),
    [
        ("MERGE SPLITS '{path}' TARGET SIZE 100M", "sql merge"),
        ("CHECKPOINT INDEXTABLES '{path}'", "sql checkpoint"),
        ("DESCRIBE INDEXTABLES STATE '{path}'", "sql describe_state"),
    ],
)
def test_sql_commands_log_one_line(
    spark: Any, table: str, statement: str, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="indextables"):
        itp.sql(spark, statement.format(path=table), options=SECRETS).collect()
    infos = _infos(caplog)
    assert len(infos) == 1, [r.getMessage() for r in infos]
    assert infos[0].name == "indextables.pyspark.sqlcommands.commands"
    assert infos[0].getMessage().split(" uri=")[0] == name
    assert _fields(infos[0])["uri"] == table
    _no_secret(caplog)


_IMPORT_ALL = textwrap.dedent(
    """
    import importlib, json, logging, pkgutil

    records = []

    class Capture(logging.Handler):
        def emit(self, record):
            records.append((record.name, record.getMessage()))

    logging.basicConfig(level=logging.DEBUG, handlers=[Capture()])
    import indextables.pyspark as root

    names = [m.name for m in pkgutil.walk_packages(root.__path__, "indextables.pyspark.")]
    for name in names:
        importlib.import_module(name)
    with_handlers = [
        n for n, lg in logging.Logger.manager.loggerDict.items()
        if n.startswith("indextables") and isinstance(lg, logging.Logger) and lg.handlers
    ]
    print(json.dumps({
        "modules": len(names),
        "records": [r for r in records if r[0].startswith("indextables")],
        "handlers": with_handlers,
    }))
    """
)


def test_importing_every_module_logs_nothing_and_installs_no_handler() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_ALL], capture_output=True, text=True, check=True
    )
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["modules"] > 20
    assert found["records"] == []
    assert found["handlers"] == []
