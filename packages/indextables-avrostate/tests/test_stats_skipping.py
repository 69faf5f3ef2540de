"""Data skipping on min/max statistics equals the predicate's own may_match, per entry."""

from __future__ import annotations

from types import ModuleType
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from indextables.avrostate.manifest_reader import read_manifest_entries
from indextables.avrostate.manifest_writer import encode_manifest
from indextables.protocol.predicates import (
    And,
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Not,
    NumberCompare,
    Or,
    Predicate,
    StartsWith,
)
from indextables.protocol.state import FileEntry, PartitionBounds
from indextables.protocol.statsfilter import keep_by_stats

VALUE = st.one_of(
    st.integers(-(10**20), 10**20).map(str),
    st.integers(-50, 50).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
    st.sampled_from(["", " 7", "+3", "1_000", "inf", "nan", "NaN", "-0.0", "0", "0.1"]),
    st.sampled_from(["3.4028236e38", "-", "abc", "Zed", "é", "2024-01-05", "a" * 40]),
    st.sampled_from(["a\U0001f600", "z\U0010ffff"]),
    st.text(max_size=6),
)
COLUMN = st.sampled_from(["a", "b"])
LEAF = st.one_of(
    st.builds(EqualTo, COLUMN, VALUE),
    st.builds(LessThan, COLUMN, VALUE),
    st.builds(LessThanOrEqual, COLUMN, VALUE),
    st.builds(GreaterThan, COLUMN, VALUE),
    st.builds(GreaterThanOrEqual, COLUMN, VALUE),
    st.builds(In, COLUMN, st.lists(VALUE, max_size=3).map(tuple)),
    st.builds(StartsWith, COLUMN, st.text(max_size=3)),
    # Supplementary characters and U+10FFFF: the prefix's upper bound is its successor.
    st.builds(
        StartsWith,
        COLUMN,
        st.text(st.sampled_from(["a", "z", "\U0001f600", "\U0010ffff"]), max_size=3),
    ),
    st.builds(IsNull, COLUMN),
    st.builds(
        NumberCompare,
        COLUMN,
        st.sampled_from(["=", "<", "<=", ">", ">="]),
        st.lists(
            st.integers(-(10**20), 10**20) | st.floats(allow_nan=True), min_size=1, max_size=3
        ).map(tuple),
        floating=st.booleans(),
        single=st.booleans(),
    ),
)
PREDICATE = st.recursive(
    LEAF,
    lambda inner: st.one_of(
        st.builds(And, inner, inner), st.builds(Or, inner, inner), st.builds(Not, inner)
    ),
    max_leaves=4,
)
STATS = st.dictionaries(COLUMN, VALUE, max_size=2) | st.none()


def _entry(i: int, mins: Any, maxs: Any) -> FileEntry:
    return FileEntry(f"f{i}", {}, 1, 0, True, 0, 0, min_values=mins, max_values=maxs)


def _expected(entries: list[FileEntry], predicate: Predicate) -> list[int]:
    out = []
    for i, e in enumerate(entries):
        bounds = {}
        for column in predicate.columns():
            low = (e.min_values or {}).get(column)
            high = (e.max_values or {}).get(column)
            if high is not None and len(high) >= 32:
                high = None
            bounds[column] = PartitionBounds(low, high)
        if predicate.may_match(bounds):
            out.append(i)
    return out


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(st.tuples(STATS, STATS), max_size=20), PREDICATE)
def test_stats_may_match_equals_per_entry_may_match(
    decoder: ModuleType, stats: list[Any], predicate: Predicate
) -> None:
    entries = [_entry(i, lo, hi) for i, (lo, hi) in enumerate(stats)]
    files = read_manifest_entries(encode_manifest(entries, block_bytes=200), path="m")
    assert files.stats_may_match(predicate) == _expected(entries, predicate)


def test_realistic_range_predicate_prunes(decoder: ModuleType, entries: Any) -> None:
    originals = entries(200)
    files = read_manifest_entries(encode_manifest(originals), path="m")
    predicate = And(GreaterThanOrEqual("id", "id-max-150"), LessThanOrEqual("id", "id-min-160"))
    kept = files.stats_may_match(predicate)
    assert kept == _expected(originals, predicate)
    assert 0 < len(kept) < 200


def test_cleared_caches_are_rebuilt_alike(decoder: ModuleType, entries: Any) -> None:
    originals = entries(120)
    files = read_manifest_entries(encode_manifest(originals, block_bytes=4000), path="m")
    first = GreaterThanOrEqual("id", "id-max-100")
    second = Or(LessThan("id", "id-min-010"), EqualTo("id", "id-min-050"))
    kept = [files.stats_may_match(first), files.stats_may_match(second)]
    assert kept == [_expected(originals, first), _expected(originals, second)]
    entry = files[7]
    files.clear_caches()
    assert files[7] == entry
    assert files[7] is not entry
    assert [files.stats_may_match(first), files.stats_may_match(second)] == kept


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(st.tuples(STATS, STATS), max_size=20), PREDICATE)
def test_engine_stats_filter_agrees_with_its_per_entry_fallback(
    decoder: ModuleType, stats: list[Any], predicate: Predicate
) -> None:
    entries = [_entry(i, lo, hi) for i, (lo, hi) in enumerate(stats)]
    files = read_manifest_entries(encode_manifest(entries, block_bytes=200), path="m")
    column_wise = keep_by_stats(files, predicate)  # the format's capability
    per_entry = keep_by_stats(list(entries), predicate)  # the protocol's fallback
    assert [e.path for e in column_wise] == [e.path for e in per_entry]
    assert column_wise == per_entry


def test_select_builds_the_chosen_entries_across_blocks(decoder: ModuleType, entries: Any) -> None:
    originals = entries(120)
    files = read_manifest_entries(encode_manifest(originals, block_bytes=2000), path="m")
    assert len(files.plans()) > 3
    chosen = [0, 1, 2, 40, 41, 77, 119]
    assert files.select(chosen) == [originals[i] for i in chosen]
    assert files.select([]) == []
    already = files[41]
    assert files.select([41, 42])[0] is already
