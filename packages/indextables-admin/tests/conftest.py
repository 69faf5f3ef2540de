"""Shared fixtures: golden table copies, a CLI runner, and S3 tables on a real moto server."""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from indextables.admin.cli import cli
from indextables.storage.testing.pytest_plugin import moto_server  # noqa: F401

# A private split cache directory per session (shared with the engine's tests).
sys.path.append(str(Path(__file__).resolve().parents[2] / "indextables-search/tests"))
import privatecache

# The golden tables: the repository's own copy (testdata/golden, see its NOTICE).
GOLDEN = Path(__file__).resolve().parents[3] / "testdata/golden/indextables_spark_v0.5.4"

GOLDEN_NAMES = sorted(p.name for p in GOLDEN.iterdir() if p.is_dir()) if GOLDEN.is_dir() else []


def pytest_configure(config: Any) -> None:
    """A private split cache directory for the session (never the user's default)."""
    privatecache.start()


def pytest_unconfigure(config: Any) -> None:
    privatecache.stop()


@dataclass(frozen=True, slots=True)
class Run:
    """What one command run produced."""

    exit_code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)


def run_cli(*args: str, input: str | None = None) -> Run:
    """Run the command line in-process (click's runner), stdout and stderr apart."""
    result = CliRunner().invoke(cli, list(args), input=input)
    return Run(result.exit_code, result.stdout, result.stderr)


def copy_golden(name: str, destination: Path) -> Path:
    """Copy a golden table (never write into the originals).

    The copy gets fresh modification times, like a table just written: with the
    originals' times, how many old manifests purge may delete would depend on
    when the tests run.
    """
    target = destination / name
    shutil.copytree(GOLDEN / name, target, copy_function=shutil.copyfile)
    return target


def expected_of(name: str) -> dict[str, Any]:
    """The independent oracle of a golden table."""
    loaded: dict[str, Any] = json.loads((GOLDEN / f"{name}.expected.json").read_text())
    return loaded


@pytest.fixture
def cli_run() -> Any:
    """The in-process runner: ``cli_run(*args, input=None) -> Run``."""
    return run_cli


@pytest.fixture
def golden_expected(golden_name: str) -> dict[str, Any]:
    """The expected.json of each golden table."""
    return expected_of(golden_name)


@pytest.fixture(params=GOLDEN_NAMES or ["<golden tables missing>"])
def golden_name(request: pytest.FixtureRequest) -> str:
    """Each golden table's name (fails, never skips, when the tables are missing)."""
    name: str = request.param
    assert GOLDEN.is_dir(), f"golden tables not found at {GOLDEN}"
    return name


@pytest.fixture
def golden_copy(golden_name: str, tmp_path: Path) -> Path:
    """A private copy of each golden table."""
    return copy_golden(golden_name, tmp_path)


@pytest.fixture
def partitioned_table(tmp_path: Path) -> Path:
    """A private copy of the partitioned golden table (date=2024-01-01..03)."""
    return copy_golden("04_partitioned", tmp_path)


@pytest.fixture
def partitioned_expected() -> dict[str, Any]:
    """The expected.json of the partitioned golden table."""
    return expected_of("04_partitioned")


@pytest.fixture
def unpartitioned_table(tmp_path: Path) -> Path:
    """A private copy of an unpartitioned golden table (five appends)."""
    return copy_golden("02_five_appends", tmp_path)


@pytest.fixture
def s3_table(moto_server: Any) -> tuple[str, list[str]]:  # noqa: F811
    """The partitioned golden table uploaded to a fresh moto bucket.

    Yields the table URI and the ``-S key=value`` arguments that reach it.
    """
    bucket = moto_server.create_bucket()
    client = moto_server.client()
    source = GOLDEN / "04_partitioned"
    for path in sorted(source.rglob("*")):
        if path.is_file():
            key = f"tables/part/{path.relative_to(source).as_posix()}"
            client.put_object(Bucket=bucket, Key=key, Body=path.read_bytes())
    args: list[str] = []
    for key, value in moto_server.store_options().items():
        args += ["-S", f"{key}={value}"]
    return f"s3://{bucket}/tables/part", args
