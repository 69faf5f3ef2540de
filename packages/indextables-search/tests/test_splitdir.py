"""``splits.splitdir``: the files of one kind in a split directory, replaced by a rename."""

from __future__ import annotations

import os
from pathlib import Path

from indextables.search.splits.splitdir import files_of_kind, replace_by_rename


def test_files_of_kind_lists_one_suffix_in_name_order(tmp_path: Path) -> None:
    for name in ["b.term", "a.term", "a.store", "c.term.1234.tmp", "meta.json", "term"]:
        (tmp_path / name).write_bytes(b"x")
    assert files_of_kind(str(tmp_path), ".term") == [
        str(tmp_path / "a.term"),
        str(tmp_path / "b.term"),
    ]
    assert files_of_kind(str(tmp_path), ".store") == [str(tmp_path / "a.store")]
    assert files_of_kind(str(tmp_path), ".fast") == []


def test_replace_by_rename_keeps_an_open_reader_on_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "seg.store"
    path.write_bytes(b"old contents")
    with open(path, "rb") as reader:
        before = os.fstat(reader.fileno()).st_ino
        replace_by_rename(str(path), b"new")
        assert reader.read() == b"old contents"
    assert path.read_bytes() == b"new"
    assert os.stat(path).st_ino != before
    assert sorted(os.listdir(tmp_path)) == ["seg.store"]  # no staging file left
