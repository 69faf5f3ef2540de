"""Companion splits built through the segment writer against tantivy-py builds of the same source.

The default build (``indexWriter.feed`` unset) writes a companion split's segments with
the segment writer (companion/segmentbuild.py); ``indexWriter.feed=json`` builds it
through tantivy-py. Which one made a split is read from the split (its ``.managed.json``,
see test_feeddefault.py). From the same random hostile Parquet files (the engine
differential's rows: nulls, unicode and empty strings, every kind a companion indexes,
several files and partitions; a Delta table with a deletion vector, a strip mode and
several segments a split) both builds must answer the same queries (each also against
DuckDB over the source), hold the same segments (documents each), hidden coordinates
and manifest.
"""

from __future__ import annotations

import itertools
import json
import random
import re
import sys
import uuid
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pytest
import tantivy
from deltalake import DeltaTable, write_deltalake

from indextables.protocol.splitbundle import unbundle_split
from indextables.search import build_companion, open_table
from indextables.search.companion import build, segmentbuild, segments
from indextables.search.companion.manifest import MANIFEST_FILE
from indextables.search.companion.pathhash import FILE_HASH_FIELD, ROW_IN_FILE_FIELD
from indextables.search.options import DEFAULT_HEAP_SIZE
from indextables.search.table.tableaccess import load_view

sys.path.insert(0, str(Path(__file__).resolve().parent))
from diffcases import cases, rows
from test_companion_deletions import canonical, commit_vector, rows_honouring_dvs
from test_companion_differential import _source
from test_feeddefault import split_writers
from test_search_differential import check_case, oracle_ids

FEED_KEY = "spark.indextables.indexWriter.feed"
JSON = {FEED_KEY: "json"}
MODES = {"t": "text", "ip": "ip"}

pytestmark = pytest.mark.filterwarnings(
    "ignore::indextables.search.query.casenotice.CaseMismatchWarning"
)


def _split_facts(uri: str, scratch: Path) -> dict[tuple[str, ...], dict[str, Any]]:
    """Per split (keyed by its source files): segment sizes, each segment's hidden
    coordinates (in document order) and the manifest, from the split's own files."""
    found: dict[tuple[str, ...], dict[str, Any]] = {}
    for number, split in enumerate(load_view(uri, {}).splits):
        target = scratch / f"split-{number}"
        unbundle_split((Path(uri) / split.path).read_bytes(), target)
        meta = json.loads((target / "meta.json").read_text())
        sizes = [int(s["max_doc"]) for s in meta["segments"]]
        index = tantivy.Index.open(str(target))
        index.reload()
        searcher = index.searcher()
        hidden = []
        for ordinal, size in enumerate(sizes):
            docs = [tantivy.DocAddress(ordinal, d) for d in range(size)]
            hidden.append(
                (
                    list(searcher.fast_field_values(FILE_HASH_FIELD, docs)),
                    list(searcher.fast_field_values(ROW_IN_FILE_FIELD, docs)),
                )
            )
        manifest = json.loads((target / MANIFEST_FILE).read_bytes())
        files = tuple(sorted(f["relative_path"] for f in manifest["parquet_files"]))
        found[files] = {"sizes": sizes, "hidden": hidden, "manifest": manifest}
    return found


def _hidden_schema(uri: str, scratch: Path) -> list[dict[str, Any]]:
    split = load_view(uri, {}).splits[0]
    target = scratch / "schema"
    unbundle_split((Path(uri) / split.path).read_bytes(), target)
    meta = json.loads((target / "meta.json").read_text())
    return [f for f in meta["schema"] if f["name"] in (FILE_HASH_FIELD, ROW_IN_FILE_FIELD)]


def _pairs(hidden: list[tuple[list[int], list[int]]]) -> list[list[tuple[int, int]]]:
    """Each segment's (file hash, row in file) pairs, sorted."""
    return [sorted(zip(hashes, rows_, strict=True)) for hashes, rows_ in hidden]


def _same_splits(
    ours: str, theirs: str, scratch: Path, *, ordered: bool = True
) -> dict[tuple[str, ...], Any]:
    """Both builds' splits alike; ``ordered``: each segment's documents in the same order
    too (Tantivy's merge of an index's commits may reorder them)."""
    mine = _split_facts(ours, scratch / "ours")
    other = _split_facts(theirs, scratch / "theirs")
    assert set(mine) == set(other)
    for files, facts in mine.items():
        assert facts["sizes"] == other[files]["sizes"], files
        if ordered:
            assert facts["hidden"] == other[files]["hidden"], files
        assert _pairs(facts["hidden"]) == _pairs(other[files]["hidden"]), files
        assert facts["manifest"] == other[files]["manifest"], files
    assert _hidden_schema(ours, scratch / "ours") == _hidden_schema(theirs, scratch / "theirs")
    return mine


def _hostile(seed: int, n: int) -> pa.Table:
    """The differential's rows without the struct column (a JSON field the segment writer
    leaves to tantivy-py), the partition column last."""
    data = rows(seed, n).drop_columns(["j"])
    return data.select([c for c in data.column_names if c != "p"] + ["p"])


def _query_forms(data: pa.Table, rng: random.Random) -> list[str]:
    """Terms, phrases, ranges, exists and the wildcard, fuzzy and regex forms on values
    of the source."""
    words = [w for v in data["t"].to_pylist() if v for w in v.lower().split() if w.isalnum()]
    strings = [v for v in data["s"].to_pylist() if v and v.isalnum()]
    picks = rng.sample(words, min(4, len(words))) + rng.sample(strings, min(3, len(strings)))
    out = ["*", "i32:[-1000 TO 1000]", "f64:[0 TO *]", "ts:[* TO 2000-01-01T00:00:00Z]"]
    out += ["b:true", "i64:{0 TO *]", "day:[1970-01-01T00:00:00Z TO *]"]
    for word in picks[:4]:
        out += [f"t:{word}", f"t:{word[:2]}*", f"t:{word}~1", f"t:/{word[:1]}.*/"]
    if len(picks) >= 2:
        out.append(f't:"{picks[0]} {picks[1]}"')
    for value in picks[4:]:
        out += [f"s:{value}", f"s:{value[:1]}*", f"s:{value}~1"]
    return out


def _names_struct(case: Any) -> bool:
    """Whether a differential case names the struct column ``j``."""
    texts = [case.query, case.where, case.textsearch, case.fieldmatch]
    names = [c.lower() for c in case.columns or ()]
    return "j" in names or any(re.search(r"\bj\b", str(t)) for t in texts if t is not None)


def _same_answers(
    ours: Any, theirs: Any, data: pa.Table, queries: list[str], seed: int, count: int
) -> None:
    duck = duckdb.connect()
    duck.execute("SET TimeZone = 'UTC'")
    duck.register("data", data)
    try:
        checked = 0
        for case in cases(seed, count, valued=()):
            if _names_struct(case):  # the struct column is not in these files
                continue
            checked += 1
            want = oracle_ids(duck, data, case)
            for table in (ours, theirs):
                try:
                    check_case(table, data, case, want)
                except AssertionError as exc:
                    raise AssertionError(f"seed {seed}: {case}") from exc
    finally:
        duck.close()
    assert checked >= count // 2
    for where in ("t IS NOT NULL", "s IS NULL", "ip IS NOT NULL", "bin IS NOT NULL"):
        assert canonical(ours.search(where=where)) == canonical(theirs.search(where=where))
    for query in queries:
        mine = ours.search(query)
        assert canonical(mine) == canonical(theirs.search(query)), query
        assert ours.count(query) == theirs.count(query) == mine.num_rows, query
    metrics = {"n": "count", "s": ("sum", "i16"), "lo": ("min", "i64"), "hi": ("max", "i32")}
    got = ours.aggregate(metrics=metrics).to_pylist()
    assert got == theirs.aggregate(metrics=metrics).to_pylist()
    assert got == [
        {
            "n": data.num_rows,
            "s": pc.sum(data["i16"]).as_py(),
            "lo": pc.min(data["i64"]).as_py(),
            "hi": pc.max(data["i32"]).as_py(),
        }
    ]
    assert ours.count() == theirs.count() == data.num_rows


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_writer_and_tantivy_companions_of_hostile_files_answer_alike(
    tmp_path: Path, seed: int
) -> None:
    data = _hostile(seed, 300)
    _source(tmp_path / "src", data)
    built = {}
    for name, options in (("ours", {}), ("theirs", JSON)):
        result = build_companion(
            str(tmp_path / "src"), str(tmp_path / name), source_format="parquet",
            indexing_modes=MODES, target_input_size=10**9, options=options,
        )  # fmt: skip
        assert result.status == "success"
        built[name] = str(tmp_path / name)
    # the default is the segment writer, json is tantivy-py: a property of the splits
    assert set(split_writers(built["ours"])) == {"segments"}
    assert set(split_writers(built["theirs"])) == {"tantivy"}
    facts = _same_splits(built["ours"], built["theirs"], tmp_path / "facts")
    assert len(facts) >= 2  # one split a partition value
    cache = {"spark.indextables.cache.directoryPath": str(tmp_path / "cache")}
    ours = open_table(built["ours"], options=cache)
    theirs = open_table(built["theirs"], options=cache)
    _same_answers(ours, theirs, data, _query_forms(data, random.Random(seed)), seed, 20)


def _delta_source(root: Path, rng: random.Random) -> pa.Table:
    """Three appends of log-like rows (UUIDs in ``msg``), a deletion vector on the
    second file; the rows a reader honouring it sees."""
    words = ["disk full", "", "ünïcode 名前", "timeout", None, "disk ok", "a-b c"]
    ids = [str(uuid.UUID(int=rng.getrandbits(128))) for _ in range(5)]
    first = 0
    for size in (70, 90, 60):
        msg = []
        for _ in range(size):
            base = rng.choice(words)
            msg.append(base if base is None or rng.random() < 0.5 else f"{base} {rng.choice(ids)}")
        data = pa.table(
            {
                "id": pa.array(range(first, first + size), pa.int64()),
                "msg": msg,
                "host": [rng.choice(["h1", "h2", "", None, "é"]) for _ in range(size)],
                "x": [rng.choice([None, -0.0, 1.5, float("inf"), -1e300]) for _ in range(size)],
            }
        )
        write_deltalake(str(root), data, mode="append")
        first += size
    files = sorted(pa.table(DeltaTable(str(root)).get_add_actions())["path"].to_pylist())
    commit_vector(root, files[1], [0, 1, 5, 6, 7, 59])
    return rows_honouring_dvs(root)


def test_writer_and_tantivy_companions_of_a_delta_table_with_deleted_rows_and_several_segments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(segments, "SEGMENT_DOCS", 16)
    rng = random.Random(41)
    source = tmp_path / "delta"
    expected = _delta_source(source, rng)
    built = {}
    for name, options in (("ours", {}), ("theirs", JSON)):
        build_companion(
            str(source), str(tmp_path / name), source_format="delta",
            indexing_modes={"msg": "text_uuid_strip", "host": "string"},
            target_input_size=10**9, options=options,
        )  # fmt: skip
        built[name] = str(tmp_path / name)
    # (tantivy-py's indexes gathered into one directory get a .managed.json of the
    # writer's form: which writer made these is shown where a split is one index)
    facts = _split_facts(built["ours"], tmp_path / "ours-facts")
    other = _split_facts(built["theirs"], tmp_path / "theirs-facts")
    assert set(facts) == set(other)
    for files, mine in facts.items():
        # one segment a planned index (16 documents), the last one whatever is left;
        # tantivy-py leaves a last index of fewer than eight commits one segment a commit
        whole, rest = divmod(expected.num_rows, 16)
        assert mine["sizes"] == [16] * whole + ([rest] if rest else []), mine["sizes"]
        assert len(mine["sizes"]) > 1  # several segments
        assert sum(mine["sizes"]) == expected.num_rows
        # the same documents: Tantivy merges a whole index's eight commits into one
        # segment, a last index of fewer commits stays in one segment a commit
        theirs_sizes = other[files]["sizes"]
        assert sum(theirs_sizes) == sum(mine["sizes"])
        assert mine["manifest"]["segment_row_ranges"] == []  # deleted rows: hidden fields
        assert mine["manifest"] == other[files]["manifest"]
        flat = [
            (h, r) for hashes, rows_ in mine["hidden"] for h, r in zip(hashes, rows_, strict=True)
        ]
        flat_theirs = [
            (h, r)
            for hashes, rows_ in other[files]["hidden"]
            for h, r in zip(hashes, rows_, strict=True)
        ]
        assert len(set(flat)) == len(flat) == expected.num_rows  # every document once
        assert sorted(flat) == sorted(flat_theirs)
    cache = {"spark.indextables.cache.directoryPath": str(tmp_path / "cache")}
    ours = open_table(built["ours"], options=cache)
    theirs = open_table(built["theirs"], options=cache)
    assert canonical(ours.to_arrow()) == canonical(expected)
    queries = ["*", "msg:disk", "msg:timeout", 'msg:"disk full"', "msg:dis*", "msg:time~1",
               "msg:/d.*/", "host:h1", "x:[0 TO *]", "id:[10 TO 100]"]  # fmt: skip
    for query in queries:
        mine = ours.search(query)
        assert canonical(mine) == canonical(theirs.search(query)), query
        assert ours.count(query) == theirs.count(query) == mine.num_rows, query
    disk = [m is not None and "disk" in m.split() for m in expected["msg"].to_pylist()]
    assert ours.count("msg:disk") == sum(disk)
    metrics = {"s": ("sum", "id"), "n": "count"}
    got = ours.aggregate(metrics=metrics).to_pylist()
    assert got == [{"s": sum(expected["id"].to_pylist()), "n": expected.num_rows}]
    assert got == theirs.aggregate(metrics=metrics).to_pylist()


def test_whole_indexes_are_the_same_segments_both_ways(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows that fill whole planned indexes (every index committed eight times, merged by
    Tantivy into one segment): both builds hold the same segments, hidden coordinates
    and manifest (segment ranges included)."""
    monkeypatch.setattr(segments, "SEGMENT_DOCS", 16)
    data = _hostile(7, 64).drop_columns(["p"])
    root = tmp_path / "src"
    root.mkdir()
    import pyarrow.parquet as pq

    pq.write_table(data.slice(0, 32), root / "a.parquet", row_group_size=5)
    pq.write_table(data.slice(32), root / "b.parquet", row_group_size=7)
    for name, options in (("ours", {}), ("theirs", JSON)):
        build_companion(
            str(root), str(tmp_path / name), source_format="parquet", indexing_modes=MODES,
            target_input_size=10**9, options=options,
        )  # fmt: skip
    facts = _same_splits(
        str(tmp_path / "ours"), str(tmp_path / "theirs"), tmp_path / "facts", ordered=False
    )
    ((split,),) = [list(facts.values())]
    assert split["sizes"] == [16, 16, 16, 16]
    ranges = split["manifest"]["segment_row_ranges"]
    assert [(r["segment_ord"], r["row_offset"], r["num_rows"]) for r in ranges] == [
        (0, 0, 16), (1, 16, 16), (2, 32, 16), (3, 48, 16),
    ]  # fmt: skip
    # the writer's segments hold their rows in order
    for hashes, rows_ in split["hidden"]:
        assert rows_ == sorted(rows_) or len(set(hashes)) > 1


def test_what_the_writer_refuses_builds_through_tantivy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A segment the writer refuses (here: its second) rebuilds the whole split through
    tantivy-py; a schema it refuses (a struct column: a JSON field) goes there first."""
    from indextables.search.write.segwriter.errors import SegmentWriteError

    with_struct = rows(6, 60)
    with_struct = with_struct.select([c for c in with_struct.column_names if c != "p"] + ["p"])
    _source(tmp_path / "src2", with_struct)
    build_companion(
        str(tmp_path / "src2"), str(tmp_path / "idx2"), source_format="parquet",
        indexing_modes=MODES, target_input_size=10**9,
    )  # fmt: skip
    assert set(split_writers(str(tmp_path / "idx2"))) == {"tantivy"}
    cache = {"spark.indextables.cache.directoryPath": str(tmp_path / "cache")}
    assert open_table(str(tmp_path / "idx2"), options=cache).count() == 60

    monkeypatch.setattr(segments, "SEGMENT_DOCS", 16)
    data = _hostile(5, 120)
    _source(tmp_path / "src", data)
    real = segmentbuild.write_segment
    calls = []

    def refuse_second(*args: Any, **kwargs: Any) -> str:
        calls.append(1)
        if len(calls) == 2:
            raise SegmentWriteError("column 'x': refused")
        return real(*args, **kwargs)

    monkeypatch.setattr(segmentbuild, "write_segment", refuse_second)
    started = []

    class Counted(build.CappedIndex):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            started.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(build, "CappedIndex", Counted)
    build_companion(
        str(tmp_path / "src"), str(tmp_path / "idx"), source_format="parquet",
        indexing_modes=MODES, target_input_size=10**9,
    )  # fmt: skip
    assert len(calls) >= 2
    assert len(started) == 1  # the refused split, again through tantivy-py
    cache = {"spark.indextables.cache.directoryPath": str(tmp_path / "cache")}
    table = open_table(str(tmp_path / "idx"), options=cache)
    assert canonical(table.to_arrow()) == canonical(data)
    assert table.count() == data.num_rows


def test_a_segment_is_written_once_its_columns_reach_the_heap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer keeps a planned segment's columns only up to the heap setting in Arrow
    bytes (its memory follows the heap, not the plan): past it a segment is written and
    the next one starts. The split still answers as tantivy-py's build of the source."""
    held = []

    def small(heap_size: int) -> int:
        held.append(heap_size)
        return 6_000

    monkeypatch.setattr(segmentbuild, "segment_bytes", small)
    data = _hostile(11, 300)
    _source(tmp_path / "src", data)
    for name, options in (("ours", {}), ("theirs", JSON)):
        build_companion(
            str(tmp_path / "src"), str(tmp_path / name),
            source_format="parquet", indexing_modes=MODES, target_input_size=10**9,
            options=options,
        )  # fmt: skip
    assert held
    assert set(held) == {DEFAULT_HEAP_SIZE}  # the build's own heap setting
    splits = _split_facts(str(tmp_path / "ours"), tmp_path / "facts").values()
    assert any(len(split["sizes"]) > 1 for split in splits), [s["sizes"] for s in splits]
    for split in splits:
        sizes = split["sizes"]
        assert sum(sizes) == split["manifest"]["total_rows"]
        ranges = split["manifest"]["segment_row_ranges"]
        starts = [0, *itertools.accumulate(sizes)][:-1]
        assert [(r["row_offset"], r["num_rows"]) for r in ranges] == list(
            zip(starts, sizes, strict=True)
        )
    cache = {"spark.indextables.cache.directoryPath": str(tmp_path / "cache")}
    ours = open_table(str(tmp_path / "ours"), options=cache)
    theirs = open_table(str(tmp_path / "theirs"), options=cache)
    _same_answers(ours, theirs, data, _query_forms(data, random.Random(11)), 11, 20)
