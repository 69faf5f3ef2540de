"""Reading splits: every golden split, fetched into the split cache, answers like its oracle.

Reference splits carry SSTable term dictionaries; the cache rewrites only their
``.term`` files to the FST form. The tests here assert that nothing is rebuilt
from stored documents: no Tantivy index is created while reading, and every
other file of the cache entry is the split's own bytes.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import tantivy

from indextables.protocol.splitbundle import SPLIT_FIELDS, parse_split_footer, unbundle_split
from indextables.search.query.filters import Condition
from indextables.search.query.searchoptions import SearchSpec
from indextables.search.read.splitreader import SplitEntry, open_split, read_split
from indextables.search.schema.schemajson import arrow_schema
from indextables.search.splits.splitcache import ENTRY_RECORD, SplitCache, SplitRef
from indextables.search.splits.termdict import dictionary_kind
from indextables.storage import LocalStore

GOLDEN = Path(__file__).resolve().parents[3] / "testdata/golden/indextables_spark_v0.5.4"
NAMES = sorted(p.name[: -len(".expected.json")] for p in GOLDEN.glob("*.expected.json"))
if not NAMES:  # a missing fixture fails the run; it never skips the golden tests
    raise RuntimeError(f"golden tables not found at {GOLDEN}")


class _NoNewIndex:
    """Stands in for ``tantivy.Index`` while reading: opening is fine, building one is not."""

    open = staticmethod(tantivy.Index.open)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise AssertionError("a Tantivy index was built while reading a split")


@pytest.fixture
def no_rebuild(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if reading builds any index (a copy from stored documents)."""
    monkeypatch.setattr(tantivy, "Index", _NoNewIndex)


def _entries(name: str, oracle: dict[str, Any], cache: SplitCache) -> list[tuple[str, SplitEntry]]:
    store = LocalStore(str(GOLDEN / name))
    found = []
    for live in oracle["liveFiles"]:
        ref = SplitRef(
            live["path"], live["size"], live["footerStartOffset"], live["footerEndOffset"]
        )
        entry = SplitEntry(ref, live["partitionValues"], live["docMappingJson"])
        found.append((cache.fetch(store, store.uri, ref), entry))
    return found


def _read_all(
    name: str, oracle: dict[str, Any], cache: SplitCache, **kwargs: Any
) -> list[dict[str, Any]]:
    schema = arrow_schema(oracle["metadata"]["schemaString"])
    rows: list[dict[str, Any]] = []
    for directory, entry in _entries(name, oracle, cache):
        for batch in read_split(directory, entry, schema, **kwargs):
            rows += batch.to_pylist()
    return rows


def _cache(tmp_path: Path) -> SplitCache:
    return SplitCache(str(tmp_path / "cache"), 1 << 30)


@pytest.mark.parametrize("name", NAMES)
def test_golden_split_rows(
    name: str, tmp_path: Path, expected: Any, sort_rows: Any, no_rebuild: None
) -> None:
    oracle = expected(name)
    rows = _read_all(name, oracle, _cache(tmp_path), search=SearchSpec(), conditions=())
    assert sort_rows(rows) == sort_rows(oracle["rows"])


@pytest.mark.parametrize(
    ("conditions", "search", "keep"),
    [
        ((Condition("=", "id", (3,)),), SearchSpec(), lambda r: r["id"] == 3),
        ((Condition(">=", "score", (30.0,)),), SearchSpec(), lambda r: r["score"] >= 30),
        (
            (Condition("in", "text", ("doc1", "doc5")),),
            SearchSpec(),
            lambda r: r["text"] in ("doc1", "doc5"),
        ),
        ((Condition("prefix", "text", ("doc",)),), SearchSpec(), lambda r: True),
        ((Condition("=", "text", ("doc3",)),), SearchSpec(), lambda r: r["text"] == "doc3"),
        ((Condition("!=", "id", (1,)),), SearchSpec(), lambda r: r["id"] != 1),
        ((), SearchSpec(field_match={"text": "doc4"}), lambda r: r["text"] == "doc4"),
    ],
)
def test_conditions_and_search_narrow_exactly(
    conditions: tuple[Condition, ...],
    search: SearchSpec,
    keep: Any,
    tmp_path: Path,
    expected: Any,
    sort_rows: Any,
    no_rebuild: None,
) -> None:
    oracle = expected("04_partitioned")
    rows = _read_all(
        "04_partitioned", oracle, _cache(tmp_path), search=search, conditions=conditions
    )
    assert sort_rows(rows) == sort_rows([r for r in oracle["rows"] if keep(r)])


def _text_column(oracle: dict[str, Any]) -> str:
    return "title" if "title" in oracle["rows"][0] else "text"


@pytest.mark.parametrize("name", NAMES)
def test_every_golden_value_is_found_by_query_textsearch_and_fieldmatch(
    name: str, tmp_path: Path, expected: Any, sort_rows: Any, no_rebuild: None
) -> None:
    oracle = expected(name)
    column = _text_column(oracle)
    cache = _cache(tmp_path)
    values = sorted({r[column] for r in oracle["rows"]})
    # Every value on small tables; a spread of them on the 500-row one.
    for value in values[:: max(1, len(values) // 40)]:
        wanted = sort_rows([r for r in oracle["rows"] if r[column] == value])
        for search in (
            SearchSpec(query=f'{column}:"{value}"'),
            SearchSpec(text_search={column: f'"{value}"'}),
            SearchSpec(field_match={column: value}),
        ):
            rows = _read_all(name, oracle, cache, search=search, conditions=())
            assert sort_rows(rows) == wanted, (value, search)
    some = oracle["rows"][len(oracle["rows"]) // 2]
    rows = _read_all(
        name, oracle, cache, search=SearchSpec(query=f"id:{some['id']}"), conditions=()
    )
    assert sort_rows(rows) == sort_rows([r for r in oracle["rows"] if r["id"] == some["id"]])


@pytest.mark.parametrize("name", NAMES)
def test_cache_entries_keep_the_split_bytes_and_rewrite_only_term_files(
    name: str, tmp_path: Path, expected: Any
) -> None:
    oracle = expected(name)
    cache = _cache(tmp_path)
    entries = _entries(name, oracle, cache)
    assert sorted(os.listdir(cache.directory)) == sorted(os.path.basename(d) for d, _ in entries)
    for directory, entry in entries:
        data = (GOLDEN / name / entry.ref.path).read_bytes()
        footer = parse_split_footer(data, footer_start_offset=entry.ref.footer_start_offset or 0)
        local = set(os.listdir(directory)) - {ENTRY_RECORD}
        assert local == set(footer.files) - {SPLIT_FIELDS}
        for file_name in local:
            original = data[slice(*footer.files[file_name])]
            copy = Path(directory, file_name).read_bytes()
            if file_name.endswith(".term"):
                assert dictionary_kind(original) == "sstable"
                assert dictionary_kind(copy) == "fst"
            else:
                assert copy == original, file_name


def _unbundled(name: str, number: int, directory: Path) -> Path:
    live = json.loads((GOLDEN / f"{name}.expected.json").read_text())["liveFiles"][number]
    unbundle_split((GOLDEN / name / live["path"]).read_bytes(), directory)
    return directory


def test_open_split_keeps_an_index_open_per_directory_and_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = _unbundled(NAMES[0], 0, tmp_path / "split")
    index, searcher = open_split(str(directory))
    assert open_split(str(directory)) == (index, searcher)
    monkeypatch.setattr(os, "getpid", lambda: -1)  # as in a forked worker
    assert open_split(str(directory))[0] is not index


def test_open_split_reopens_a_directory_recreated_with_other_contents(tmp_path: Path) -> None:
    splits = [(name, 0) for name in NAMES]
    first = _unbundled(*splits[0], tmp_path / "split")
    before = open_split(str(first))[1].num_docs
    shutil.rmtree(first)
    other = next(s for s in splits[1:] if _docs(s, tmp_path) != before)
    again = _unbundled(*other, tmp_path / "split")
    assert open_split(str(again))[1].num_docs == _docs(other, tmp_path)


def _docs(split: tuple[str, int], tmp_path: Path) -> int:
    probe = _unbundled(*split, tmp_path / f"probe-{split[0]}")
    return int(tantivy.Index.open(str(probe)).searcher().num_docs)


def test_hits_are_read_in_segment_then_doc_order() -> None:
    # DocAddress's own comparison is (segment ordinal, doc id): no key function per hit.
    import random

    rng = random.Random(7)
    pairs = [(rng.randrange(12), rng.randrange(1 << 20)) for _ in range(5000)]
    pairs += [(3, 0), (0, (1 << 32) - 1), (11, 0), (0, 0), (3, 0)]
    hits = [tantivy.DocAddress(s, d) for s, d in pairs]
    rng.shuffle(hits)
    from indextables.search.read.splitreader import in_store_order

    ordered = in_store_order(hits)
    assert [(a.segment_ord, a.doc) for a in ordered] == sorted(pairs)
