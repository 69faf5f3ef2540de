"""The rest of the Connect suites over a separate Spark Connect server (slow lane).

MERGE SPLITS, DELETE FROM, replaceWhere, PURGE DELETES, merge-on-write, CHECKPOINT,
PURGE, DESCRIBE STATE and TRANSACTION LOG,
streaming from and into a table, companion builds; the fast subset is
test_connect_server.py.
Same arrangement: one server for the module, one client process, each answer
compared with the classic session's on its own copy of the table and a model.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import connectcases
from connectserver import ConnectServer, connect_server

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.slow]

CHECKS = ["merge", "mutations", "onwrite", "maintenance", "stream", "companion"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: Any) -> Iterator[ConnectServer]:
    """Started, not yet waited for: the tables are written meanwhile."""
    with connect_server(tmp_path_factory.mktemp("connect-server"), wait=False) as started:
        yield started


@pytest.fixture(scope="module")
def answered(spark: Any, server: ConnectServer, tmp_path_factory: Any) -> tuple[Any, Any]:
    """(classic, connect) answers of every step the module checks."""
    root = tmp_path_factory.mktemp("connect-tables")
    classic_paths, connect_paths = connectcases.build_tables(spark, root)
    steps = connectcases.steps_for(CHECKS)
    connect = connectcases.run_client(server.ready(), connect_paths, steps, root)
    classic = connectcases.classic_answers(spark, classic_paths, steps)
    print(f"seconds per step: Connect {connect['seconds']}, classic {classic['seconds']}")
    return classic, connect


@pytest.mark.parametrize("name", CHECKS)
def test_over_a_connect_server_equals_classic(name: str, answered: tuple[Any, Any]) -> None:
    connectcases.check(name, *answered)
