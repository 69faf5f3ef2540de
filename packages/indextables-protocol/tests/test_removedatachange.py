"""The ``dataChange`` flag of committed removes, read from the version file's JSON text.

A MERGE SPLITS or purge rewrite (Delta's OPTIMIZE) changes no rows: its adds and its
removes both carry ``dataChange=false``. Every other removal (a path, a file entry, a
remove action with ``dataChange=true``, an overwrite) carries ``dataChange=true``.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from indextables.protocol import AddAction, TableConfig, create_table
from indextables.protocol.actions import RemoveAction


def _split(root: Path, name: str) -> AddAction:
    (root / name).write_bytes(b"x" * 10)
    return AddAction(name, {}, 10, 1, True, num_records=1)


def _json_actions(root: Path, version: int) -> list[dict[str, Any]]:
    """The version file's lines as plain JSON (the table writes it uncompressed)."""
    text = (root / "_transaction_log" / f"{version:020d}.json").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _flags(root: Path, version: int, kind: str) -> dict[str, bool]:
    lines = _json_actions(root, version)
    return {a[kind]["path"]: a[kind]["dataChange"] for a in lines if kind in a}


@pytest.fixture
def table(tmp_path: Path, schema: dict[str, Any]) -> Any:
    root = tmp_path / "t"
    return create_table(str(root), schema=schema, config=TableConfig(compress=False))


def test_merge_removes_and_adds_carry_data_change_false(table: Any, tmp_path: Path) -> None:
    root = tmp_path / "t"
    sources = [_split(root, f"s{i}.split") for i in range(3)]
    table.commit(adds=sources)
    merged = AddAction("merged.split", {}, 30, 1, False, num_records=3)
    (root / "merged.split").write_bytes(b"x" * 30)
    removes = [RemoveAction(s.path, False, size=s.size) for s in sources]
    version = table.commit(adds=[merged], removes=removes)
    assert _flags(root, version, "remove") == {s.path: False for s in sources}
    assert _flags(root, version, "add") == {"merged.split": False}
    assert table.history()[-1].operation == "MERGE"


def test_other_removes_carry_data_change_true(table: Any, tmp_path: Path) -> None:
    """Seeded random mixes of the forms a remove is given in: only a remove action with
    ``data_change=False`` is written as ``dataChange=false``; an overwrite's own removes
    and a path given both ways are data changes."""
    root = tmp_path / "t"
    rng = random.Random(48)
    live = [_split(root, f"a{i}.split") for i in range(12)]
    table.commit(adds=live)
    seen: set[str] = set()
    for round_ in range(6):
        picked = rng.sample(live, 4)
        given: list[Any] = []
        expected: dict[str, bool] = {}
        for add in picked:
            form = rng.choice(["path", "entry", "changed", "rearranged", "both"])
            if form == "path":
                given.append(add.path)
            elif form == "entry":
                given.append(next(f for f in table.snapshot().files if f.path == add.path))
            elif form == "changed":
                given.append(RemoveAction(add.path, True, size=add.size))
            elif form == "rearranged":
                given.append(RemoveAction(add.path, False, size=add.size))
            else:
                given += [RemoveAction(add.path, False), RemoveAction(add.path, True)]
            expected[add.path] = form != "rearranged"
            seen.add(form)
        fresh = [_split(root, f"b{round_}-{i}.split") for i in range(4)]
        version = table.commit(adds=fresh, removes=given)
        assert _flags(root, version, "remove") == expected
        live = [a for a in live if a.path not in expected] + fresh
    assert seen == {"path", "entry", "changed", "rearranged", "both"}
    keep = live[0]
    version = table.commit(
        adds=[_split(root, "c.split")],
        removes=[RemoveAction(keep.path, False)],
        mode="overwrite",
    )
    assert _flags(root, version, "remove") == {a.path: True for a in live}
