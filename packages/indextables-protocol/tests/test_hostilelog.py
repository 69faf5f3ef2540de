"""Hostile values in a log: typed errors naming the file, and a damaged hint ignored."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from indextables.protocol import create_table, open_table
from indextables.protocol.actions import AddAction
from indextables.protocol.errors import CorruptFileError
from indextables.protocol.logreplay import LAST_CHECKPOINT_KEY, read_last_checkpoint
from indextables.storage import LocalStore

LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1


def _values() -> list[int]:
    """Integers at and around the Java long bounds, and random ones far outside."""
    rng = random.Random(30)
    edges = [LONG_MAX, LONG_MAX + 1, LONG_MIN, LONG_MIN - 1, 10**30, -(10**30)]
    return edges + [rng.choice([1, -1]) * rng.randrange(2**63, 2**200) for _ in range(3)]


def _write_version_one(root: Path, field: str, value: int) -> None:
    add: dict[str, Any] = {
        "path": "a.split",
        "partitionValues": {},
        "size": 10,
        "modificationTime": 1,
        "dataChange": True,
        "numRecords": 3,
    }
    add[field] = value
    text = json.dumps({"add": add}) + "\n"
    LocalStore(root).put_if_absent("_transaction_log/00000000000000000001.json", text.encode())


@pytest.mark.parametrize("field", ["size", "numRecords"])
@pytest.mark.parametrize("value", _values())
def test_integers_beyond_a_long_are_a_corrupt_version_file(
    tmp_path: Path, schema: Any, field: str, value: int
) -> None:
    root = tmp_path / "t"
    create_table(str(root), schema=schema)
    (root / "a.split").write_bytes(b"x" * 10)
    _write_version_one(root, field, value)
    fits = LONG_MIN <= value <= LONG_MAX  # the model: the reference's Java long
    for operation in ("compact", "truncate_time_travel"):
        table = open_table(str(root), check=fits)
        if fits:
            getattr(table, operation)()
            continue
        with pytest.raises(CorruptFileError, match=r"00000000000000000001\.json.*add\." + field):
            getattr(table, operation)()


GARBAGE = [
    b"\xff\xfe\x00",
    b"{not json",
    b"[1]",
    b'"text"',
    b"",
    b'{"version":"x"}',
    b'{"version":' + b"9" * 40 + b"}",
    b"{}",
    b'{"version":-7}',
    b'{"version":1,"size":"big"}',
]


@pytest.mark.parametrize("garbage", GARBAGE)
def test_a_damaged_last_checkpoint_is_ignored_and_replaced(
    tmp_path: Path, schema: Any, garbage: bytes
) -> None:
    root = tmp_path / "t"
    table = create_table(str(root), schema=schema)
    (root / "a.split").write_bytes(b"x" * 10)
    table.commit(adds=[AddAction("a.split", {}, 10, 1, True)])
    store = LocalStore(root)
    store.put(LAST_CHECKPOINT_KEY, garbage)
    assert read_last_checkpoint(store) is None
    described = open_table(str(root)).describe_state()
    assert (described.version, described.num_files) == (1, 1)
    result = open_table(str(root)).compact()
    assert result.checkpoint_version == 1
    pointer = read_last_checkpoint(store)
    assert pointer is not None
    assert (pointer.version, pointer.num_files) == (1, 1)
    assert [e.version for e in open_table(str(root)).history()] == [0, 1]


@pytest.mark.parametrize(
    "manifest_path",
    ["../../../x", "manifests/../../escape.avro", "/etc/passwd", "s3://other/m.avro", "a//b.avro"],
)
def test_an_unsafe_manifest_path_in_a_state_is_an_unsafe_path(
    tmp_path: Path, schema: Any, manifest_path: str
) -> None:
    import dataclasses

    from indextables.avrostate.layout import state_key
    from indextables.avrostate.state_file import decode_state, encode_state
    from indextables.protocol.errors import UnsafePathError

    root = tmp_path / "t"
    table = create_table(str(root), schema=schema)
    (root / "a.split").write_bytes(b"x" * 10)
    table.commit(adds=[AddAction("a.split", {}, 10, 1, True)])
    table.checkpoint()
    store = LocalStore(root)
    key = state_key(1)
    state = decode_state(store.get(key), path=key)
    bad = dataclasses.replace(state.manifests[0], path=manifest_path)
    store.put(key, encode_state(dataclasses.replace(state, manifests=(bad,))))
    with pytest.raises(UnsafePathError, match=r"state-v0+1/_manifest\.avro.*manifest path"):
        open_table(str(root)).snapshot()
    result = open_table(str(root), check=False).validate()
    assert not result.ok
    assert any("manifest path" in problem for problem in result.problems), result.problems


@pytest.mark.parametrize("value", ["a\ud800", "\udfff", "x\udc80y"], ids=ascii)
def test_a_partition_value_with_a_lone_surrogate_is_refused_naming_it(
    tmp_path: Path, schema: Any, value: str
) -> None:
    from indextables.protocol.errors import UnsafePathError

    root = tmp_path / "t"
    table = create_table(str(root), schema=schema, partition_columns=("date",))
    (root / "date=a").mkdir()
    (root / "date=a" / "f.split").write_bytes(b"x")
    with pytest.raises(UnsafePathError, match=r"partition value 'date'.*lone surrogate"):
        table.commit(adds=[AddAction("date=a/f.split", {"date": value}, 1, 1, True)])
    assert open_table(str(root)).snapshot().version == 0  # nothing written
    # A log holding one (a JSON \ud800 escape): a corrupt version file, not a UnicodeError.
    escaped = json.dumps({"date": value})  # ASCII JSON with the escape
    text = (
        '{"add":{"path":"date=a/f.split","partitionValues":' + escaped + ',"size":1,'
        '"modificationTime":1,"dataChange":true}}\n'
    )
    LocalStore(root).put_if_absent("_transaction_log/00000000000000000001.json", text.encode())
    for operation in ("snapshot", "compact"):
        with pytest.raises(CorruptFileError, match=r"00000000000000000001\.json.*lone surrogate"):
            getattr(open_table(str(root), check=False), operation)()
    problems = open_table(str(root), check=False).validate().problems
    assert any("lone surrogate" in problem for problem in problems), problems


def test_a_new_split_path_with_a_lone_surrogate_is_refused(tmp_path: Path, schema: Any) -> None:
    from indextables.protocol.errors import UnsafePathError

    table = create_table(str(tmp_path / "t"), schema=schema)
    with pytest.raises(UnsafePathError, match="lone surrogate"):
        table.commit(adds=[AddAction("a\ud800.split", {}, 1, 1, True)])
