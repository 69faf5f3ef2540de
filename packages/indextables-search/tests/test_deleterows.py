"""``delete_rows``: rows deleted with Tantivy's delete bitsets, against DuckDB and tantivy-py.

Random hostile tables (``diffcases.rows``) take random deletes (``where`` conditions,
Tantivy queries, both) with the differential tests' oracles (DuckDB over the same
rows, the Python query model); after each delete ``search``, ``count`` (from the
log and from the index), ``aggregate`` and time travel answer as the oracle over
the rows minus the deleted ones; tantivy-py opening a rewritten split itself skips
exactly the deleted documents.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import sys
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest
import tantivy

from indextables.protocol import CommitConflictError
from indextables.protocol.splitbundle import unbundle_split
from indextables.search import open_table, write_table
from indextables.search.errors import ArgumentError, CompanionError
from indextables.search.splits.termdict import to_fst
from indextables.search.table.tableaccess import load_view
from indextables.search.write.deleterows import (
    DeleteResult,
    commit_deletes,
    delete_rows,
    plan_deletes,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from diffcases import OPTIONS, PARTITION_BY, Case, cases, condition, rows
from writedata import row_multiset

ROWS = 240
COPY_KEY = "spark.indextables.indexWriter.arrowCopy"


def _build(tmp_path: Path, seed: int, copy: str | None) -> tuple[str, pa.Table]:
    data = rows(seed, ROWS)
    uri = str(tmp_path / f"t{seed}")
    options = {**OPTIONS, **({COPY_KEY: copy} if copy else {})}
    half = ROWS // 2
    for start in (0, half):
        write_table(uri, data.slice(start, half), partition_by=PARTITION_BY, options=options)
    return uri, data


def _oracle(duck: Any, data: pa.Table, case: Case) -> set[int]:
    ids = {r["id"] for r in data.to_pylist() if case.match(r)}
    if case.duck_where:
        found = duck.execute(f"SELECT id FROM data WHERE {case.duck_where}").fetchall()
        ids &= {r[0] for r in found}
    return ids


def _deletes(seed: int) -> list[Case]:
    """Deletes by query, by query and where, and by where alone (DuckDB's oracle)."""
    searched = [
        c for c in cases(seed, 80) if (c.query or c.where) and not c.textsearch and not c.fieldmatch
    ]
    rng = random.Random(seed * 31 + 5)
    plain = []
    for _ in range(3):
        where, duck = condition(rng)
        plain.append(Case(where=where, duck_where=duck))
    picked = rng.sample(searched, min(5, len(searched)))
    return [picked[0], plain[0], *picked[1:3], plain[1], *picked[3:], plain[2]]


def _check(uri: str, data: pa.Table, duck: Any, alive: set[int], version: int | None) -> None:
    table = open_table(uri) if version is None else open_table(uri, version=version)
    expected = [r for r in data.to_pylist() if r["id"] in alive]
    got = table.search()
    assert row_multiset(got.to_pylist()) == row_multiset(expected)
    assert table.count() == len(alive)  # from the log's numRecords
    assert sorted(table.search(columns=["id"]).column("id").to_pylist()) == sorted(alive)
    duck.register("alive", pa.table({"id": pa.array(sorted(alive), pa.int64())}))
    live = "FROM data WHERE id IN (SELECT id FROM alive)"
    (want,) = duck.execute(f"SELECT count(*) {live} AND i32 > 0").fetchone()
    assert table.count(where="i32 > 0") == want  # from the index
    (want,) = duck.execute(f"SELECT count(*) {live} AND t IS NOT NULL").fetchone()
    assert table.count(where="t IS NOT NULL") == want
    groups = table.aggregate(group_by=["p"], metrics={"c": "count", "m": ("max", "i32")})
    found = duck.execute(f"SELECT p, count(*), max(i32) {live} GROUP BY p").fetchall()
    assert sorted(groups.to_pylist(), key=repr) == sorted(
        ({"p": p, "c": c, "m": m} for p, c, m in found), key=repr
    )
    groups = table.aggregate(group_by=["b"], metrics={"c": "count", "lo": ("min", "i16")})
    found = duck.execute(f"SELECT b, count(*), min(i16) {live} GROUP BY b").fetchall()
    assert sorted(groups.to_pylist(), key=repr) == sorted(
        ({"b": b, "c": c, "lo": lo} for b, c, lo in found), key=repr
    )


@pytest.mark.parametrize(("seed", "copy"), [(1, "all"), (2, None), (3, "all")])
def test_random_deletes_answer_as_duckdb_over_the_rows_left(
    tmp_path: Path, seed: int, copy: str | None
) -> None:
    uri, data = _build(tmp_path, seed, copy)
    duck = duckdb.connect()
    duck.register("data", data)
    alive = set(range(ROWS))
    history = [(open_table(uri).version, set(alive))]
    deleted_any = False
    for case in _deletes(seed):
        want = _oracle(duck, data, case) & alive
        before = open_table(uri).version
        result = delete_rows(uri, where=case.where, query=case.query)
        assert result.rows_deleted == len(want), case
        alive -= want
        if want:
            deleted_any = True
            assert result.version == before + 1
            assert result.splits_changed >= 1
        else:
            assert result == dataclasses.replace(result, splits_changed=0, version=None)
            assert open_table(uri).version == before
        _check(uri, data, duck, alive, None)
        history.append((open_table(uri).version, set(alive)))
    assert deleted_any
    for version, ids in history[:-1]:  # time travel sees the rows deleted later
        _check(uri, data, duck, ids, version)


def _simple_table(tmp_path: Path, copy: str | None = "all") -> tuple[str, pa.Table]:
    rng = random.Random(7)
    n = 300
    data = pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "level": [rng.choice(["INFO", "WARN", "ERROR"]) for _ in range(n)],
            "msg": [f"{rng.choice(['disk', 'net', 'cpu'])} event {i}" for i in range(n)],
        }
    )
    uri = str(tmp_path / "simple")
    options = {"spark.indextables.indexing.typemap.msg": "text"}
    if copy:
        options[COPY_KEY] = copy
    for start in (0, 100, 200):
        write_table(uri, data.slice(start, 100), options=options)
    return uri, data


def _raw_index(uri: str, split: str, target: Path) -> tantivy.Index:
    """A split unbundled as tantivy-py reads it (FST term dictionaries)."""
    unbundle_split(Path(uri, split).read_bytes(), target)
    for name in os.listdir(target):
        if name.endswith(".term"):
            path = target / name
            path.write_bytes(to_fst(path.read_bytes()))
    return tantivy.Index.open(str(target))


def test_tantivy_py_skips_exactly_the_deleted_documents(tmp_path: Path) -> None:
    uri, data = _simple_table(tmp_path)
    first = delete_rows(uri, where="level = 'ERROR' AND id < 150")
    second = delete_rows(uri, query="msg:disk")  # existing deletes are kept and OR-ed
    assert first.version is not None
    assert second.version == first.version + 1
    levels = data.column("level").to_pylist()
    msgs = data.column("msg").to_pylist()
    alive = {
        i
        for i in range(300)
        if not (levels[i] == "ERROR" and i < 150) and not msgs[i].startswith("disk ")
    }
    assert first.rows_deleted == sum(1 for i in range(150) if levels[i] == "ERROR")
    seen: set[int] = set()
    view = load_view(uri, {})
    for number, split in enumerate(view.splits):
        index = _raw_index(uri, split.path, tmp_path / f"raw{number}")
        searcher = index.searcher()
        assert searcher.num_docs == split.num_records
        hits = searcher.search(tantivy.Query.all_query(), limit=1000).hits
        ids = {searcher.doc(address)["id"][0] for _, address in hits}
        assert len(ids) == searcher.num_docs
        seen |= ids
        meta = json.loads((tmp_path / f"raw{number}" / "meta.json").read_text())
        assert all(s.get("deletes") for s in meta["segments"])
    assert seen == alive
    assert sum(s.num_records or 0 for s in view.splits) == len(alive)


def test_statistics_and_row_copy_are_kept(tmp_path: Path) -> None:
    uri, data = _simple_table(tmp_path)
    before = load_view(uri, {}).splits
    old = sorted(repr((s.min_values, s.max_values, s.doc_mapping_json)) for s in before)
    delete_rows(uri, where="level = 'INFO'")
    after = load_view(uri, {}).splits
    assert sorted(repr((s.min_values, s.max_values, s.doc_mapping_json)) for s in after) == old
    assert all(s.entry.ref.footer_end_offset == s.size for s in after)
    left = [r["id"] for r in data.to_pylist() if r["level"] != "INFO"]
    table = open_table(uri)
    assert table.count() == len(left) < 300
    assert sorted(table.search(columns=["id"]).column("id").to_pylist()) == left


def test_a_split_losing_every_row_is_only_removed(tmp_path: Path) -> None:
    uri, _ = _simple_table(tmp_path)
    result = delete_rows(uri, where="id < 100")  # the whole first split
    assert result.rows_deleted == 100
    view = load_view(uri, {})
    assert len(view.splits) == 2
    assert open_table(uri).count() == 200


def test_nothing_matched_and_dry_runs_commit_nothing(tmp_path: Path) -> None:
    uri, data = _simple_table(tmp_path)
    version = open_table(uri).version
    assert delete_rows(uri, where="id < 0") == DeleteResult(0, 0, None)
    dry = delete_rows(uri, query="level:WARN", dry_run=True)
    warned = data.column("level").to_pylist().count("WARN")
    assert dry == DeleteResult(warned, 3, None)
    assert open_table(uri).version == version
    assert open_table(uri).count() == 300


def test_arguments_are_checked(tmp_path: Path) -> None:
    uri, _ = _simple_table(tmp_path, copy=None)
    with pytest.raises(ArgumentError, match="where= or query="):
        delete_rows(uri)
    with pytest.raises(ArgumentError, match="where"):
        delete_rows(uri, where="  ")
    view = load_view(uri, {})
    companion = dataclasses.replace(
        view, configuration={**view.configuration, "indextables.companion.enabled": "true"}
    )
    with pytest.raises(CompanionError, match="companion index"):
        plan_deletes(companion, where="id = 1")


def test_a_delete_racing_one_on_the_same_split_fails_with_a_conflict(tmp_path: Path) -> None:
    uri, _ = _simple_table(tmp_path)
    plan = plan_deletes(load_view(uri, {}), where="id = 5")
    winner = delete_rows(uri, where="id = 6")  # the same split, committed first
    assert winner.version is not None
    files_before = sorted(p.name for p in Path(uri).iterdir())
    with pytest.raises(CommitConflictError):
        commit_deletes(plan)
    assert sorted(p.name for p in Path(uri).iterdir()) == files_before  # no orphan split
    table = open_table(uri)
    assert table.count() == 299
    assert table.count(where="id = 5") == 1


@pytest.mark.parametrize("name", ["04_partitioned", "02_five_appends"])
def test_splits_the_reference_wrote_take_deletes(
    tmp_path: Path, golden_copy: Any, expected: Any, name: str
) -> None:
    uri = str(golden_copy(name))
    rows_before = expected(name)["rows"]
    ids = sorted(r["id"] for r in rows_before)
    cut = ids[len(ids) // 2]
    result = delete_rows(uri, where=f"id >= {cut}")
    alive = {i for i in ids if i < cut}
    assert result.rows_deleted == len(ids) - len(alive)
    table = open_table(uri)
    assert table.count() == len(alive)
    assert sorted(table.search(columns=["id"]).column("id").to_pylist()) == sorted(alive)
    seen: set[int] = set()
    for number, split in enumerate(load_view(uri, {}).splits):
        index = _raw_index(uri, split.path, tmp_path / f"raw{number}")
        searcher = index.searcher()
        hits = searcher.search(tantivy.Query.all_query(), limit=1000).hits
        seen |= {searcher.doc(address)["id"][0] for _, address in hits}
        assert searcher.num_docs == split.num_records == len(hits)
    assert seen == alive


@pytest.mark.parametrize("copy", ["all", None])
def test_merge_splits_after_a_delete_keeps_the_rows_deleted(
    tmp_path: Path, copy: str | None
) -> None:
    from indextables.search.write.merge import merge_table

    uri, data = _simple_table(tmp_path, copy=copy)
    delete_rows(uri, where="level = 'WARN'")
    merged = merge_table(uri)
    assert merged["merged_files"] == 3
    left = sorted(r["id"] for r in data.to_pylist() if r["level"] != "WARN")
    table = open_table(uri)
    assert len(table.files) == 1
    assert table.count() == len(left)
    assert sorted(table.search(columns=["id"]).column("id").to_pylist()) == left
    assert table.count(query="level:WARN") == 0


def test_the_documented_example_runs(tmp_path: Path) -> None:
    from docexample import run_example

    lines = run_example("Deleting rows", tmp_path).strip().splitlines()
    assert lines == ["1 1 2", "2 3"]


def test_a_delete_logs_one_info_line(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    import logging

    uri, data = _simple_table(tmp_path, copy=None)
    errors = data.column("level").to_pylist().count("ERROR")
    with caplog.at_level(logging.INFO, logger="indextables.search.write.deleterows"):
        result = delete_rows(uri, where="level = 'ERROR'")
    lines = [r for r in caplog.records if r.name == "indextables.search.write.deleterows"]
    assert len(lines) == 1
    text = lines[0].getMessage()
    assert lines[0].levelno == logging.INFO
    assert f"version={result.version}" in text
    assert f"rows={errors}" in text
    assert "splits_changed=3" in text


def test_a_delete_racing_a_merge_an_overwrite_or_an_append(tmp_path: Path) -> None:
    from indextables.search.write.merge import merge_table

    uri, data = _simple_table(tmp_path)
    # A MERGE SPLITS committed after the delete planned: the delete conflicts.
    plan = plan_deletes(load_view(uri, {}), where="id = 5")
    assert merge_table(uri)["new_files"] == 1
    with pytest.raises(CommitConflictError):
        commit_deletes(plan)
    assert open_table(uri).count(where="id = 5") == 1
    # An append committed meanwhile: the delete wins and the appended rows stay.
    plan = plan_deletes(load_view(uri, {}), where="id = 5")
    extra = pa.table({"id": [1000, 5], "level": ["INFO", "INFO"], "msg": ["net x", "net y"]})
    write_table(uri, extra)
    commit_deletes(plan)
    table = open_table(uri)
    assert table.count() == 301
    assert sorted(table.search(where="id = 5 OR id = 1000").column("msg").to_pylist()) == [
        "net x",
        "net y",
    ]
    # An overwrite committed meanwhile: the delete conflicts and the new rows stay.
    plan = plan_deletes(load_view(uri, {}), where="id = 1000")
    write_table(uri, data.slice(0, 10), mode="overwrite")
    with pytest.raises(CommitConflictError):
        commit_deletes(plan)
    assert sorted(open_table(uri).search(columns=["id"]).column("id").to_pylist()) == list(
        range(10)
    )


def _split_files(uri: str) -> dict[str, int]:
    return {p.name: p.stat().st_size for p in Path(uri).rglob("*.split")}


@pytest.mark.parametrize(
    ("where", "read", "rewritten"),
    [
        ("id < 150 AND level = 'ERROR'", 2, 2),  # the third split's statistics prune it
        ("id < 100", 1, 0),  # one split, every row: removed, nothing written
        ("level = 'WARN'", 3, 3),
    ],
)
def test_a_delete_reports_splits_read_and_bytes_written(
    tmp_path: Path, where: str, read: int, rewritten: int
) -> None:
    from indextables.search import last_metrics

    uri, _ = _simple_table(tmp_path, copy=None)
    before = _split_files(uri)
    dry = delete_rows(uri, where=where, dry_run=True)
    metrics = last_metrics()
    assert metrics is not None
    assert metrics.operation == "delete"
    assert (metrics.splits_read, metrics.splits_written, metrics.bytes_written) == (read, 0, 0)
    result = delete_rows(uri, where=where)
    metrics = last_metrics()
    assert metrics is not None
    assert metrics.version == result.version is not None
    new = {name: size for name, size in _split_files(uri).items() if name not in before}
    assert len(new) == rewritten
    assert metrics.rows == result.rows_deleted == dry.rows_deleted
    assert metrics.splits_read == read
    assert metrics.splits_written == rewritten
    assert metrics.bytes_written == sum(new.values())
