"""Table paths resolved where they are given (tablepath): relative local paths only."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from indextables.pyspark.errors import OptionError
from indextables.pyspark.tablepath import absolute_table_path, planning_table_path


class _System:
    def __init__(self, directory: str) -> None:
        self.directory = directory

    def getProperty(self, key: str) -> str:
        assert key == "user.dir"
        return self.directory


class _Session:
    """What a classic session exposes of its driver JVM: ``_sc._jvm.java.lang.System``."""

    def __init__(self, directory: str) -> None:
        system = _System(directory)
        lang = type("lang", (), {"System": system})
        java = type("java", (), {"lang": lang})
        jvm = type("jvm", (), {"java": java})
        self._sc = type("sc", (), {"_jvm": jvm})


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("logs", "logs"),
        ("./logs/", "logs"),
        ("a/b/../logs", "a/logs"),
        ("logs dir/x%20y", "logs dir/x%20y"),
    ],
)
def test_a_relative_path_is_resolved_against_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: str, expected: str
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SPARK_JOB_ARTIFACT_UUID", raising=False)
    assert absolute_table_path(given) == f"{tmp_path}/{expected}"
    assert planning_table_path(given) == f"{tmp_path}/{expected}"


def test_a_session_resolves_against_its_driver_jvm_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Spark's file sources and the data source's planning worker use the JVM's directory,
    # which a later os.chdir of the Python driver does not change.
    monkeypatch.chdir(tmp_path)
    jvm_dir = str(tmp_path / "where the driver started")
    assert absolute_table_path("logs", _Session(jvm_dir)) == f"{jvm_dir}/logs"
    assert absolute_table_path("/abs/logs", _Session(jvm_dir)) == "/abs/logs"
    assert absolute_table_path("logs", object()) == f"{tmp_path}/logs"  # no JVM: this process


@pytest.mark.parametrize(
    "given",
    [
        "/data/logs",
        "s3://bucket/logs",
        "s3a://bucket/logs",
        "abfss://c@a.dfs.core.windows.net/logs",
        "memory://name/logs",
        "file:///data/logs",
        "file:/data/logs",
    ],
)
def test_uris_and_absolute_paths_are_kept_as_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: str
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SPARK_JOB_ARTIFACT_UUID", "a-connect-session")
    assert absolute_table_path(given) == given
    assert planning_table_path(given) == given


def test_home_is_expanded_where_the_path_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/someone")
    assert absolute_table_path("~/logs") == "/home/someone/logs"


def test_a_relative_path_in_a_connect_sessions_worker_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # a session's artifact directory, not the driver's
    monkeypatch.setenv("SPARK_JOB_ARTIFACT_UUID", "3f2a9c1e-session")
    with pytest.raises(OptionError, match=r"'logs' is relative.*Spark Connect") as refused:
        planning_table_path("logs")
    assert "absolute path" in str(refused.value)
    monkeypatch.setenv("SPARK_JOB_ARTIFACT_UUID", "default")  # a classic session's worker
    assert planning_table_path("logs") == f"{tmp_path}/logs"
    assert os.listdir(tmp_path) == []  # resolving creates nothing


def test_a_stopped_sessions_jvm_falls_back_to_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Broken:
        def getProperty(self, key: str) -> Any:
            raise RuntimeError("the gateway is closed")

    session = _Session("/unused")
    session._sc._jvm.java.lang.System = Broken()  # type: ignore[attr-defined]
    monkeypatch.chdir(tmp_path)
    assert absolute_table_path("logs", session) == f"{tmp_path}/logs"


def test_the_plans_shipped_to_tasks_carry_the_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What the data source's planning (on the driver) pickles for the executors, which
    # run in other working directories.
    import pickle

    import pyarrow as pa

    from indextables.pyspark.read.datasource import IndexTablesDataSource
    from indextables.search.write.tablewrite import write_table

    write_table(str(tmp_path / "t"), pa.table({"id": [1, 2, 3]}))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SPARK_JOB_ARTIFACT_UUID", raising=False)
    source = IndexTablesDataSource({"path": "t"})
    schema = source.schema()
    reader = pickle.dumps(source.reader(schema))
    writer = pickle.dumps(source.writer(schema, overwrite=False))
    elsewhere = tmp_path / "executor"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert pickle.loads(reader).view.uri == str(tmp_path / "t")
    assert pickle.loads(writer).plan.table.uri == str(tmp_path / "t")
