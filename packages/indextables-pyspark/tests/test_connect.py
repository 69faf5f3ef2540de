"""The distributed helpers and commands over PySpark's in-process local Connect server.

The client (``connectrun.py``, in a subprocess) starts the local server with
``SparkSession.builder.remote("local[2]")`` and runs ``itp.count``/``itp.aggregate``
forced distributed (``localMaxSplits=1``), MERGE SPLITS, DELETE FROM (WHERE, QUERY),
a ``replaceWhere`` overwrite (and one refused), MERGE SPLITS PURGE DELETES, ``itp.write`` with
merge-on-write and DESCRIBE INDEXTABLES ENVIRONMENT; each answer must equal the
classic session's on its own copy of the same table, and the classic one a Python
model of the rows (``connectcases.py``). The same steps on a separate
``start-connect-server.sh`` server: test_connect_server.py.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import connectcases

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.slow]

CHECKS = ["counts", "aggregate", "merge", "mutations", "onwrite", "environment"]


@pytest.fixture(scope="module")
def answered(spark: Any, tmp_path_factory: Any) -> tuple[Any, Any]:
    """(classic, connect) answers of every step the module checks (one server start)."""
    root = tmp_path_factory.mktemp("connect-local")
    classic_paths, connect_paths = connectcases.build_tables(spark, root)
    steps = connectcases.steps_for(CHECKS)
    connect = connectcases.run_client("local[2]", connect_paths, steps, root)
    classic = connectcases.classic_answers(spark, classic_paths, steps)
    return classic, connect


@pytest.mark.parametrize("name", CHECKS)
def test_over_the_local_connect_server_equals_classic(name: str, answered: tuple[Any, Any]) -> None:
    connectcases.check(name, *answered)
