"""Symbolic links inside a local table's root never reach files outside it.

A split file, or a partition directory, replaced by a link to another table's
split: search and MERGE SPLITS refuse it (the local store's KeyOutsideRootError)
instead of returning or copying the other table's rows.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pyarrow as pa
import pytest

from indextables.search import open_table, write_table
from indextables.search.table.tableaccess import load_view, table_handle
from indextables.search.write.merge import merge_table
from indextables.storage import KeyOutsideRootError


def _rows(start: int, count: int, part: str) -> pa.Table:
    ids = list(range(start, start + count))
    return pa.table(
        {"id": pa.array(ids, pa.int64()), "s": [f"w{i}" for i in ids], "p": [part] * count}
    )


def _split_paths(uri: Path) -> list[str]:
    return sorted(split.path for split in load_view(str(uri), {}).splits)


def _tables(tmp_path: Path) -> tuple[Path, Path]:
    """A table of two splits (ids 0..99) and, beside it, another one (ids 1000..1099)."""
    table, other = tmp_path / "table", tmp_path / "other"
    write_table(str(table), _rows(0, 50, "a"), partition_by="p")
    write_table(str(table), _rows(50, 50, "a"), partition_by="p")
    write_table(str(other), _rows(1000, 50, "a"), partition_by="p")
    write_table(str(other), _rows(1050, 50, "a"), partition_by="p")
    return table, other


def _link_split_file(table: Path, other: Path) -> None:
    """Replace each of the table's split files by a link to one of the other table's."""
    for own, theirs in zip(_split_paths(table), _split_paths(other), strict=True):
        (table / own).unlink()
        os.symlink(other / theirs, table / own)


def _link_directory(table: Path, other: Path) -> None:
    """Replace the table's partition directory by a link to a copy holding the other's rows."""
    outside = other.parent / "outside-dir"
    outside.mkdir()
    for own, theirs in zip(_split_paths(table), _split_paths(other), strict=True):
        shutil.copy(other / theirs, outside / Path(own).name)
    directory = table / Path(_split_paths(table)[0]).parent
    shutil.rmtree(directory)
    os.symlink(outside, directory)


@pytest.mark.parametrize("link", [_link_split_file, _link_directory], ids=["file", "directory"])
def test_search_refuses_a_split_reached_through_a_link_out_of_the_root(
    tmp_path: Path, link: object
) -> None:
    table, other = _tables(tmp_path)
    assert sorted(open_table(str(table)).to_arrow().column("id").to_pylist()) == list(range(100))
    link(table, other)  # type: ignore[operator]
    cache = {"spark.indextables.cache.directoryPath": str(tmp_path / "fresh-cache")}
    with pytest.raises(KeyOutsideRootError, match="outside the store's root"):
        open_table(str(table), options=cache).search(where="id >= 0")


@pytest.mark.parametrize("link", [_link_split_file, _link_directory], ids=["file", "directory"])
def test_merge_refuses_a_split_reached_through_a_link_out_of_the_root(
    tmp_path: Path, link: object
) -> None:
    table, other = _tables(tmp_path)
    link(table, other)  # type: ignore[operator]
    cache = {"spark.indextables.cache.directoryPath": str(tmp_path / "fresh-cache")}
    before = _split_paths(table)
    result = merge_table(str(table), options=cache)
    assert (result["status"], result["new_files"], result["skipped_groups"]) == ("PARTIAL", 0, 1)
    assert _split_paths(table) == before  # nothing merged in
    reasons = {skip.path: skip.reason for skip in table_handle(str(table), {}).skipped_files()}
    assert sorted(reasons) == before
    assert all(reason.startswith("KeyOutsideRootError:") for reason in reasons.values()), reasons
