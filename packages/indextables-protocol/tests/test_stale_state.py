"""A state created after a state of a higher version does not stand for its own version.

The v0.5.4 reference's PURGE, DROP PARTITIONS and TRUNCATE TIME TRAVEL wrote
``state-v0`` holding the table of a later version (13_after_purge has one;
so do the reference fixtures 15_drop_then_purge and 17_truncated_log, which
are not kept here). These tests build that log shape with our own writer.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from indextables.protocol import AddAction, Table, create_table, open_table
from indextables.protocol.actions import encode_action_object
from indextables.protocol.logreplay import version_key


def _split(root: Path, name: str) -> AddAction:
    (root / name).write_bytes(b"s" * 64)
    return AddAction(name, {}, 64, 1, True)


def _write_state(table: Table, version: int, *, metadata: str | None = None) -> None:
    """A state at ``version`` holding the current table (as the reference's stale state-v0)."""
    time.sleep(0.01)  # created strictly after every state already written
    table.reader.state_format.write_state(
        table.reader.store,
        version=version,
        base=None,
        adds=table.snapshot().files,
        removes=(),
        schema_registry={},
        metadata=metadata,
    )
    table.invalidate_cache()


def _three_versions(root: Path, schema: dict[str, Any]) -> Table:
    table = create_table(str(root), schema=schema)
    table.commit(adds=[_split(root, "a.split")])
    table.checkpoint()
    table.commit(adds=[_split(root, "b.split")])
    table.checkpoint()
    return table


def _paths(table: Table, version: int) -> set[str]:
    return {f.path for f in table.snapshot(version).files}


def test_stale_state_v0_is_passed_over_for_version_0(
    tmp_path: Path, schema: dict[str, Any]
) -> None:
    root = tmp_path / "t"
    _write_state(_three_versions(root, schema), 0)
    table = open_table(str(root))
    assert table.snapshot(0).files == ()
    assert table.snapshot(0).state_version is None
    assert _paths(table, 1) == {"a.split"}
    assert _paths(table, 2) == {"a.split", "b.split"}
    changes = table.changes_since(0)
    assert {f.path for f in changes.adds} == {"a.split", "b.split"}
    assert changes.removes == ()
    assert table.snapshot().state_version == 2  # the current state is unaffected


def test_stale_state_is_kept_when_it_is_the_only_way_to_its_version(
    tmp_path: Path, schema: dict[str, Any]
) -> None:
    root = tmp_path / "t"
    table = _three_versions(root, schema)
    metadata = json.dumps(encode_action_object(table.snapshot().metadata))
    _write_state(table, 0, metadata=metadata)
    (root / version_key(0)).unlink()
    reopened = open_table(str(root))
    assert _paths(reopened, 0) == {"a.split", "b.split"}  # nothing else can rebuild version 0
    assert _paths(reopened, 2) == {"a.split", "b.split"}


def test_states_written_out_of_order_still_give_each_version(
    tmp_path: Path, schema: dict[str, Any]
) -> None:
    root = tmp_path / "t"
    table = create_table(str(root), schema=schema)
    table.commit(adds=[_split(root, "a.split")])
    table.commit(adds=[_split(root, "b.split")])
    table.commit(removes=["a.split"])
    _write_state(table, 3)
    # state-v1 written last (a writer with a slow clock, or a late checkpoint)
    time.sleep(0.01)
    table.reader.state_format.write_state(
        table.reader.store,
        version=1,
        base=None,
        adds=table.snapshot(1).files,
        removes=(),
        schema_registry={},
        metadata=None,
    )
    reopened = open_table(str(root))
    assert [_paths(reopened, v) for v in range(4)] == [
        set(),
        {"a.split"},
        {"a.split", "b.split"},
        {"b.split"},
    ]
