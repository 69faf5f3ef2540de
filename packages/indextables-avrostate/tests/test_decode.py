"""Decoder twins: equal to each other and to fastavro, resolve by name, survive hostile bytes."""

from __future__ import annotations

import copy
import dataclasses
import io
import os
from types import ModuleType
from typing import Any

import fastavro
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from indextables.avrostate import (
    SchemaMismatchError,
    UnsafeManifestPathError,
    impl,
    read_manifest,
)
from indextables.avrostate._decode_common import (
    SLOT_MAX_VALUES,
    SLOT_MIN_VALUES,
    Columns,
    DecodeError,
    UnsafePathDecodeError,
    compile_plan,
)
from indextables.avrostate.container import parse_container
from indextables.avrostate.entries import build_file_entry
from indextables.avrostate.manifest_reader import read_manifest_entries
from indextables.avrostate.manifest_writer import encode_manifest, file_entry_to_record
from indextables.avrostate.schemas import FILE_ENTRY_SCHEMA_V1, FILE_ENTRY_SCHEMA_V2
from indextables.protocol.pathsafety import PATH_PROBLEMS, path_problem
from indextables.protocol.predicates import compare_values
from indextables.protocol.state import FileEntry

# Both twins where the extension is built; the pure env has only the twin.
TWINS = ["python"] if os.environ.get(impl.IMPL_ENV) == "python" else ["cython", "python"]
INT64 = st.integers(-(2**63), 2**63 - 1)
INT32 = st.integers(-(2**31), 2**31 - 1)
TEXT = st.text(max_size=12)
STR_MAP = st.dictionaries(TEXT, TEXT, max_size=4)
STR_TUPLE = st.lists(TEXT, max_size=3).map(tuple)


def _opt(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.none() | strategy


SAFE_PATH = TEXT.filter(lambda path: path_problem(path) is None)
ENTRY = st.builds(
    FileEntry,
    SAFE_PATH,
    STR_MAP,
    INT64,
    INT64,
    st.booleans(),
    INT64,
    INT64,
    stats=_opt(TEXT),
    min_values=_opt(STR_MAP),
    max_values=_opt(STR_MAP),
    num_records=_opt(INT64),
    footer_start_offset=_opt(INT64),
    footer_end_offset=_opt(INT64),
    has_footer_offsets=st.booleans(),
    delete_opstamp=_opt(INT64),
    split_tags=_opt(STR_TUPLE),
    num_merge_ops=_opt(INT32),
    doc_mapping_json=_opt(TEXT),
    doc_mapping_ref=_opt(TEXT),
    uncompressed_size_bytes=_opt(INT64),
    time_range_start=_opt(INT64),
    time_range_end=_opt(INT64),
    companion_source_files=_opt(STR_TUPLE),
    companion_delta_version=_opt(INT64),
    companion_fast_field_mode=_opt(TEXT),
)


def _read_with(name: str, data: bytes) -> list[FileEntry]:
    with impl.using(name):  # type: ignore[arg-type]
        return read_manifest(data, path="m.avro")


def _fastavro_entries(data: bytes) -> list[FileEntry]:
    out = []
    for rec in fastavro.reader(io.BytesIO(data)):
        values = [rec.get(name) for name in _WIRE_ORDER]
        for i in (15, 22):  # arrays come back as lists
            values[i] = None if values[i] is None else tuple(values[i])
        values[13] = bool(values[13])
        out.append(build_file_entry(values))
    return out


_WIRE_ORDER = [
    "path",
    "partitionValues",
    "size",
    "modificationTime",
    "dataChange",
    "addedAtVersion",
    "addedAtTimestamp",
    "stats",
    "minValues",
    "maxValues",
    "numRecords",
    "footerStartOffset",
    "footerEndOffset",
    "hasFooterOffsets",
    "deleteOpstamp",
    "splitTags",
    "numMergeOps",
    "docMappingJson",
    "docMappingRef",
    "uncompressedSizeBytes",
    "timeRangeStart",
    "timeRangeEnd",
    "companionSourceFiles",
    "companionDeltaVersion",
    "companionFastFieldMode",
]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(ENTRY, max_size=12), st.sampled_from(["zstandard", "null", "snappy", "deflate"]))
def test_twins_equal_fastavro_on_random_records(entries: list[FileEntry], codec: Any) -> None:
    data = encode_manifest(entries, codec=codec, block_bytes=256)
    expected = _fastavro_entries(data)
    assert expected == entries
    for name in TWINS:
        assert _read_with(name, data) == entries


def _with_fields(schema: dict[str, Any], fields: list[dict[str, Any]]) -> dict[str, Any]:
    out = copy.deepcopy(schema)
    out["fields"] = fields
    return out


_EXTRA_FIELDS = [
    {"name": "xEnum", "type": {"type": "enum", "name": "E", "symbols": ["A", "B"]}},
    {"name": "xFixed", "type": {"type": "fixed", "name": "F", "size": 3}},
    {"name": "xFloat", "type": "float"},
    {"name": "xDouble", "type": ["null", "double"]},
    {
        "name": "xRecords",
        "type": {
            "type": "array",
            "items": {
                "type": "record",
                "name": "R",
                "fields": [
                    {"name": "a", "type": "E"},
                    {"name": "b", "type": {"type": "map", "values": "F"}},
                ],
            },
        },
    },
    {"name": "xBytes", "type": "bytes"},
]
_EXTRA_VALUES = {
    "xEnum": "B",
    "xFixed": b"abc",
    "xFloat": 1.5,
    "xDouble": 2.5,
    "xRecords": [{"a": "A", "b": {"k": b"xyz"}}, {"a": "B", "b": {}}],
    "xBytes": b"\x00\xff",
}


def _write(schema: dict[str, Any], records: list[dict[str, Any]]) -> bytes:
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(schema), records, codec="zstandard")
    return out.getvalue()


def test_more_fields_of_every_type_are_skipped(decoder: ModuleType, entries: Any) -> None:
    originals = entries(5)
    fields = list(FILE_ENTRY_SCHEMA_V1["fields"])
    for i, extra in enumerate(_EXTRA_FIELDS):  # interleave unknown fields with known ones
        fields.insert(2 + 3 * i, extra)
    schema = _with_fields(FILE_ENTRY_SCHEMA_V1, fields)
    records = [{**file_entry_to_record(e), **_EXTRA_VALUES} for e in originals]
    assert read_manifest(_write(schema, records), path="m") == originals


def test_fewer_and_reordered_fields_resolve_by_name(decoder: ModuleType, entries: Any) -> None:
    originals = entries(4, split_tags=("a",), stats=None)
    keep = [f for f in FILE_ENTRY_SCHEMA_V1["fields"] if f["name"] not in _DROPPED]
    schema = _with_fields(FILE_ENTRY_SCHEMA_V1, list(reversed(keep)))
    got = read_manifest(_write(schema, [file_entry_to_record(e) for e in originals]), path="m")
    for entry, original in zip(got, originals, strict=True):
        assert entry.path == original.path
        assert entry.split_tags == ("a",)
        assert entry.added_at_version == 0
        assert entry.num_merge_ops is None
        assert entry.doc_mapping_ref is None
        assert entry.companion_source_files is None
        assert entry.min_values == original.min_values


_DROPPED = {
    "addedAtVersion",
    "addedAtTimestamp",
    "numMergeOps",
    "docMappingRef",
    "companionSourceFiles",
}


def test_native_writer_fields_are_read(decoder: ModuleType, entries: Any) -> None:
    originals = entries(
        3, delete_opstamp=7, doc_mapping_json="[]", time_range_start=1, time_range_end=2
    )
    data = encode_manifest(originals)
    assert parse_container(data, path="m").schema == FILE_ENTRY_SCHEMA_V2
    assert read_manifest(data, path="m") == originals


@pytest.mark.parametrize(
    ("name", "type_"),
    [
        ("size", "string"),
        ("path", ["null", "long"]),
        ("partitionValues", "string"),
        ("stats", "null"),
    ],
)
def test_unresolvable_known_field_types_are_rejected(name: str, type_: Any) -> None:
    fields = [
        dict(f, type=type_) if f["name"] == name else f for f in FILE_ENTRY_SCHEMA_V1["fields"]
    ]
    with pytest.raises(SchemaMismatchError, match=name):
        compile_plan(_with_fields(FILE_ENTRY_SCHEMA_V1, fields), path="m.avro")


def test_missing_required_field_is_rejected() -> None:
    fields = [f for f in FILE_ENTRY_SCHEMA_V1["fields"] if f["name"] != "path"]
    with pytest.raises(SchemaMismatchError, match="'path'"):
        compile_plan(_with_fields(FILE_ENTRY_SCHEMA_V1, fields), path="m.avro")


def test_map_column_reads_one_statistic(decoder: ModuleType, entries: Any) -> None:
    originals = entries(50)
    originals[3] = FileEntry(*_required(originals[3]), min_values=None, max_values={"id": "x"})
    files = read_manifest_entries(encode_manifest(originals), path="m")
    mins, maxs = files.column_stats("id")
    assert mins == [(e.min_values or {}).get("id") for e in originals]
    assert maxs == [(e.max_values or {}).get("id") for e in originals]
    assert files.column_stats("nope") == ([None] * 50, [None] * 50)


def test_planning_int_columns_keep_nulls(decoder: ModuleType, entries: Any) -> None:
    originals = [
        FileEntry(*_required(e), num_records=None, footer_start_offset=None) if i % 3 == 0 else e
        for i, e in enumerate(entries(30))
    ]
    files = read_manifest_entries(encode_manifest(originals, block_bytes=500), path="m")
    assert list(files.sizes) == [e.size for e in originals]
    assert list(files.num_records) == [e.num_records for e in originals]
    assert list(files.footer_start_offsets) == [e.footer_start_offset for e in originals]
    assert list(files.footer_end_offsets) == [e.footer_end_offset for e in originals]
    assert list(files.added_at_versions) == [e.added_at_version for e in originals]
    assert list(files) == originals


STAT_VALUE = st.one_of(
    st.integers(-(10**20), 10**20).map(str),
    st.integers(-(2**53) - 3, -(2**53) + 3).map(str),
    st.integers(2**53 - 3, 2**53 + 3).map(str),
    st.integers(10**17 - 2, 10**17 + 2).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
    st.sampled_from(["", "-", "-0", "007", " 7", "+3", "1_0", "inf", "nan", "NaN", "é", "a" * 40]),
    st.sampled_from(["1" * 18, "1" * 19, "-" + "9" * 18, "1" * 40]),
    st.text(max_size=5),
)


def _code(value: str | None, literal: str, plain: bool, max_len: int) -> int:
    """The independent oracle of one order code (see ``_decode_py.stat_codes``)."""
    if value is None or (max_len > 0 and len(value) >= max_len):
        return 3
    if plain:
        return 1 + (value > literal) - (value < literal)
    return 1 + compare_values(value, literal)


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    st.lists(st.tuples(STAT_VALUE | st.none(), STAT_VALUE | st.none()), max_size=12),
    st.lists(STAT_VALUE, max_size=4),
    st.booleans(),
)
def test_stat_codes_order_like_compare_values(
    decoder: ModuleType,
    stats: list[tuple[str | None, str | None]],
    literals: list[str],
    plain: bool,
) -> None:
    entries = [
        FileEntry(
            f"f{i}",
            {},
            1,
            0,
            True,
            0,
            0,
            min_values=None if low is None else {"id": low, "other": "1"},
            max_values=None if high is None else {"other": "2", "id": high},
        )
        for i, (low, high) in enumerate(stats)
    ]
    files = read_manifest_entries(encode_manifest(entries, block_bytes=150), path="m")
    for _ in range(2):  # the second call reuses the located spans
        codes = files.stat_codes("id", literals, plain=plain)
        assert codes == [
            bytes(4 * _code(lo, lit, plain, 0) + _code(hi, lit, plain, 32) for lo, hi in stats)
            for lit in literals
        ]
    assert files.stat_codes("absent", ["1"]) == [b"\x0f" * len(stats)]


def test_stat_spans_of_hostile_sizes_fail_alike() -> None:
    raw = _RAW
    for name in TWINS:
        module = impl.load(name)  # type: ignore[arg-type]
        spans = module.stat_spans(raw, [0], _PLAN, "id")
        with pytest.raises(DecodeError):
            module.stat_codes(raw, spans[:-1], ["1"], compare_values, 32)
        with pytest.raises(DecodeError):
            module.stat_codes(raw[:10], spans, ["a"], None, 32)  # a span past the block


def _required(e: FileEntry) -> tuple[Any, ...]:
    return (
        e.path,
        e.partition_values,
        e.size,
        e.modification_time,
        e.data_change,
        e.added_at_version,
        e.added_at_timestamp,
    )


def _blocks(entries: list[FileEntry]) -> tuple[Any, list[tuple[int, bytes]]]:
    data = encode_manifest(entries, codec="null", block_bytes=1 << 20)
    container = parse_container(data, path="m")
    return compile_plan(container.schema, path="m"), list(container.decompressed())


def _outcome(module: ModuleType, raw: bytes, count: int, plan: Any) -> Any:
    """Everything a twin produces on ``raw``: columns and full records, or the error type."""
    cols = Columns()
    try:
        module.scan_block(raw, count, plan, {}, None, None, cols)
        records = [module.decode_record(raw, s, plan) for s in cols.starts]
        stats = module.map_column(raw, cols.starts, plan, SLOT_MIN_VALUES, "id")
        stats += module.map_column(raw, cols.starts, plan, SLOT_MAX_VALUES, "id")
        spans = module.stat_spans(raw, cols.starts, plan, "id")
        stats.append(spans)
        stats.append(module.stat_codes(raw, spans, ["1", "a", "é", "1.5"], compare_values, 32))
        stats.append(module.stat_codes(raw, spans, ["1"], None, 0))
        built = module.decode_entries(
            raw, cols.starts, cols.paths, cols.partition_values, plan, FileEntry
        )
    except DecodeError:
        return "DecodeError"
    assert built == [
        build_file_entry([r[0], pv, *r[2:]])
        for r, pv in zip(records, cols.partition_values, strict=True)
    ]
    return [getattr(cols, n) for n in Columns.__slots__], records, stats


def _sample_entries() -> list[FileEntry]:
    return [
        FileEntry(
            f"p={i}/part-{i}.split",
            {"p": str(i)},
            100 + i,
            5,
            True,
            i,
            9,
            min_values={"id": str(i)},
            max_values={"id": str(i + 1)},
            num_records=i,
            split_tags=("t",),
            stats="{}",
        )
        for i in range(3)
    ]


_PLAN, _BLOCKS = _blocks(_sample_entries())
_COUNT, _RAW = _BLOCKS[0]
_MUTATION = st.tuples(st.integers(0, len(_RAW) - 1), st.integers(0, 255))


@settings(max_examples=400, deadline=None)
@given(
    st.lists(_MUTATION, min_size=1, max_size=4),
    st.integers(0, len(_RAW)),
    st.integers(0, 6),
)
def test_mutated_blocks_decode_alike_or_fail_alike(
    flips: list[tuple[int, int]], cut: int, count: int
) -> None:
    raw = bytearray(_RAW)
    for at, value in flips:
        raw[at] = value
    data = bytes(raw[:cut] if cut < len(raw) // 2 else raw)
    outcomes = [_outcome(impl.load(name), data, count, _PLAN) for name in TWINS]  # type: ignore[arg-type]
    assert all(o == outcomes[0] for o in outcomes)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300), st.integers(0, 50))
def test_random_bytes_decode_alike_or_fail_alike(data: bytes, count: int) -> None:
    outcomes = [_outcome(impl.load(name), data, count, _PLAN) for name in TWINS]  # type: ignore[arg-type]
    assert all(o == outcomes[0] for o in outcomes)


def test_valid_block_outcome_is_the_entries() -> None:
    for name in TWINS:
        cols, records, _ = _outcome(impl.load(name), _RAW, _COUNT, _PLAN)  # type: ignore[arg-type]
        assert [build_file_entry(r) for r in records] == _sample_entries()
        assert cols[Columns.__slots__.index("paths")] == [e.path for e in _sample_entries()]


UNSAFE_PATHS = [
    ("", 0),
    ("/abs/part.split", 1),
    ("\\share\\part.split", 1),
    ("s3://other-bucket/part.split", 2),
    ("file:part.split", 2),
    ("C:part.split", 2),
    ("a+b.c-d:x", 2),
    ("../outside.split", 3),
    ("day=1/../../x.split", 3),
    ("day=1\\..\\x.split", 3),
    ("day=1/..", 3),
]
SAFE_PATHS = [
    "part.split",
    "day=2024-01-01/part-1.split",
    "day=a:b/part.split",  # '=' before the colon: no scheme
    "1a:b.split",  # a scheme starts with a letter
    "..x/y..split",
    "é/ü:x.split",
    ".../part.split",
]


def _manifest_with(path: str) -> bytes:
    good = _sample_entries()
    bad = dataclasses.replace(good[1], path=path)
    return encode_manifest([good[0], bad, good[2]], codec="null")


@pytest.mark.parametrize(("path", "problem"), UNSAFE_PATHS)
def test_unsafe_manifest_paths_are_refused_naming_manifest_and_path(
    decoder: ModuleType, path: str, problem: int
) -> None:
    assert path_problem(path) == PATH_PROBLEMS[problem]
    with pytest.raises(UnsafeManifestPathError) as caught:
        read_manifest(_manifest_with(path), path="manifests/manifest-7.avro")
    message = str(caught.value)
    assert message.startswith("manifests/manifest-7.avro: ")
    assert repr(path) in message
    assert PATH_PROBLEMS[problem] in message
    assert caught.value.path == "manifests/manifest-7.avro"


@pytest.mark.parametrize("path", SAFE_PATHS)
def test_safe_manifest_paths_are_read(decoder: ModuleType, path: str) -> None:
    assert path_problem(path) is None
    assert read_manifest(_manifest_with(path), path="m.avro")[1].path == path


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab:/\\.+-=1é"), max_size=10) | st.text(max_size=8))
def test_both_twins_check_paths_as_the_commit_check_does(path: str) -> None:
    plan, blocks = _blocks([dataclasses.replace(_sample_entries()[0], path=path)])
    (count, raw), expected = blocks[0], path_problem(path)
    for name in TWINS:
        module = impl.load(name)  # type: ignore[arg-type]
        cols = Columns()
        if expected is None:
            assert module.scan_block(raw, count, plan, {}, None, None, cols) == 1
            assert cols.paths == [path]
        else:
            with pytest.raises(UnsafePathDecodeError) as caught:
                module.scan_block(raw, count, plan, {}, None, None, cols)
            assert (caught.value.path, caught.value.problem) == (path, expected)


def test_paths_the_partition_filter_drops_are_not_decoded(decoder: ModuleType) -> None:
    # Pruned records never become strings: their paths are neither built nor checked.
    data = _manifest_with("../x.split")
    container = parse_container(data, path="m")
    plan = compile_plan(container.schema, path="m")
    ((count, raw),) = list(container.decompressed())
    cols = Columns()
    kept = decoder.scan_block(raw, count, plan, {}, lambda pv: pv["p"] != "1", None, cols)
    assert kept == 2
    assert cols.paths == ["p=0/part-0.split", "p=2/part-2.split"]
