"""JSON nested deeper than the interpreter's recursion: a corrupt file naming the file.

``json.loads`` raises ``RecursionError`` on ``[[[[...``; every JSON the log holds
(version files, ``_last_checkpoint``, checkpoint manifests, a state's metadata,
doc mappings) must instead be a :class:`CorruptFileError` naming the file, and a
damaged ``_last_checkpoint`` stays a hint that is ignored.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from indextables.protocol import create_table, open_table
from indextables.protocol.actions import AddAction
from indextables.protocol.checkpoint import decode_multipart_manifest
from indextables.protocol.errors import CorruptFileError
from indextables.protocol.jsonwire import loads, loads_object
from indextables.protocol.logreplay import LAST_CHECKPOINT_KEY, read_last_checkpoint, version_key
from indextables.protocol.schemadedup import canonical_doc_mapping
from indextables.storage import LocalStore

DEEP = 200_000


def deep_texts() -> list[str]:
    """Texts nested far deeper than any recursion limit, of several shapes."""
    rng = random.Random(7)
    mixed = "".join(rng.choice(["[", '{"a":']) for _ in range(DEEP))
    return [
        "[" * DEEP,
        "[" * DEEP + "]" * DEEP,
        '{"a":' * DEEP + "1" + "}" * DEEP,
        mixed,
        '{"add":' + "[" * DEEP,
    ]


@pytest.mark.parametrize("text", deep_texts(), ids=["open", "closed", "objects", "mixed", "field"])
def test_deep_json_is_corrupt_naming_the_file(text: str) -> None:
    with pytest.raises(CorruptFileError, match=r"^v\.json: invalid JSON: nested too deeply"):
        loads(text, path="v.json")
    with pytest.raises(CorruptFileError, match=r"^v\.json: "):
        loads_object(text, path="v.json")
    with pytest.raises(CorruptFileError, match=r"^m\.json: "):
        decode_multipart_manifest(text.encode(), path="m.json")
    with pytest.raises(ValueError, match="nested too deeply"):
        canonical_doc_mapping(text)


def test_json_within_the_limit_decodes_as_json_does() -> None:
    rng = random.Random(11)
    for _ in range(50):
        depth = rng.randint(0, 200)
        value: Any = rng.choice([1, "x", None, True, 2.5])
        for _ in range(depth):
            value = [value] if rng.random() < 0.5 else {"k": value}
        text = json.dumps(value)
        assert loads(text, path="v.json") == json.loads(text)


def _table_with_one_add(root: Path, schema: Any) -> LocalStore:
    table = create_table(str(root), schema=schema)
    (root / "a.split").write_bytes(b"x" * 10)
    table.commit(adds=[AddAction("a.split", {}, 10, 1, True)])
    return LocalStore(root)


@pytest.mark.parametrize("operation", ["snapshot", "describe_state", "compact", "history"])
def test_a_deep_version_file_is_a_corrupt_log_naming_it(
    tmp_path: Path, schema: Any, operation: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("indextables.protocol.reread.REREAD_PAUSES", (0.0,), raising=False)
    root = tmp_path / "t"
    store = _table_with_one_add(root, schema)
    store.put_if_absent(version_key(2), b"[" * DEEP)
    with pytest.raises(CorruptFileError, match=r"00000000000000000002\.json.*nested too deeply"):
        getattr(open_table(str(root)), operation)()


def test_a_deep_last_checkpoint_is_an_ignored_hint(tmp_path: Path, schema: Any) -> None:
    root = tmp_path / "t"
    store = _table_with_one_add(root, schema)
    store.put(LAST_CHECKPOINT_KEY, b"[" * DEEP)
    assert read_last_checkpoint(store) is None
    described = open_table(str(root)).describe_state()
    assert (described.version, described.num_files) == (1, 1)
    assert open_table(str(root)).compact().checkpoint_version == 1
    pointer = read_last_checkpoint(store)
    assert pointer is not None
    assert pointer.version == 1


def test_a_split_footer_whose_file_table_is_deep_json_is_corrupt() -> None:
    import struct

    from indextables.protocol.splitbundle import SPLIT_MAGIC, SPLIT_VERSION, parse_split_footer

    def footer(table: bytes) -> bytes:
        meta = struct.pack("<II", SPLIT_MAGIC, SPLIT_VERSION) + table
        return meta + struct.pack("<I", len(meta)) + struct.pack("<I", 0)

    good = parse_split_footer(footer(b'{"files":{"a":{"start":0,"end":0}}}'), footer_start_offset=0)
    assert good.files == {"a": (0, 0)}
    with pytest.raises(CorruptFileError, match=r"^s\.split: bad split file table"):
        parse_split_footer(
            footer(b'{"files":' + b"[" * DEEP), footer_start_offset=0, path="s.split"
        )


def test_repair_skips_a_split_whose_meta_json_is_deep(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from indextables.protocol.maintenance.repair import _metadata_from_splits
    from indextables.protocol.splitbundle import write_split_bundle

    def bundled(name: str, meta: bytes) -> tuple[Any, Any]:  # an add as a file entry
        index = tmp_path / f"{name}.index"
        index.mkdir()
        (index / "meta.json").write_bytes(meta)
        with (tmp_path / name).open("wb") as dest:
            footer = write_split_bundle(index, dest)
        return AddAction(name, {}, (tmp_path / name).stat().st_size, 1, True), footer

    # The writer reads meta.json itself: bundle a flat one, then nest its bytes.
    deep, footer = bundled("deep.split", b'{"x":"' + b"x" * DEEP + b'"}')
    start, end = footer.files["meta.json"]
    with (tmp_path / "deep.split").open("r+b") as split:
        split.seek(start)
        split.write(b"[" * (end - start))
    good, _ = bundled(
        "good.split", json.dumps({"schema": [{"name": "id", "type": "i64"}]}).encode()
    )
    table: Any = SimpleNamespace(store=LocalStore(tmp_path))
    assert _metadata_from_splits(table, [deep]) is None
    rebuilt = _metadata_from_splits(table, [deep, good])
    assert rebuilt is not None
    assert [f["name"] for f in json.loads(rebuilt.schema_string)["fields"]] == ["id"]
