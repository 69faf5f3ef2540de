"""``splits.segmentdeletes``: deletes added to an index directory as tantivy-py records them."""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path

import pytest
import tantivy

from indextables.search.splits.delbitset import DeleteFileError
from indextables.search.splits.segmentdeletes import add_deletes


def _index(directory: Path, n: int) -> tantivy.Index:
    builder = tantivy.SchemaBuilder()
    builder.add_integer_field("id", stored=True, indexed=True, fast=True)
    index = tantivy.Index(builder.build(), path=str(directory))
    writer = index.writer(15_000_000, 1)
    for doc in range(n):
        writer.add_document(tantivy.Document(id=doc))
    writer.commit()
    writer.wait_merging_threads()
    return index


def _tantivy_delete(directory: Path, ids: list[int]) -> None:
    index = tantivy.Index.open(str(directory))
    writer = index.writer(15_000_000, 1)
    for doc in ids:
        writer.delete_documents_by_term("id", doc)
    writer.commit()
    writer.wait_merging_threads()


def _segment(directory: Path) -> dict:
    (segment,) = json.loads((directory / "meta.json").read_text())["segments"]
    return dict(segment)


def _del_files(directory: Path) -> dict[str, bytes]:
    return {n: (directory / n).read_bytes() for n in os.listdir(directory) if n.endswith(".del")}


def test_two_rounds_of_deletes_equal_tantivy_pys_own(tmp_path: Path) -> None:
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    ours.mkdir()
    _index(ours, 200)
    shutil.copytree(ours, theirs)
    rng = random.Random(3)
    segment_id = _segment(ours)["segment_id"]
    first = sorted(rng.sample(range(200), 30))
    second = sorted(rng.sample(sorted(set(range(200)) - set(first)), 20))
    for ids in (first, second):
        # A fresh tantivy-py index's doc ids are the written order: doc d holds id d.
        done = add_deletes(str(ours), {segment_id: ids})
        assert done.deleted == len(ids)
        _tantivy_delete(theirs, ids)
        assert (
            _segment(ours)["deletes"]["num_deleted_docs"]
            == (_segment(theirs)["deletes"]["num_deleted_docs"])
        )
        assert list(_del_files(ours).values()) == list(_del_files(theirs).values())
    assert done.alive == 150
    assert len(_del_files(ours)) == 1  # the first round's file was dropped
    managed = json.loads((ours / ".managed.json").read_text())
    assert [n for n in managed if n.endswith(".del")] == list(_del_files(ours))
    searcher = tantivy.Index.open(str(ours)).searcher()
    assert searcher.num_docs == 150
    hits = searcher.search(tantivy.Query.all_query(), limit=500).hits
    alive = {searcher.doc(a)["id"][0] for _, a in hits}
    assert alive == set(range(200)) - set(first) - set(second)


def test_unknown_segments_and_doc_ids_are_refused(tmp_path: Path) -> None:
    _index(tmp_path, 10)
    segment_id = _segment(tmp_path)["segment_id"]
    before = (tmp_path / "meta.json").read_text()
    with pytest.raises(DeleteFileError, match="not in the split"):
        add_deletes(str(tmp_path), {"00000000-0000-0000-0000-000000000000": [1]})
    with pytest.raises(DeleteFileError, match="outside"):
        add_deletes(str(tmp_path), {segment_id: [10]})
    assert (tmp_path / "meta.json").read_text() == before
    assert not _del_files(tmp_path)
