"""PURGE DELETES: ``merge_splits(purge_deletes=True)`` rewrites the splits holding deleted
documents, and after it, PURGE and the log's truncation, no byte of the table holds a
deleted value.

The byte scan reads every file under the table root (splits, version files, Avro
states and manifests, checkpoints) for each deleted row's secret; it first proves
it finds them while they are still there (right after the delete), so an empty
result after the purge means they are gone, not that the scan is blind.
"""

from __future__ import annotations

import random
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from indextables.search import delete_rows, merge_splits, open_table, write_table
from indextables.search.errors import ArgumentError
from indextables.search.table.tableaccess import table_handle

OPTIONS = {"spark.indextables.indexing.typemap.msg": "text"}
NO_CHECK = {"spark.indextables.purge.retentionCheckEnabled": "false"}


def _secret(rng: random.Random) -> str:
    # random letters: no two share a long prefix, so a term dictionary's prefix
    # sharing keeps each one's tail as it is
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(24))


def _table(tmp_path: Path, seed: int) -> tuple[str, pa.Table]:
    rng = random.Random(seed)
    n = 120
    secrets = [_secret(rng) for _ in range(n)]
    data = pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "secret": pa.array(secrets),
            "msg": pa.array([f"user token {s} logged" for s in secrets]),
            "day": pa.array([i % 2 for i in range(n)], pa.int32()),
        }
    )
    uri = str(tmp_path / "t")
    for start in range(0, n, 40):
        write_table(uri, data.slice(start, 40), partition_by="day", options=OPTIONS)
    return uri, data


def _holding(root: Path, values: list[str]) -> dict[str, list[str]]:
    """value -> the files (relative) whose bytes contain it (its last 16 characters: a
    term dictionary stores a term's prefix shared with the one before it once)."""
    found: dict[str, list[str]] = {}
    files = [p for p in root.rglob("*") if p.is_file()]
    for path in files:
        blob = path.read_bytes()
        for value in values:
            if value[-16:].encode() in blob:
                found.setdefault(value, []).append(str(path.relative_to(root)))
    return found


def _deleted(data: pa.Table, seed: int) -> list[int]:
    ids = sorted(data.column("id").to_pylist(), key=lambda i: data["secret"][i].as_py())
    rng = random.Random(seed + 100)
    # the smallest and largest secrets (the statistics' min and max) and some others
    return sorted({ids[0], ids[-1], *rng.sample(ids[1:-1], 15)})


@pytest.mark.parametrize("seed", [1, 2])
def test_no_file_holds_a_deleted_value_after_purge_deletes_and_purge(
    tmp_path: Path, seed: int
) -> None:
    uri, data = _table(tmp_path, seed)
    root = Path(uri)
    gone = _deleted(data, seed)
    secrets = [data["secret"][i].as_py() for i in gone]
    kept = [s for i, s in enumerate(data["secret"].to_pylist()) if i not in set(gone)]
    where = f"id IN ({', '.join(map(str, gone))})"
    assert delete_rows(uri, where=where).rows_deleted == len(gone)
    # the scan sees them: still in the splits' bytes after the delete (only hidden)
    after_delete = _holding(root, secrets)
    assert set(after_delete) == set(secrets)
    assert all(any(f.endswith(".split") for f in files) for files in after_delete.values())

    result = merge_splits(uri, purge_deletes=True, target_size=1)  # no merges: purges only
    assert result.status == "SUCCESS"
    assert result.splits_written == result.splits_merged >= 1  # one new split per purged one
    live_splits = set(open_table(uri).files)
    holding = {p for files in _holding(root, secrets).values() for p in files}
    assert holding
    assert not holding & live_splits
    # the old splits and version files still hold them while time travel reaches them
    assert all(p.endswith(".split") or "_transaction_log" in p for p in holding)
    table = table_handle(uri, NO_CHECK)
    table.truncate_time_travel()
    table.purge(older_than=0, log_retention=0)
    # the log no longer holds them; the splits the purge removed stay while the version
    # that removed them (its remove actions name them) is retained
    removed = {p for files in _holding(root, secrets).values() for p in files}
    assert removed
    assert all(p.endswith(".split") for p in removed)
    assert not removed & set(open_table(uri).files)
    extra = pa.table({"id": [10_000], "secret": ["plain"], "msg": ["x"], "day": [0]})
    write_table(uri, extra.cast(data.schema), options=OPTIONS)  # the table goes on
    table.truncate_time_travel()
    table.purge(older_than=0, log_retention=0)
    assert _holding(root, secrets) == {}
    # every kept row is still there, the deleted ones are not
    duck = duckdb.connect()
    duck.register("data", data)
    want = duck.sql(f"SELECT id FROM data WHERE NOT ({where}) ORDER BY id").fetchall()
    want.append((10_000,))
    kept.append("plain")
    got = open_table(uri).search(columns=["id", "secret"])
    assert sorted(got.column("id").to_pylist()) == [r[0] for r in want]
    assert sorted(got.column("secret").to_pylist()) == sorted(kept)
    assert open_table(uri).count(query="msg:token") == len(kept) - 1


def test_min_deleted_fraction_picks_the_splits_above_it(tmp_path: Path) -> None:
    uri, data = _table(tmp_path, 3)
    splits = set(open_table(uri).files)
    # one split (ids 0..39, day 0: 20 rows) loses 10 rows, another (day 1, ids 41..79) 1
    delete_rows(uri, where="id IN (0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 41)")
    changed = set(open_table(uri).files) - splits
    assert len(changed) == 2
    result = merge_splits(uri, purge_deletes=True, min_deleted_fraction=0.25, target_size=1)
    assert result.splits_merged == 1
    left = set(open_table(uri).files)
    assert len(changed & left) == 1  # the split with 1 of 20 deleted stays
    assert open_table(uri).count() == data.num_rows - 11


def test_arguments_are_checked(tmp_path: Path) -> None:
    uri, _ = _table(tmp_path, 4)
    for kwargs in (
        {"min_deleted_fraction": 0.5},
        {"purge_deletes": True, "min_deleted_fraction": 0},
        {"purge_deletes": True, "min_deleted_fraction": 1.5},
        {"purge_deletes": "yes"},
        {"target_size": 0},
        {"where": ""},
    ):
        with pytest.raises(ArgumentError):
            merge_splits(uri, **kwargs)  # type: ignore[arg-type]
    assert merge_splits(uri, target_size=1).status == "NO_ACTION"
    assert merge_splits(uri, purge_deletes=True).status == "SUCCESS"  # merges, nothing to purge
