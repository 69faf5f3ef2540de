"""Split bundles: every golden split parses; our bundles open in tantivy."""

from __future__ import annotations

import io
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
import tantivy

from indextables.protocol.errors import CorruptFileError
from indextables.protocol.splitbundle import (
    parse_split_footer,
    read_split_footer,
    unbundle_split,
    write_split_bundle,
)


def _live_files(expected: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["path"]: f for f in expected["liveFiles"]}


def test_every_golden_split_footer_parses(golden_table: Path, store_of_table: Any) -> None:
    splits = sorted(golden_table.rglob("*.split"))
    assert splits
    for split in splits:
        data = split.read_bytes()
        key = split.relative_to(golden_table).as_posix()
        footer = read_split_footer(store_of_table, key)
        assert footer.footer_end_offset == len(data)
        assert "meta.json" in footer.files
        tail = data[footer.footer_start_offset :]
        again = parse_split_footer(tail, footer_start_offset=footer.footer_start_offset)
        assert again == footer
        whole = parse_split_footer(data, footer_start_offset=footer.footer_start_offset)
        assert whole == footer


def test_golden_offsets_match_the_log(
    golden_table: Path, golden_expected: dict[str, Any], store_of_table: Any
) -> None:
    for path, live in _live_files(golden_expected).items():
        footer = read_split_footer(
            store_of_table,
            path,
            footer_start_offset=live["footerStartOffset"],
            footer_end_offset=live["footerEndOffset"],
        )
        assert footer.footer_end_offset == live["size"]


def test_golden_split_unbundles_and_opens_in_tantivy(
    golden_table: Path, golden_expected: dict[str, Any], tmp_path: Path
) -> None:
    live = golden_expected["liveFiles"][0]
    unbundle_split((golden_table / live["path"]).read_bytes(), tmp_path, path=live["path"])
    index = tantivy.Index.open(str(tmp_path))
    index.reload()
    assert index.searcher().num_docs == live["numRecords"]


def test_our_bundle_round_trips_through_tantivy(tmp_path: Path) -> None:
    schema = (
        tantivy.SchemaBuilder()
        .add_integer_field("id", stored=True, indexed=True)
        .add_text_field("body", stored=True)
        .build()
    )
    source = tmp_path / "index"
    source.mkdir()
    index = tantivy.Index(schema, path=str(source))
    writer = index.writer(15_000_000, 1)
    for i in range(5):
        writer.add_document(tantivy.Document(id=i, body=f"doc {i}"))
    writer.commit()
    writer.wait_merging_threads()
    buffer = io.BytesIO()
    footer = write_split_bundle(source, buffer)
    data = buffer.getvalue()
    assert footer.footer_end_offset == len(data)
    assert (
        parse_split_footer(
            data[footer.footer_start_offset :], footer_start_offset=footer.footer_start_offset
        )
        == footer
    )
    target = tmp_path / "out"
    unbundle_split(data, target)
    reopened = tantivy.Index.open(str(target))
    reopened.reload()
    searcher = reopened.searcher()
    assert searcher.num_docs == 5
    hits = searcher.search(reopened.parse_query("3", ["id"]), 10).hits
    assert [searcher.doc(a)["body"] for _, a in hits] == [["doc 3"]]


@pytest.mark.parametrize(
    ("mutate", "fragment"),
    [
        (lambda d: d[:-2], "truncated|exceed|magic"),
        (lambda d: d[:100] + b"\x00\x00\x00\x00" + d[104:], "magic"),
    ],
)
def test_damaged_footers_are_corrupt_files(golden_root: Path, mutate: Any, fragment: str) -> None:
    split = next(golden_root.glob("01_single_write/*.split"))
    data = split.read_bytes()
    footer_start = parse_split_footer(data, footer_start_offset=_start(data)).footer_start_offset
    damaged = bytearray(data)
    if fragment == "magic":
        damaged[footer_start : footer_start + 4] = b"\0\0\0\0"
    else:
        damaged = bytearray(mutate(data))
    with pytest.raises(CorruptFileError, match=f"x.split: .*({fragment})"):
        unbundle_split(bytes(damaged), golden_root / "never-written", path="x.split")


def _start(data: bytes) -> int:
    import struct

    hot = struct.unpack("<I", data[-4:])[0]
    meta_at = len(data) - 8 - hot
    return meta_at - struct.unpack("<I", data[meta_at : meta_at + 4])[0]


def test_bad_version_is_refused() -> None:
    import struct

    meta = struct.pack("<II", 0x1812BEAE, 9) + json.dumps({"files": {}}).encode()
    data = meta + struct.pack("<I", len(meta)) + struct.pack("<I", 0)
    with pytest.raises(CorruptFileError, match="version 9"):
        parse_split_footer(data, footer_start_offset=0)


def _layout_problems(data: bytes) -> list[str]:
    """How a split departs from the reference's bundle layout (empty when it follows it)."""
    from indextables.protocol.hotcache import parse_hotcache
    from indextables.protocol.splitbundle import SPLIT_FIELDS, SPLIT_MAGIC

    footer = parse_split_footer(data, footer_start_offset=_start(data))
    problems = []
    start = footer.footer_start_offset
    if footer.files.get(SPLIT_FIELDS) != (start, start):
        problems.append(f"split_fields is {footer.files.get(SPLIT_FIELDS)}, not empty at {start}")
    ranges = sorted(footer.files.values())
    if ranges[0][0] != 0 or any(a[1] != b[0] for a, b in itertools.pairwise(ranges)):
        problems.append("file ranges leave gaps or overlap")
    if ranges[-1][1] != start:
        problems.append("file data does not end at the footer")
    meta_end = footer.footer_end_offset - 8 - len(footer.hotcache)
    meta = data[start:meta_end]
    if meta[:4] != SPLIT_MAGIC.to_bytes(4, "little"):
        problems.append("bad magic")
    table = meta[8:]
    if table != json.dumps(json.loads(table), separators=(",", ":")).encode():
        problems.append("file table is not compact JSON")
    listed = {name for name, _ in parse_hotcache(footer.hotcache).file_lengths}
    # Every bundled file but split_fields and our Arrow row copy belongs to the index.
    index_files = set(footer.files) - {SPLIT_FIELDS, "indextables-rows.arrow"}
    if listed != index_files:
        problems.append(f"hotcache lists {sorted(listed)}, index files are {sorted(index_files)}")
    lengths = dict(parse_hotcache(footer.hotcache).file_lengths)
    for name, length in lengths.items():
        begin, end = footer.files[name]
        if end - begin != length:
            problems.append(f"hotcache length of {name} is {length}, bundle has {end - begin}")
    return problems


def test_golden_splits_follow_the_reference_layout(golden_table: Path) -> None:
    for split in sorted(golden_table.rglob("*.split")):
        assert _layout_problems(split.read_bytes()) == [], split


def test_our_bundles_follow_the_reference_layout(tmp_path: Path) -> None:
    schema = tantivy.SchemaBuilder().add_text_field("body", stored=True).build()
    source = tmp_path / "index"
    source.mkdir()
    index = tantivy.Index(schema, path=str(source))
    writer = index.writer(15_000_000, 1)
    for i in range(50):
        writer.add_document(tantivy.Document(body=f"doc {i}"))
    writer.commit()
    writer.wait_merging_threads()
    (source / "indextables-rows.arrow").write_bytes(b"rows" * 100)
    buffer = io.BytesIO()
    footer = write_split_bundle(source, buffer)
    data = buffer.getvalue()
    assert _layout_problems(data) == []
    order = [n for n, _ in sorted(footer.files.items(), key=lambda item: item[1])]
    assert order[-4:] == [".managed.json", "meta.json", "indextables-rows.arrow", "split_fields"]
    assert all(n.split(".")[0] for n in order[:-4])  # segment files come first
