"""Every golden table opens through open_table and matches its oracle."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from indextables.protocol import AddAction, open_table

pytestmark = pytest.mark.integration


def _live(file: Any) -> dict[str, Any]:
    return {
        "dataChange": file.data_change,
        "docMappingJson": file.doc_mapping_json,
        "footerEndOffset": file.footer_end_offset,
        "footerStartOffset": file.footer_start_offset,
        "maxValues": dict(file.max_values) if file.max_values is not None else None,
        "minValues": dict(file.min_values) if file.min_values is not None else None,
        "numMergeOps": file.num_merge_ops,
        "numRecords": file.num_records,
        "partitionValues": dict(file.partition_values),
        "path": file.path,
        "size": file.size,
    }


def test_open_table_matches_expected(golden_copy: Path, golden_expected: dict[str, Any]) -> None:
    table = open_table(str(golden_copy))
    snap = table.snapshot()
    assert snap.version == golden_expected["version"]
    protocol = golden_expected["protocol"]
    assert (snap.protocol.min_reader_version, snap.protocol.min_writer_version) == (
        protocol["minReaderVersion"],
        protocol["minWriterVersion"],
    )
    assert snap.protocol.reader_features == protocol["readerFeatures"]
    meta = golden_expected["metadata"]
    assert snap.metadata.id == meta["id"]
    assert list(snap.partition_columns) == meta["partitionColumns"]
    assert snap.metadata.schema_string == meta["schemaString"]
    assert snap.num_files == golden_expected["numFiles"]
    got = sorted((_live(f) for f in snap.files), key=lambda f: f["path"])
    want = sorted(golden_expected["liveFiles"], key=lambda f: f["path"])
    assert got == [{k: w.get(k) for k in got[0]} for w in want] if got else want == []


def test_reference_quirks_are_read_as_written(golden_copy: Path) -> None:
    snap = open_table(str(golden_copy)).snapshot()
    assert all(f.added_at_version == 0 for f in snap.files)  # v0.5.4 never set it
    assert snap.state_version == snap.version  # states without version files


def test_after_purge_uses_highest_state_not_newest(golden_root: Path, tmp_path: Path) -> None:
    target = tmp_path / "t"
    shutil.copytree(golden_root / "13_after_purge", target)
    assert open_table(str(target)).snapshot().state_version == 5


def _new_split(root: Path, source: Any, name: str) -> AddAction:
    folder = root / source.path.rpartition("/")[0] if "/" in source.path else root
    shutil.copyfile(root / source.path, folder / name)
    path = f"{source.path.rpartition('/')[0]}/{name}" if "/" in source.path else name
    return AddAction(
        path,
        dict(source.partition_values),
        source.size,
        source.modification_time,
        True,
        num_records=source.num_records,
        footer_start_offset=source.footer_start_offset,
        footer_end_offset=source.footer_end_offset,
        has_footer_offsets=True,
        doc_mapping_json=source.doc_mapping_json,
    )


def test_append_checkpoint_compact_keep_every_old_file(golden_copy: Path) -> None:
    table = open_table(str(golden_copy))
    before = table.snapshot()
    add = _new_split(golden_copy, before.files[0], "part-ours-0001.split")
    version = table.commit(adds=[add])
    assert version == before.version + 1
    assert table.checkpoint().checkpoint_version == version
    compacted = table.compact()
    assert compacted.compacted
    reopened = open_table(str(golden_copy))
    after = reopened.snapshot()
    assert {f.path for f in before.files} | {add.path} == {f.path for f in after.files}
    ours = next(f for f in after.files if f.path == add.path)
    assert ours.added_at_version == version
    assert ours.doc_mapping_json == before.files[0].doc_mapping_json
    result = reopened.validate()
    assert result.ok, result.problems
    pointer = json.loads((golden_copy / "_transaction_log/_last_checkpoint").read_text())
    assert pointer["version"] == compacted.checkpoint_version


def test_state_only_history_time_travel_and_changes(golden_root: Path, tmp_path: Path) -> None:
    target = tmp_path / "t"
    shutil.copytree(golden_root / "02_five_appends", target)
    table = open_table(str(target))
    history = table.history()
    assert [h.version for h in history] == [0, 1, 2, 3, 4, 5]
    assert [h.operation for h in history] == ["CREATE"] + ["STATE"] * 5
    counts = [table.snapshot(v).num_files for v in range(6)]
    assert counts == [0, 2, 4, 6, 8, 10]  # five appends of two splits each
    assert table.snapshot(timestamp=history[3].timestamp).version == 3
    changes = table.changes_since(3)
    assert len(changes.adds) == 4
    assert changes.removes == ()
    assert {f.path for f in changes.adds} == {f.path for f in table.snapshot().files} - {
        f.path for f in table.snapshot(3).files
    }


def test_stale_state_v0_of_the_reference_is_not_version_0(
    golden_root: Path, tmp_path: Path
) -> None:
    """13_after_purge's state-v0 was written after state-v5 and holds version 5's files."""
    target = tmp_path / "t"
    shutil.copytree(golden_root / "13_after_purge", target)
    table = open_table(str(target))
    assert table.snapshot(0).files == ()  # version 0 created the table, nothing more
    assert [table.snapshot(v).num_files for v in range(6)] == [0, 2, 4, 6, 8, 10]
    current = {f.path for f in table.snapshot().files}
    assert {f.path for f in table.changes_since(0).adds} == current
    assert table.history()[0].operation == "CREATE"
