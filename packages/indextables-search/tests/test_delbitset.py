"""``splits.delbitset``: Tantivy's delete files, byte for byte as tantivy-py writes them."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest
import tantivy

from indextables.search.splits.delbitset import (
    AliveBitset,
    DeleteFileError,
    delete_file_name,
    encode_alive_bitset,
    parse_alive_bitset,
)


def _tantivy_deletes(directory: Path, max_doc: int, deleted: list[int]) -> tuple[str, bytes, dict]:
    """tantivy-py's own delete file and meta.json segment for ``deleted`` of ``max_doc`` docs."""
    builder = tantivy.SchemaBuilder()
    builder.add_integer_field("id", stored=True, indexed=True, fast=True)
    index = tantivy.Index(builder.build(), path=str(directory))
    writer = index.writer(15_000_000, 1)
    for doc in range(max_doc):
        writer.add_document(tantivy.Document(id=doc))
    writer.commit()
    for doc in deleted:
        writer.delete_documents_by_term("id", doc)
    writer.commit()
    writer.wait_merging_threads()
    meta = json.loads((directory / "meta.json").read_text())
    (segment,) = meta["segments"]
    (name,) = [n for n in os.listdir(directory) if n.endswith(".del")]
    return name, (directory / name).read_bytes(), segment


@pytest.mark.parametrize("max_doc", [2, 7, 63, 64, 65, 130, 1000])
def test_encoded_delete_file_equals_tantivy_pys(tmp_path: Path, max_doc: int) -> None:
    rng = random.Random(max_doc)
    # Tantivy drops a segment whose documents are all deleted: keep one alive.
    deleted = sorted(rng.sample(range(max_doc), max(1, max_doc // 5)))[: max_doc - 1]
    name, data, segment = _tantivy_deletes(tmp_path, max_doc, deleted)
    bitset = AliveBitset(max_doc, frozenset(deleted))
    assert encode_alive_bitset(bitset) == data
    assert parse_alive_bitset(data) == bitset
    deletes = segment["deletes"]
    assert deletes["num_deleted_docs"] == len(deleted)
    assert name == delete_file_name(segment["segment_id"], deletes["opstamp"])


def test_with_deleted_keeps_existing_deletes_and_refuses_outside_ids() -> None:
    bitset = AliveBitset(10, frozenset({1, 2})).with_deleted([2, 9])
    assert bitset.deleted == frozenset({1, 2, 9})
    assert bitset.num_deleted == 3
    with pytest.raises(DeleteFileError, match="outside"):
        bitset.with_deleted([10])


def test_damaged_delete_files_are_refused() -> None:
    good = encode_alive_bitset(AliveBitset(100, frozenset({5})))
    flipped = bytearray(good)
    flipped[6] ^= 0x01
    with pytest.raises(DeleteFileError, match="checksum"):
        parse_alive_bitset(bytes(flipped), name="x.del")
    with pytest.raises(DeleteFileError, match="magic"):
        parse_alive_bitset(good[:-4] + (1338).to_bytes(4, "little"))
    with pytest.raises(DeleteFileError, match="too short"):
        parse_alive_bitset(b"\x01\x02")
    with pytest.raises(DeleteFileError, match="footer length"):
        parse_alive_bitset(
            b"\x00" * 4 + (10**6).to_bytes(4, "little") + (1337).to_bytes(4, "little")
        )
