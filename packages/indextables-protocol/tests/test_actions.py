"""Action codecs: byte-exact round trips, layouts, errors, FileEntry conversion."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from indextables.protocol.actions import (
    AddAction,
    FileFormat,
    MetadataAction,
    ProtocolAction,
    RemoveAction,
    SkipAction,
    action_from_json,
    action_to_json,
)
from indextables.protocol.errors import (
    CorruptFileError,
    MissingFieldError,
    UnknownActionError,
    UnsafePathError,
)
from indextables.protocol.state import FileEntry

ADD = AddAction(
    "date=2024-01-01/part-1.split",
    {"date": "2024-01-01"},
    5671,
    1775007206490,
    True,
    min_values={"id": "1"},
    max_values={"id": "2"},
    num_records=2,
    footer_start_offset=2332,
    footer_end_offset=5671,
    has_footer_offsets=True,
    num_merge_ops=0,
    doc_mapping_ref="z7TwwZ-tDWGD-uX5",
    uncompressed_size_bytes=2332,
)

ACTIONS = [
    ProtocolAction(4, 4),
    ProtocolAction(3, 3, reader_features=("avroState",), writer_features=("avroState",)),
    MetadataAction("id-1", FileFormat(), '{"type":"struct","fields":[]}', ("date",), {"k": "v"}),
    ADD,
    RemoveAction("part-2.split", True, deletion_timestamp=17, size=10),
    SkipAction("part-3.split", 1, "bad footer", "merge", retry_after=99, skip_count=2),
]


@pytest.mark.parametrize("action", ACTIONS, ids=lambda a: type(a).__name__)
def test_every_action_round_trips(action: object) -> None:
    line = action_to_json(action)  # type: ignore[arg-type]
    decoded = action_from_json(line, path="v.json")
    assert decoded == action
    assert action_to_json(decoded) == line


def test_golden_protocol_line_is_reproduced_byte_exactly() -> None:
    line = (
        '{"protocol":{"minReaderVersion":4,"minWriterVersion":4,'
        '"readerFeatures":null,"writerFeatures":null}}'
    )
    assert action_to_json(ProtocolAction(4, 4)) == line


def test_new_metadata_uses_the_reference_layout_with_nulls() -> None:
    line = action_to_json(MetadataAction("x", FileFormat(), "{}", (), {}, created_time=5))
    assert line == (
        '{"metaData":{"id":"x","name":null,"description":null,'
        '"format":{"provider":"indextables","options":{}},"schemaString":"{}",'
        '"partitionColumns":[],"configuration":{},"createdTime":5}}'
    )


def test_new_add_writes_every_reference_field_in_order() -> None:
    keys = list(json.loads(action_to_json(ADD))["add"])
    assert keys[:5] == ["path", "partitionValues", "size", "modificationTime", "dataChange"]
    assert keys[-3:] == ["companionSourceFiles", "companionDeltaVersion", "companionFastFieldMode"]
    assert len(keys) == 26


def test_native_layout_without_nulls_round_trips_byte_exactly() -> None:
    line = (
        '{"add":{"path":"a.split","partitionValues":{},"size":1,"modificationTime":2,'
        '"dataChange":true,"numRecords":3,"hasFooterOffsets":true,"timeRangeStart":1700}}'
    )
    action = action_from_json(line, path="v.json")
    assert isinstance(action, AddAction)
    assert action.time_range_start == 1700
    assert action_to_json(action) == line


def test_unknown_fields_are_preserved_in_place() -> None:
    line = '{"remove":{"path":"a.split","future":{"x":[1,2]},"dataChange":false}}'
    action = action_from_json(line, path="v.json")
    assert action.extra == {"future": {"x": [1, 2]}}
    assert action_to_json(action) == line


def test_replaced_field_keeps_position_and_new_fields_append() -> None:
    line = (
        '{"add":{"path":"a.split","partitionValues":{},"size":1,'
        '"modificationTime":2,"dataChange":true}}'
    )
    action = action_from_json(line, path="v.json")
    assert isinstance(action, AddAction)
    changed = json.loads(action_to_json(replace(action, size=9, doc_mapping_ref="r")))["add"]
    assert list(changed) == [
        "path",
        "partitionValues",
        "size",
        "modificationTime",
        "dataChange",
        "docMappingRef",
    ]
    assert changed["size"] == 9


def test_non_ascii_and_control_characters_follow_jackson() -> None:
    action = SkipAction("p.split", 1, "é\x01\n", "merge")
    line = action_to_json(action)
    assert '"reason":"é\\u0001\\n"' in line
    assert action_from_json(line, path="v") == action


@pytest.mark.parametrize(
    ("line", "error", "fragment"),
    [
        ('{"commitInfo":{}}', UnknownActionError, "unknown action type"),
        ('{"add":{"path":"a.split","size":1}}', MissingFieldError, "partitionValues"),
        ('{"protocol":{"minReaderVersion":"4","minWriterVersion":4}}', CorruptFileError, "int"),
        ('{"add":[1]}', CorruptFileError, "not an object"),
        ('{"add":', CorruptFileError, "invalid JSON"),
        ("[1]", CorruptFileError, "not an object"),
    ],
)
def test_bad_lines_raise_typed_errors_naming_the_file(
    line: str, error: type[Exception], fragment: str
) -> None:
    with pytest.raises(error, match=fragment) as caught:
        action_from_json(line, path="_transaction_log/00000000000000000007.json")
    assert "00000000000000000007.json" in str(caught.value)


@pytest.mark.parametrize(
    "path", ["../other/x.split", "/etc/passwd", "s3://bucket/x.split", "a/../../x.split", "C:/x"]
)
@pytest.mark.parametrize("kind", ["add", "remove", "mergeskip"])
def test_paths_escaping_the_table_root_are_refused(path: str, kind: str) -> None:
    bodies = {
        "add": {"partitionValues": {}, "size": 1, "modificationTime": 1, "dataChange": True},
        "remove": {"dataChange": True},
        "mergeskip": {"skipTimestamp": 1, "reason": "r", "operation": "merge"},
    }
    line = json.dumps({kind: {"path": path, **bodies[kind]}})
    with pytest.raises(UnsafePathError, match=r"00000000000000000003\.json"):
        action_from_json(line, path="00000000000000000003.json")


def test_add_and_file_entry_convert_both_ways() -> None:
    entry = ADD.to_file_entry(added_at_version=7, added_at_timestamp=1234)
    assert isinstance(entry, FileEntry)
    assert (entry.added_at_version, entry.added_at_timestamp) == (7, 1234)
    assert entry.doc_mapping_ref == ADD.doc_mapping_ref
    assert AddAction.from_file_entry(entry) == ADD


def test_null_partition_values_are_dropped_in_file_entries() -> None:
    add = replace(ADD, partition_values={"date": None, "region": "us"})
    entry = add.to_file_entry(added_at_version=1, added_at_timestamp=1)
    assert entry.partition_values == {"region": "us"}
