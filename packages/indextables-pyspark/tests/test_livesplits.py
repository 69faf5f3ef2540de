"""The lazy table view: planning reads columns and builds only the splits it keeps."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from indextables.avrostate import impl
from indextables.protocol import create_table
from indextables.protocol.actions import AddAction
from indextables.pyspark.read.datasource import make_reader, table_schema
from indextables.search.query.filters import Condition, file_matcher, may_match_file
from indextables.search.table.livesplits import LiveSplits, prune_entries, split_paths
from indextables.search.table.tableaccess import load_view

MAPPING = json.dumps(
    [
        {"fast": True, "indexed": True, "name": "id", "stored": True, "type": "i64"},
        {"fast": True, "indexed": True, "name": "host", "stored": True, "tokenizer": "raw",
         "type": "text"},
    ]
)  # fmt: skip
SCHEMA = {
    "type": "struct",
    "fields": [
        {"name": n, "type": t, "nullable": True, "metadata": {}}
        for n, t in (("id", "long"), ("host", "string"), ("day", "string"))
    ],
}
FILES = 60


def _add(k: int) -> AddAction:
    day = f"2024-01-{k % 3 + 1:02d}"
    return AddAction(
        f"day={day}/part-{k:05d}.split",
        {"day": day},
        1000 + k,
        1_700_000_000_000,
        True,
        min_values={"id": str(k * 10), "host": f"h{k % 7}"},
        max_values={"id": str(k * 10 + 9), "host": f"h{k % 7 + 2}"},
        num_records=10,
        footer_start_offset=500,
        footer_end_offset=1000 + k,
        has_footer_offsets=True,
        split_tags=("t",) if k % 2 else None,
        doc_mapping_json=MAPPING,
    )


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A partitioned table with a state (40 files) and two version files after it."""
    path = str(tmp_path_factory.mktemp("lazy") / "t")
    handle = create_table(path, schema=SCHEMA, partition_columns=["day"])
    handle.commit(adds=[_add(k) for k in range(40)])
    handle.checkpoint()
    handle.commit(adds=[_add(k) for k in range(40, FILES)])
    handle.commit(adds=[], removes=[_add(3).path, _add(45).path])
    return path


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many entries the avro-state decoder has built (one count per entry)."""
    counts: list[int] = []
    module = impl.decoder()
    original = module.decode_entries

    def counted(data: bytes, starts: Any, *rest: Any) -> Any:
        counts.append(len(starts))
        return original(data, starts, *rest)

    monkeypatch.setattr(module, "decode_entries", counted)
    return counts


def test_the_view_builds_no_entry_for_its_columns(table: str, built: list[int]) -> None:
    view = load_view(table, {})
    splits = view.splits
    assert isinstance(splits, LiveSplits)
    assert len(splits) == FILES - 2
    paths = list(split_paths(splits))
    assert paths == list(splits.paths)
    assert len(set(paths)) == FILES - 2
    assert _add(3).path not in paths
    assert _add(45).path not in paths
    assert sum(splits.sizes) == sum(1000 + int(p[-11:-6]) for p in paths)  # type: ignore[arg-type]
    assert set(splits.num_records) == {10}
    assert {v["day"] for v in splits.partition_values} == {"2024-01-01", "2024-01-02", "2024-01-03"}
    assert splits.doc_mappings() == {MAPPING}
    assert sum(built) == 0  # the eager view built all 58 entries here


def test_the_views_splits_equal_their_entries(table: str) -> None:
    splits = load_view(table, {}).splits
    eager = list(splits)
    assert [s.path for s in eager] == list(splits.paths)
    assert [s.size for s in eager] == list(splits.sizes)
    assert [s.partition_values for s in eager] == list(splits.partition_values)
    assert splits.entries(range(len(splits))) == [s.entry for s in eager]
    assert [s.entry for s in splits.select([1, 5, 57])] == [eager[i].entry for i in (1, 5, 57)]
    assert {s.doc_mapping_json for s in eager} == {MAPPING}


def test_planning_builds_only_the_kept_splits(table: str, built: list[int]) -> None:
    view = load_view(table, {})
    reader = make_reader({"path": table}, view, table_schema(view))
    reader.conditions = (Condition("=", "day", ("2024-01-02",)),)
    kept = [s for task in reader.partitions() for s in task.splits]
    assert len(kept) == 20  # 3 and 45, removed, were of day 01
    assert {s.partition_values["day"] for s in kept} == {"2024-01-02"}
    assert sum(built) <= len(kept)  # entries built: the kept ones (added ones already were)
    built.clear()
    reader.conditions = (Condition("<", "id", (100,)),)
    kept = [s for task in reader.partitions() for s in task.splits]
    assert sorted(s.ref.path for s in kept) == sorted(_add(k).path for k in range(10) if k != 3)
    assert sum(built) <= len(kept)


CONDITIONS = st.lists(
    st.one_of(
        st.builds(
            Condition,
            st.sampled_from(["=", "<", ">", "<=", ">=", "in"]),
            st.sampled_from(["id", "ID", "host", "day"]),
            st.lists(
                st.one_of(
                    st.integers(-5, 700),
                    st.sampled_from(["h1", "h4", "h9", "2024-01-02", "2024-01-03", "x"]),
                ),
                min_size=1,
                max_size=3,
            ).map(tuple),
        ),
    ),
    max_size=3,
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(conditions=CONDITIONS)
def test_pruning_by_columns_equals_the_per_split_check(
    table: str, conditions: list[Condition]
) -> None:
    view = load_view(table, {})
    reader = make_reader({"path": table}, view, table_schema(view))
    from indextables.pyspark.read.sparktypes import arrow_schema
    from indextables.search.read.plan import single_value_columns, stat_fields

    fields = stat_fields(view)
    matcher = file_matcher(
        conditions,
        partition_columns=view.partition_columns,
        fields=fields,
        single_columns=single_value_columns(arrow_schema(reader.schema)),
        partition_types=reader._partition_types,
    )
    lazy = prune_entries(view.splits, partition_ok=matcher.partition_ok, stats=matcher.stats)
    eager = [
        s.entry
        for s in tuple(view.splits)
        if matcher.may_match(s.partition_values, s.min_values, s.max_values)
    ]
    assert lazy == eager
    # ... and to the per-split function the reader used before (one check per split).
    single = single_value_columns(arrow_schema(reader.schema))
    per_split = [
        s.entry
        for s in tuple(view.splits)
        if may_match_file(
            conditions,
            partition_values=s.partition_values,
            min_values=s.min_values,
            max_values=s.max_values,
            fields=fields,
            single_columns=single,
            partition_types=reader._partition_types,
        )
    ]
    assert lazy == per_split


def test_a_view_pickles_to_tasks_without_its_splits(table: str, tmp_path: Path) -> None:
    import pickle

    view = load_view(table, {})
    reader = make_reader({"path": table}, view, table_schema(view))
    copy = pickle.loads(pickle.dumps(reader))
    assert copy.view.splits == ()
    assert not copy.view.files_loaded
    assert set(copy.view.doc_mappings) == {MAPPING}
