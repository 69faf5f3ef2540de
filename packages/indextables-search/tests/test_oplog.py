"""Each engine operation logs one INFO line with its metrics, splits at DEBUG, no secret.

Oracles: the rows written (pyarrow compute on the plain table) and the split files
the snapshot lists; never the metrics code itself.
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

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from indextables.search import last_metrics, open_table, write_table
from indextables.search.metrics import OperationMetrics
from indextables.storage.errors import ConfigurationError

SECRETS = {
    "spark.indextables.aws.accessKey": "AKIAEXAMPLEACCESS77",
    "spark.indextables.aws.secretKey": "wJalrXUtnFEMIexampleSECRETkey42",
    "spark.indextables.aws.sessionToken": "FwoGZXIvYXdzSESSIONtoken0001",
    "spark.indextables.azure.accountKey": "c2VjcmV0LWF6dXJlLWFjY291bnQta2V5PT0=",
    "spark.indextables.azure.connectionString": (
        "BlobEndpoint=https://acct.blob.core.windows.net;"
        "SharedAccessSignature=sv=2022-11-02&ss=b&sig=SASsignatureVALUE123"
    ),
    "spark.indextables.azure.clientSecret": "azureCLIENTsecret5566",
}
SECRET_VALUES = [*SECRETS.values(), "SASsignatureVALUE123", "PASSWORDinURI99887"]

WRITE = "indextables.search.write.tablewrite"
TABLE = "indextables.search.searchtable"


def _rows(seed: int, n: int) -> pa.Table:
    rng = random.Random(seed)
    days = [f"2024-01-0{d}" for d in range(1, 6)]
    return pa.table(
        {
            "day": [rng.choice(days) for _ in range(n)],
            "level": [rng.choice(["INFO", "WARN", "ERROR"]) for _ in range(n)],
            "message": [f"{rng.choice(['timeout', 'ok', 'retry'])} call {i}" for i in range(n)],
            "latency": [rng.randint(0, 1000) for _ in range(n)],
        }
    )


def _infos(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [
        r for r in caplog.records if r.levelno == logging.INFO and r.name.startswith("indextables")
    ]


def _fields(record: logging.LogRecord) -> dict[str, str]:
    words = record.getMessage().split(" ")
    return dict(w.split("=", 1) for w in words[1:] if "=" in w)


def _no_secret(caplog: pytest.LogCaptureFixture) -> None:
    for record in caplog.records:
        text = record.getMessage()
        for value in SECRET_VALUES:
            assert value not in text, (record.name, text)


@pytest.fixture
def table(tmp_path: Path) -> tuple[str, pa.Table]:
    data = _rows(7, 400)
    uri = str(tmp_path / "logs")
    for part in range(3):  # several commits: several splits per partition
        write_table(uri, data.slice(part * 140, 140), partition_by="day", options=SECRETS)
    return uri, data


def test_write_logs_one_line_with_rows_splits_and_version(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = _rows(1, 300)
    uri = str(tmp_path / "t")
    with caplog.at_level(logging.DEBUG, logger="indextables"):
        result = write_table(uri, data, partition_by="day", options=SECRETS)
    infos = _infos(caplog)
    assert [r.name for r in infos] == [WRITE]
    fields = _fields(infos[0])
    assert infos[0].getMessage().startswith("write ")
    assert fields["version"] == str(result.version)
    assert fields["rows"] == str(data.num_rows)
    days = len(pc.unique(data["day"]))
    assert fields["splits_written"] == str(days)
    sizes = sum(p.stat().st_size for p in Path(uri).rglob("*.split"))
    assert fields["bytes_written"] == str(sizes)
    assert fields["outcome"] == "ok"
    metrics = last_metrics()
    assert isinstance(metrics, OperationMetrics)
    assert (metrics.operation, metrics.rows, metrics.version) == ("write", 300, result.version)
    assert infos[0].indextables == metrics  # type: ignore[attr-defined]
    _no_secret(caplog)


@pytest.mark.parametrize("seed", [3, 11])
def test_search_counts_pruned_and_read_splits_and_rows(
    table: tuple[str, pa.Table], caplog: pytest.LogCaptureFixture, tmp_path: Path, seed: int
) -> None:
    uri, data = table
    rng = random.Random(seed)
    day = rng.choice(sorted(set(data["day"].to_pylist())))
    options = {**SECRETS, "spark.indextables.cache.directoryPath": str(tmp_path / f"c{seed}")}
    snapshot = open_table(uri, options=options)
    total = len(snapshot.files)
    in_day = sum(1 for f in snapshot.files if f.startswith(f"day={day}/"))
    expected = data.filter(pc.and_(pc.equal(data["day"], day), pc.equal(data["level"], "ERROR")))
    for round_ in range(2):  # the second one finds every split in the cache
        caplog.clear()
        with caplog.at_level(logging.DEBUG, logger="indextables"):
            found = snapshot.search(where=f"day = '{day}' AND level = 'ERROR'")
        assert found.num_rows == expected.num_rows
        infos = _infos(caplog)
        assert [r.name for r in infos] == [TABLE]
        fields = _fields(infos[0])
        assert fields["splits_considered"] == str(total)
        assert fields["splits_pruned"] == str(total - in_day)
        assert fields["splits_read"] == str(in_day)
        assert fields["rows"] == str(expected.num_rows)
        hits, misses = (0, in_day) if round_ == 0 else (in_day, 0)
        assert (fields["cache_hits"], fields["cache_misses"]) == (str(hits), str(misses))
        split_bytes = sum(
            (Path(uri) / f).stat().st_size for f in snapshot.files if f.startswith(f"day={day}/")
        )
        assert fields["bytes_fetched"] == str(split_bytes if round_ == 0 else 0)
        debug = [
            r
            for r in caplog.records
            if r.name == TABLE and r.levelno == logging.DEBUG and " split " in r.getMessage()
        ]
        assert len(debug) == in_day
        metrics = snapshot.last_metrics
        assert metrics is not None
        assert metrics.splits_read == in_day
        assert metrics.seconds >= metrics.plan_seconds >= 0
    _no_secret(caplog)


def test_scan_metrics_arrive_when_the_stream_ends(table: tuple[str, pa.Table]) -> None:
    uri, data = table
    snapshot = open_table(uri)
    reader = snapshot.scan(columns=["latency"])
    assert snapshot.last_metrics is None  # nothing read yet
    rows = sum(batch.num_rows for batch in reader)
    assert rows == data.num_rows
    metrics = snapshot.last_metrics
    assert metrics is not None
    assert (metrics.operation, metrics.rows, metrics.splits_read) == (
        "search",
        data.num_rows,
        len(snapshot.files),
    )


def test_count_and_aggregate_log_one_line_each(
    table: tuple[str, pa.Table], caplog: pytest.LogCaptureFixture
) -> None:
    uri, data = table
    snapshot = open_table(uri, options=SECRETS)
    expected = data.filter(pc.greater(data["latency"], 500)).num_rows
    with caplog.at_level(logging.DEBUG, logger="indextables"):
        assert snapshot.count(where="latency > 500") == expected
    infos = _infos(caplog)
    assert [r.name for r in infos] == [TABLE]
    fields = _fields(infos[0])
    assert infos[0].getMessage().startswith("count ")
    assert fields["rows"] == str(expected)
    assert fields["splits_considered"] == str(len(snapshot.files))
    assert int(fields["splits_read"]) == len(snapshot.files) - int(fields["splits_pruned"])
    split_lines = [
        r for r in caplog.records if r.levelno == logging.DEBUG and " split " in r.getMessage()
    ]
    assert len([r for r in split_lines if r.name == TABLE]) == int(fields["splits_read"])

    caplog.clear()
    groups = len(pc.unique(data["level"]))
    with caplog.at_level(logging.INFO, logger="indextables"):
        out = snapshot.aggregate(group_by="level", metrics={"n": "count"})
    assert out.num_rows == groups
    infos = _infos(caplog)
    assert [r.name for r in infos] == [TABLE]
    assert infos[0].getMessage().startswith("aggregate ")
    assert _fields(infos[0])["rows"] == str(groups)
    _no_secret(caplog)


def test_a_failed_operation_logs_its_line_with_the_uri_redacted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    uri = "memory://user:PASSWORDinURI99887@bucket/t?sig=SASsignatureVALUE123"
    with caplog.at_level(logging.DEBUG, logger="indextables"), pytest.raises(ConfigurationError):
        write_table(uri, _rows(2, 10), options=SECRETS)
    infos = _infos(caplog)
    assert [r.name for r in infos] == [WRITE]
    assert _fields(infos[0])["outcome"].startswith("error:")
    assert "memory://***@bucket/t?sig=***" in infos[0].getMessage()
    _no_secret(caplog)


def test_a_signed_uri_is_logged_without_its_signature(caplog: pytest.LogCaptureFixture) -> None:
    uri = "memory://bucket/signed?sig=SASsignatureVALUE123"
    with caplog.at_level(logging.DEBUG, logger="indextables"):
        write_table(uri, _rows(4, 20), options=SECRETS)
        assert open_table(uri, options=SECRETS).count() == 20
    assert [_fields(r)["outcome"] for r in _infos(caplog)] == ["ok", "ok"]
    _no_secret(caplog)


_IMPORT_ALL = textwrap.dedent(
    """
    import importlib, json, logging, pkgutil, sys

    records = []

    class Capture(logging.Handler):
        def emit(self, record):
            records.append((record.name, record.levelname, record.getMessage()))

    logging.basicConfig(level=logging.DEBUG, handlers=[Capture()])
    import indextables.search as root

    names = [m.name for m in pkgutil.walk_packages(root.__path__, "indextables.search.")]
    for name in names:
        importlib.import_module(name)
    loggers = [
        n for n, lg in logging.Logger.manager.loggerDict.items()
        if n.startswith("indextables") and isinstance(lg, logging.Logger) and lg.handlers
    ]
    print(json.dumps({
        "modules": len(names),
        "records": [r for r in records if r[0].startswith("indextables")],
        "handlers": loggers,
        "root": len(logging.getLogger("indextables").handlers),
    }))
    """
)


def test_importing_every_module_logs_nothing_and_installs_no_handler() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_ALL], capture_output=True, text=True, check=True
    )
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["modules"] > 50
    assert found["records"] == []
    assert found["handlers"] == []
    assert found["root"] == 0


def test_merge_splits_logs_one_line(
    table: tuple[str, pa.Table], caplog: pytest.LogCaptureFixture
) -> None:
    from indextables.search.write.merge import merge_table

    uri, data = table
    before = open_table(uri).files
    with caplog.at_level(logging.INFO, logger="indextables"):
        result = merge_table(uri, options=SECRETS)
    infos = _infos(caplog)
    assert [r.name for r in infos] == ["indextables.search.write.merge"]
    fields = _fields(infos[0])
    assert infos[0].getMessage().startswith("merge splits uri=")
    after = open_table(uri).files
    merged = len(set(before) - set(after))
    assert fields["splits_read"] == str(merged)
    assert fields["splits_written"] == str(len(set(after) - set(before)))
    assert fields["status"] == result["status"]
    assert open_table(uri).count() == data.num_rows
    _no_secret(caplog)


def test_a_companion_build_logs_one_line(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    import pyarrow.parquet as pq

    from indextables.search import build_companion

    source = tmp_path / "src"
    source.mkdir()
    data = _rows(5, 120).select(["level", "message", "latency"])
    for i in range(3):
        pq.write_table(data.slice(i * 40, 40), source / f"part-{i}.parquet")
    with caplog.at_level(logging.INFO, logger="indextables"):
        result = build_companion(str(source), str(tmp_path / "idx"), source_format="parquet")
    infos = _infos(caplog)
    assert [r.name for r in infos] == ["indextables.search.companion.sync"]
    assert infos[0].getMessage().startswith("companion build uri=")
    fields = _fields(infos[0])
    assert fields["splits_written"] == str(result.splits_created) != "0"
    assert fields["parquet_files_indexed"] == "3"
    sizes = sum(p.stat().st_size for p in (tmp_path / "idx").rglob("*.split"))
    assert fields["bytes_written"] == str(sizes)
