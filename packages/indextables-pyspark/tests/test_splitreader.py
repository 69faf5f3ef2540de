"""Reading splits: every golden split, unbundled, returns exactly its expected rows."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import tantivy
from pyspark.sql.types import StructType

from indextables.protocol.splitbundle import unbundle_split
from indextables.pyspark.errors import IndexTablesSparkError
from indextables.pyspark.filters import Condition
from indextables.pyspark.reindex import SUFFIX
from indextables.pyspark.searchoptions import SearchSpec
from indextables.pyspark.splitcache import SplitRef
from indextables.pyspark.splitreader import SplitEntry, open_split, read_split

GOLDEN = Path(__file__).resolve().parents[3] / "testdata/golden/indextables_spark_v0.5.4"
NAMES = sorted(p.name[: -len(".expected.json")] for p in GOLDEN.glob("*.expected.json"))


def _read_all(
    name: str, oracle: dict[str, Any], tmp_path: Path, **kwargs: Any
) -> list[dict[str, Any]]:
    schema = StructType.fromJson(json.loads(oracle["metadata"]["schemaString"]))
    rows: list[dict[str, Any]] = []
    for number, live in enumerate(oracle["liveFiles"]):
        directory = tmp_path / str(number)
        unbundle_split((GOLDEN / name / live["path"]).read_bytes(), directory)
        entry = SplitEntry(
            SplitRef(live["path"], live["size"]), live["partitionValues"], live["docMappingJson"]
        )
        for batch in read_split(str(directory), entry, schema, **kwargs):
            rows += batch.to_pylist()
    return rows


@pytest.mark.parametrize("name", NAMES)
def test_golden_split_rows(name: str, tmp_path: Path, expected: Any, sort_rows: Any) -> None:
    oracle = expected(name)
    rows = _read_all(name, oracle, tmp_path, search=SearchSpec(), conditions=())
    assert sort_rows(rows) == sort_rows(oracle["rows"])


@pytest.mark.parametrize(
    ("conditions", "search", "keep"),
    [
        ((Condition("=", "id", (3,)),), SearchSpec(), lambda r: r["id"] == 3),
        ((Condition(">=", "score", (30.0,)),), SearchSpec(), lambda r: r["score"] >= 30),
        # Text terms of reference splits are searched in a rebuilt copy (see reindex).
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
) -> None:
    oracle = expected("04_partitioned")
    rows = _read_all("04_partitioned", oracle, tmp_path, search=search, conditions=conditions)
    assert sort_rows(rows) == sort_rows([r for r in oracle["rows"] if keep(r)])


@pytest.mark.parametrize("name", NAMES)
def test_query_on_reference_splits_searches_a_rebuilt_copy(
    name: str, tmp_path: Path, expected: Any, sort_rows: Any
) -> None:
    oracle = expected(name)
    wanted = oracle["rows"][len(oracle["rows"]) // 2]
    column = "title" if "title" in wanted else "text"
    search = SearchSpec(query=f'{column}:"{wanted[column]}"')
    rows = _read_all(name, oracle, tmp_path, search=search, conditions=())
    assert sort_rows(rows) == sort_rows([r for r in oracle["rows"] if r[column] == wanted[column]])
    copies = {p.name for p in tmp_path.iterdir() if p.name.endswith(SUFFIX)}
    assert copies == {f"{n}{SUFFIX}" for n in range(len(oracle["liveFiles"]))}
    # The copy is reused: reading again builds nothing new.
    stamps = {p: p.stat().st_ino for p in tmp_path.iterdir()}
    assert sort_rows(_read_all(name, oracle, tmp_path, search=search, conditions=())) == sort_rows(
        rows
    )
    assert {p: p.stat().st_ino for p in tmp_path.iterdir() if p in stamps} == stamps


def test_reference_split_without_doc_mapping_is_a_clear_error(
    tmp_path: Path, expected: Any
) -> None:
    oracle = expected("04_partitioned")
    live = oracle["liveFiles"][0]
    unbundle_split((GOLDEN / "04_partitioned" / live["path"]).read_bytes(), tmp_path / "s")
    schema = StructType.fromJson(json.loads(oracle["metadata"]["schemaString"]))
    entry = SplitEntry(SplitRef(live["path"], live["size"]), live["partitionValues"], None)
    with pytest.raises(IndexTablesSparkError, match="no doc mapping"):
        list(
            read_split(
                str(tmp_path / "s"),
                entry,
                schema,
                search=SearchSpec(query="text:doc1"),
                conditions=(),
            )
        )


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
