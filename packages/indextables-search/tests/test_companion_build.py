"""The companion build pipeline: segment row ranges read back column-wise, groups built
in parallel worker processes (docs/companion.md, "How a sync works")."""

from __future__ import annotations

import json
import os
import random
import threading
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import tantivy
from test_companion import canonical, hostile

from indextables.search import build_companion, open_table
from indextables.search.companion import build, parallel
from indextables.search.companion.build import companion_schema
from indextables.search.companion.manifest import ParquetFileEntry, SegmentRowRange
from indextables.search.companion.parallel import PARALLELISM_OPTION
from indextables.search.companion.pathhash import FILE_HASH_FIELD, ROW_IN_FILE_FIELD, path_hash
from indextables.search.errors import CompanionSourceError, OptionError
from indextables.search.options import IndexingOptions
from indextables.search.schema.mapping import field_specs
from indextables.search.write.splitwriter import PartitionIndex

CACHE = "spark.indextables.cache.directoryPath"
SPECS = tuple(
    replace(s, stored=False)
    for s in field_specs(pa.schema([("s", pa.string())]), IndexingOptions())
)


def _entry(path: str, offset: int, rows: int) -> ParquetFileEntry:
    return ParquetFileEntry(
        relative_path=path, file_size_bytes=1, row_offset=offset, num_rows=rows,
        has_offset_index=False, row_groups=(),
    )  # fmt: skip


def _index(commits: Sequence[Sequence[tuple[str, int]]]) -> PartitionIndex:
    """An index with one segment per commit, its documents the given (file, row) in order."""
    part = PartitionIndex.create(
        SPECS, companion_schema(SPECS), heap_size=15_000_000,
        hidden_fast=(FILE_HASH_FIELD, ROW_IN_FILE_FIELD),
    )  # fmt: skip
    for documents in commits:
        for path, row in documents:
            doc = tantivy.Document()
            doc.add_text("s", "x")
            doc.add_unsigned(FILE_HASH_FIELD, path_hash(path))
            doc.add_unsigned(ROW_IN_FILE_FIELD, row)
            part.writer.add_document(doc)
        part.writer.commit()
    part.commit()
    return part


def _by_search(
    part: PartitionIndex, entries: Sequence[ParquetFileEntry]
) -> tuple[SegmentRowRange, ...]:
    """The ranges from every document's address and coordinates, one Python object each
    (the builder's former way): what the column-wise read must equal."""
    part.index.reload()
    searcher = part.index.searcher()
    hits = searcher.search(tantivy.Query.all_query(), limit=searcher.num_docs, count=False).hits
    addresses = sorted((a for _, a in hits), key=lambda a: (a.segment_ord, a.doc))
    hashes = searcher.fast_field_values(FILE_HASH_FIELD, addresses)
    in_file = searcher.fast_field_values(ROW_IN_FILE_FIELD, addresses)
    starts = {path_hash(e.relative_path): e.row_offset for e in entries}
    rows: dict[int, list[tuple[int, int]]] = {}
    for address, file_hash, row in zip(addresses, hashes, in_file, strict=True):
        rows.setdefault(address.segment_ord, []).append(
            (address.doc, starts[int(file_hash)] + int(row))  # type: ignore[arg-type]
        )
    exact, offset, sizes = [], 0, []
    contiguous = True
    for ordinal in sorted(rows):
        docs = sorted(rows[ordinal])
        first = docs[0][1] - docs[0][0]
        exact.append(SegmentRowRange(ordinal, first, len(docs)))
        contiguous = contiguous and all(g == first + d for d, g in docs)
        sizes.append(SegmentRowRange(ordinal, offset, len(docs)))
        offset += len(docs)
    return tuple(exact) if contiguous else tuple(sizes)


ENTRIES = (_entry("a.parquet", 0, 30), _entry("b.parquet", 30, 12))


@pytest.fixture(params=[build.READBACK_CHUNK, 4, 1], ids=["whole", "chunks-of-4", "one-by-one"])
def readback_chunk(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    """The read-back's chunk size: each segment read whole, or across chunk boundaries."""
    monkeypatch.setattr(build, "READBACK_CHUNK", request.param)
    return int(request.param)


def test_segment_ranges_of_runs_are_exact_in_any_segment_order(readback_chunk: int) -> None:
    rows = [("a.parquet", r) for r in range(30)] + [("b.parquet", r) for r in range(12)]
    part = _index([rows[:10], rows[10:25], rows[25:]])  # the third segment spans both files
    try:
        meta_path = os.path.join(part.directory, "meta.json")
        with open(meta_path, encoding="utf-8") as handle:
            meta = json.load(handle)
        assert len(meta["segments"]) == 3
        # segment ordinals follow meta.json, whatever order the segments were written in
        meta["segments"].reverse()
        with open(meta_path, "w", encoding="utf-8") as handle:
            json.dump(meta, handle)
        found = build._segment_ranges(part, ENTRIES)
        assert found == _by_search(part, ENTRIES)
        assert sorted((r.row_offset, r.num_rows) for r in found) == [(0, 10), (10, 15), (25, 17)]
        assert [r.segment_ord for r in found] == [0, 1, 2]
    finally:
        part.discard()


def test_segment_ranges_fall_back_to_sizes_when_a_segment_is_not_one_run(
    readback_chunk: int,
) -> None:
    rows = [("a.parquet", r) for r in range(30)] + [("b.parquet", r) for r in range(12)]
    shuffled = rows[10:25]
    shuffled[3], shuffled[7] = shuffled[7], shuffled[3]
    part = _index([rows[:10], shuffled, rows[25:]])
    try:
        found = build._segment_ranges(part, ENTRIES)
        assert found == _by_search(part, ENTRIES)
        # the segments' sizes in segment order, numbered from 0
        sizes = [r.num_rows for r in found]
        assert sorted(sizes) == [10, 15, 17]
        assert [r.row_offset for r in found] == [sum(sizes[:i]) for i in range(3)]
    finally:
        part.discard()


def test_runs_out_of_order_only_between_read_back_chunks_are_not_one_run(
    readback_chunk: int,
) -> None:
    """Rows 10-17, 22-25, 18-21 in one segment: read 4 at a time, every chunk is a run
    of its own, and only the third chunk's start (22, not 18) shows the segment is not."""
    rows = [("a.parquet", r) for r in range(30)] + [("b.parquet", r) for r in range(12)]
    middle = rows[10:18] + rows[22:26] + rows[18:22]
    part = _index([rows[:10], middle, rows[26:]])
    try:
        found = build._segment_ranges(part, ENTRIES)
        assert found == _by_search(part, ENTRIES)
        sizes = [r.num_rows for r in found]  # the segments' sizes in segment order
        assert sorted(sizes) == [10, 16, 16]
        assert [r.row_offset for r in found] == [sum(sizes[:i]) for i in range(3)]
    finally:
        part.discard()


def test_segment_ranges_of_an_empty_index() -> None:
    part = _index([])
    try:
        assert build._segment_ranges(part, ENTRIES) == ()
    finally:
        part.discard()


# -- groups built in parallel worker processes ---------------------------------------------


def _partitioned_source(root: Path, parts: int) -> None:
    rng = random.Random(11)
    for number in range(parts):
        folder = root / f"p=v{number}"
        folder.mkdir(parents=True)
        for file in range(2):
            base = number * 1000 + file * 100
            pq.write_table(hostile(rng, base, 20), folder / f"part-{file}.parquet")


def test_groups_are_built_in_worker_processes_and_committed_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "src"
    _partitioned_source(source, 3)
    in_workers: list[int] = []
    build_in_worker = parallel._in_worker

    def spy(job: Any, group: Any) -> Any:
        in_workers.append(len(group.files))
        return build_in_worker(job, group)

    monkeypatch.setattr(parallel, "_in_worker", spy)
    monkeypatch.setattr(parallel, "LOCAL_BUILDS", 0)  # every group in a worker process
    answers = {}
    for workers in ("1", "2"):
        index = tmp_path / f"idx-{workers}"
        committed: list[tuple[int, int]] = []
        result = build_companion(
            str(source), str(index), source_format="parquet",
            options={PARALLELISM_OPTION: workers},
            progress=lambda done, total, seen=committed: seen.append((done, total)),
        )  # fmt: skip
        assert (result.splits_created, result.parquet_files_indexed) == (3, 6)
        assert committed == [(3, 3)]  # one batch (8 groups a batch)
        table = open_table(str(index), options={CACHE: str(tmp_path / "cache")})
        assert len(table.files) == 3
        answers[workers] = table.to_arrow().sort_by("id")
    assert in_workers == [2, 2, 2]  # buildParallelism=2: every group in a worker process
    assert canonical(answers["2"]) == canonical(answers["1"])
    expected = pq.read_table(source)
    assert canonical(answers["2"].select(["id", "s", "x"])) == canonical(
        expected.select(["id", "s", "x"])
    )


def _watched_builds(
    monkeypatch: pytest.MonkeyPatch, *, wait_for_worker: bool
) -> tuple[list[int], list[int]]:
    """Spies on where groups are built: (most local builds at once, groups sent to workers).

    ``wait_for_worker``: a local build starts indexing only once some group was sent to
    a worker (or after 30 s), so a second local build, if the policy allows one, is
    sure to overlap it whatever the machine's speed.
    """
    lock, asked = threading.Lock(), threading.Event()
    running, most, in_workers = [0], [0], []
    build_local, build_in_worker = parallel._build, parallel._in_worker

    def local(job: Any, group: Any, store: Any) -> Any:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        try:
            if wait_for_worker:
                asked.wait(timeout=30)
            return build_local(job, group, store)
        finally:
            with lock:
                running[0] -= 1

    def worker(job: Any, group: Any) -> Any:
        in_workers.append(len(group.files))
        asked.set()
        return build_in_worker(job, group)

    monkeypatch.setattr(parallel, "_build", local)
    monkeypatch.setattr(parallel, "_in_worker", worker)
    return most, in_workers


@pytest.mark.parametrize("big", [True, False])
def test_one_big_group_at_a_time_is_built_in_process_small_ones_never_leave(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, big: bool
) -> None:
    """Two big builds as threads of one interpreter convoy on its GIL (docs/performance.md):
    a second big group goes to a worker process. Small groups (under WORKER_MIN_BYTES)
    stay in threads of the calling process, paying no worker start-up."""
    source = tmp_path / "src"
    _partitioned_source(source, 3)
    monkeypatch.setattr(parallel, "WORKER_MIN_BYTES", 1 if big else 1 << 40)
    most, in_workers = _watched_builds(monkeypatch, wait_for_worker=big)
    index = tmp_path / "idx"
    result = build_companion(
        str(source), str(index), source_format="parquet", options={PARALLELISM_OPTION: "2"}
    )
    assert (result.splits_created, result.parquet_files_indexed) == (3, 6)
    if big:
        assert most[0] == 1
        assert len(in_workers) >= 1
    else:
        assert most[0] <= 2
        assert in_workers == []
    got = open_table(str(index), options={CACHE: str(tmp_path / "cache")}).to_arrow()
    assert canonical(got.select(["id", "s", "x"]).sort_by("id")) == canonical(
        pq.read_table(source).select(["id", "s", "x"]).sort_by("id")
    )


def test_a_worker_failure_is_the_source_error_naming_the_file(tmp_path: Path) -> None:
    source = tmp_path / "src"
    _partitioned_source(source, 2)
    (source / "p=v1" / "part-1.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(CompanionSourceError, match=r"part-1\.parquet"):
        build_companion(
            str(source), str(tmp_path / "idx"), source_format="parquet",
            options={PARALLELISM_OPTION: "2"},
        )  # fmt: skip


def test_the_parallelism_option_is_checked_by_name(tmp_path: Path) -> None:
    source = tmp_path / "src"
    _partitioned_source(source, 1)
    for bad in ("0", "many"):
        with pytest.raises(OptionError, match=PARALLELISM_OPTION):
            build_companion(
                str(source), str(tmp_path / "idx"), source_format="parquet",
                options={PARALLELISM_OPTION: bad},
            )  # fmt: skip
    assert parallel.build_parallelism({}) >= 1
    assert parallel.build_parallelism({PARALLELISM_OPTION.upper(): "3"}) == 3
