"""Companion splits in tantivy4java's form (docs/companion.md, "Format").

Reading: splits written by hand from the documented layout (companion_reference_fixture,
independent of the builder) are answered exactly as DuckDB answers over the source
files, in all three layouts a reader meets. Writing: the builder's output is checked
against the same layout field by field.
"""

from __future__ import annotations

import json
import os
import random
import re
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from companion_reference_fixture import (
    RUST_PATH_HASHES,
    reference_doc_mapping,
    source_schema,
    write_reference_split,
)
from test_companion import canonical, duck, hostile

from indextables.search import build_companion, open_table
from indextables.search.companion.pathhash import path_hash
from indextables.search.companion.read import split_manifest
from indextables.search.errors import CompanionError
from indextables.search.query.searchoptions import SearchSpec
from indextables.search.read.anysplit import read_any_split
from indextables.search.read.splitreader import SplitEntry
from indextables.search.splits.splitcache import SplitCache
from indextables.search.splits.splitfetch import SplitRef
from indextables.search.table.tableaccess import open_table_store

FILES = ("data/part-00000.parquet", "data/empty.parquet", "data/part-00001.parquet")

# query option -> the same rows in DuckDB's SQL over the source
QUERIES = {
    None: "true",
    "n:[0 TO 4294967296]": "n BETWEEN 0 AND 4294967296",
    "msg:timeout": "list_contains(string_split(msg, ' '), 'timeout')",
    "s:A": "s = 'A'",
    "s:A OR msg:café": "s = 'A' OR list_contains(string_split(msg, ' '), 'café')",
    "flag:true AND x:[0 TO 1e309]": "flag AND x >= 0 AND NOT isnan(x)",
}

# The manifest's JSON keys, per tantivy4java's serde structs (manifest.rs).
MANIFEST_KEYS = {
    "version", "table_root", "fast_field_mode", "segment_row_ranges", "parquet_files",
    "column_mapping", "total_rows", "storage_config", "metadata", "string_hash_fields",
    "string_indexing_modes", "companion_hash_fields",
}  # fmt: skip
FILE_KEYS = {
    "relative_path", "file_size_bytes", "row_offset", "num_rows", "has_offset_index",
    "row_groups",
}  # fmt: skip
GROUP_KEYS = {"row_group_idx", "num_rows", "row_offset_in_file", "columns"}
CHUNK_KEYS = {
    "column_idx", "column_name", "data_page_offset", "compressed_size", "uncompressed_size"
}  # fmt: skip
MAPPING_KEYS = {
    "tantivy_field_name", "parquet_column_name", "physical_ordinal", "parquet_type",
    "tantivy_type", "field_id",
}  # fmt: skip


def _source(root: Path, files: tuple[str, ...] = FILES) -> None:
    rng = random.Random(2025)
    (root / files[0]).parent.mkdir(parents=True)
    for relative, (first, rows) in zip(files, ((0, 45), (100, 0), (200, 38)), strict=True):
        table = hostile(rng, first, rows).select(source_schema().names).cast(source_schema())
        pq.write_table(table, root / relative, row_group_size=8)


def _read(
    directory: str, root: Path, query: str | None, *, promoted: bool = False
) -> list[dict[str, Any]]:
    entry = SplitEntry(SplitRef("x.split", 0), {}, reference_doc_mapping(promoted=promoted))
    batches = read_any_split(
        directory, entry, source_schema(), search=SearchSpec(query=query), conditions=(),
        companion_root=str(root),
    )  # fmt: skip
    return pa.Table.from_batches(list(batches), schema=source_schema()).to_pylist()


def test_the_path_hash_is_rusts_default_hasher() -> None:
    for path, expected in RUST_PATH_HASHES.items():
        assert path_hash(path) == expected, path


@pytest.mark.parametrize(
    ("layout", "reverse", "compress"),
    [
        ("pq", False, True),
        ("pq", True, False),
        ("segments", False, False),
        ("row_key", True, False),
    ],
)
def test_a_hand_written_reference_split_reads_like_duckdb(
    tmp_path: Path, layout: str, reverse: bool, compress: bool
) -> None:
    root = tmp_path / "src"
    _source(root)
    directory = str(tmp_path / "split")
    write_reference_split(
        directory, str(root), FILES, layout=layout, reverse=reverse, compress=compress
    )
    files = ", ".join(f"'{root / f}'" for f in FILES if "empty" not in f)
    con = duckdb.connect()
    for query, where in QUERIES.items():
        expected = duck(con, f"SELECT * FROM read_parquet([{files}]) WHERE {where}")
        assert canonical(_read(directory, root, query)) == canonical(expected), query
        # the doc mapping as tantivy4java's AddAction reports it: every field fast
        found = _read(directory, root, query, promoted=True)
        assert canonical(found) == canonical(expected), query
    con.close()


def test_hits_follow_the_hidden_fields_not_the_segment_ranges(tmp_path: Path) -> None:
    """Documents out of row order (a merged split): only the hidden fields say where
    each row is; the naive segment_row_ranges would give wrong rows (it must fail)."""
    root = tmp_path / "src"
    _source(root)
    pq_dir, seg_dir = str(tmp_path / "pq"), str(tmp_path / "seg")
    write_reference_split(pq_dir, str(root), FILES, layout="pq", reverse=True)
    write_reference_split(seg_dir, str(root), FILES, layout="segments", reverse=True)

    def rows(found: list[dict[str, Any]]) -> list[str]:
        # whole rows (NaN compares by its repr): the integer and float columns come from
        # the hit's fast fields, the others from the row the mapping names
        return [repr(r) for r in sorted(found, key=lambda r: r["id"])]

    right = rows(_read(pq_dir, root, "n:[0 TO 4294967296]"))
    wrong = rows(_read(seg_dir, root, "n:[0 TO 4294967296]"))
    expected = rows(
        [
            r
            for f in FILES
            for r in pq.read_table(root / f).to_pylist()
            if r["n"] is not None and 0 <= r["n"] <= 2**32
        ]
    )
    assert right == expected
    assert wrong != expected


def test_a_hashed_string_mode_is_refused_by_name(tmp_path: Path) -> None:
    root = tmp_path / "src"
    _source(root)
    directory = str(tmp_path / "split")
    manifest = write_reference_split(directory, str(root), FILES)
    manifest["string_indexing_modes"] = {"s": {"mode": "exact_only"}}
    Path(directory, "_parquet_manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(CompanionError, match=r"s \(exact_only\)"):
        _read(directory, root, "s:A")


# -- the builder's output, field by field -------------------------------------------------

# a hive-partitioned source (the middle file has no rows)
HIVE_FILES = ("p=a/part-0.parquet", "p=a/part-1.parquet", "p=a/part-2.parquet")


def _built(tmp_path: Path, mode: str) -> tuple[str, Any, Path]:
    root = tmp_path / "src"
    _source(root, HIVE_FILES)
    index = tmp_path / f"idx-{mode}"
    build_companion(
        str(root), str(index), source_format="parquet", fast_field_mode=mode,
        indexing_modes={"msg": "text"},
    )  # fmt: skip
    cache = str(tmp_path / "cache")
    table = open_table(str(index), options={"spark.indextables.cache.directoryPath": cache})
    (split,) = table._view.splits
    store = open_table_store(str(index), {})
    directory = SplitCache(cache, 10**9).fetch(store, str(index), split.entry.ref)
    return directory, split, root


@pytest.mark.parametrize("mode", ["HYBRID", "DISABLED", "PARQUET_ONLY"])
def test_the_builder_writes_the_reference_layout(tmp_path: Path, mode: str) -> None:
    import tantivy

    directory, split, root = _built(tmp_path, mode)
    with open(os.path.join(directory, "meta.json"), encoding="utf-8") as handle:
        fields = {f["name"]: f for f in json.load(handle)["schema"]}
    # the hidden coordinates: u64, fast, neither indexed nor stored; no other hidden field
    for hidden in ("__pq_file_hash", "__pq_row_in_file"):
        assert fields[hidden]["type"] == "u64"
        assert fields[hidden]["options"]["fast"] is True
        assert fields[hidden]["options"]["indexed"] is False
        assert fields[hidden]["options"]["stored"] is False
    assert set(fields) == {"id", "n", "x", "s", "msg", "flag", "__pq_file_hash", "__pq_row_in_file"}
    # nothing stored; fast fields per mode (tantivy4java's should_add_fast)
    for name in ("id", "n", "x", "s", "msg", "flag"):
        options = fields[name]["options"]
        assert options["stored"] is False, name
        fast = bool(options.get("fast"))
        if mode == "DISABLED":
            # tantivy4java also makes a tokenized text field fast (with its tokenizer);
            # here it is not (a documented difference: aggregations read it from Parquet)
            assert fast is (name != "msg"), name
        elif mode == "HYBRID":
            assert fast is (name not in ("s", "msg")), name
        else:
            assert not fast, name
    # strings: raw (exact) or default (text) tokenizer, positions recorded
    assert fields["s"]["options"]["indexing"]["tokenizer"] == "raw"
    assert fields["msg"]["options"]["indexing"]["tokenizer"] == "default"
    # the manifest's JSON, key by key
    with open(os.path.join(directory, "_parquet_manifest.json"), "rb") as handle:
        raw = json.loads(handle.read())
    assert set(raw) == MANIFEST_KEYS
    assert raw["version"] == 1
    assert raw["table_root"] == ""
    assert raw["fast_field_mode"] == mode.lower()
    assert raw["storage_config"] is None
    assert raw["string_indexing_modes"] == {}
    assert raw["companion_hash_fields"] == {}
    files = raw["parquet_files"]
    # the file without rows is named by the AddAction, not by the manifest
    assert split._file.companion_source_files == HIVE_FILES
    assert [f["relative_path"] for f in files] == [HIVE_FILES[0], HIVE_FILES[2]]
    assert [(f["row_offset"], f["num_rows"]) for f in files] == [(0, 45), (45, 38)]
    assert raw["total_rows"] == 83
    for entry in files:
        assert set(entry) == FILE_KEYS
        assert entry["file_size_bytes"] == os.path.getsize(root / entry["relative_path"])
        assert isinstance(entry["has_offset_index"], bool)
        assert [g["num_rows"] for g in entry["row_groups"]][:2] == [8, 8]
        for group in entry["row_groups"]:
            assert set(group) == GROUP_KEYS
            assert all(set(c) == CHUNK_KEYS for c in group["columns"])
    assert all(set(m) == MAPPING_KEYS for m in raw["column_mapping"])
    ranges = raw["segment_row_ranges"]
    assert sum(r["num_rows"] for r in ranges) == 83
    assert all(set(r) == {"segment_ord", "row_offset", "num_rows"} for r in ranges)
    # every document: its file's Rust hash and its row in the file; the doc store
    # holds empty documents (tantivy4java's stub store)
    index = tantivy.Index.open(directory)
    searcher = index.searcher()
    hits = searcher.search(tantivy.Query.all_query(), limit=200, count=False).hits
    addresses = [a for _, a in hits]
    hashes = searcher.fast_field_values("__pq_file_hash", addresses)
    rows = searcher.fast_field_values("__pq_row_in_file", addresses)
    seen = sorted(zip(hashes, rows, strict=True))
    expected = sorted(
        [(RUST_PATH_HASHES[HIVE_FILES[0]], r) for r in range(45)]
        + [(RUST_PATH_HASHES[HIVE_FILES[2]], r) for r in range(38)]
    )
    assert seen == expected
    assert all(searcher.doc(a).to_dict() == {} for a in addresses[:5])
    assert any(n.endswith(".store") for n in os.listdir(directory))
    assert split_manifest(directory).total_rows == 83
    # and the split answers like DuckDB over the source
    table = open_table(
        str(tmp_path / f"idx-{mode}"),
        options={"spark.indextables.cache.directoryPath": str(tmp_path / "cache")},
    )
    con = duckdb.connect()
    files = ", ".join(f"'{root / f}'" for f in HIVE_FILES)
    for query, where in QUERIES.items():
        expected = duck(
            con, f"SELECT * FROM read_parquet([{files}], hive_partitioning = false) WHERE {where}"
        )
        found = table.search(query, columns=source_schema().names)
        assert canonical(found) == canonical(expected), query
    con.close()


# -- INDEXING MODES: the strip modes against DuckDB; the hashed modes refused by name -----

UUIDS = [
    "123e4567-e89b-12d3-a456-426614174000",
    "ABCDEF01-2345-6789-ABCD-EF0123456789",
    "deadbeef-0000-1111-2222-333344445555",
]
PIECES = ["error", "ok", "user", "id=", "ord-17", "ORD-42", "x", "", "-", "café", "12d3"]
TOKEN_RE = r"[^a-z0-9é]+"


def _log_source(root: Path) -> None:
    rng = random.Random(7)
    for part, rows in (("a", 40), ("b", 33)):
        values = []
        for _ in range(rows):
            if rng.random() < 0.1:
                values.append(None)
                continue
            words = [rng.choice(UUIDS + PIECES) for _ in range(rng.randint(0, 5))]
            # glue some UUIDs to their neighbours: id=<uuid>, <uuid>x
            values.append(rng.choice([" ", "", ","]).join(words))
        folder = root / f"p={part}"
        folder.mkdir(parents=True)
        pq.write_table(
            pa.table({"id": list(range(rows)), "msg": values, "note": values[::-1]}),
            folder / "part-0.parquet",
            row_group_size=9,
        )


def _tokens_sql(column: str, pattern: str) -> str:
    """DuckDB: the default tokenizer's tokens of ``column`` after the strip (lowercased,
    split on what is not a letter or digit; the words here are ASCII or 'café')."""
    stripped = f"regexp_replace({column}, '{pattern}', ' ', 'g')"
    return f"regexp_split_to_array(lower({stripped}), '{TOKEN_RE}')"


def test_strip_modes_match_duckdb_over_the_source(tmp_path: Path) -> None:
    from indextables.search.companion.stringmodes import UUID_PATTERN

    root = tmp_path / "src"
    _log_source(root)
    custom = "ORD-[0-9]+"
    index = tmp_path / "idx"
    build_companion(
        str(root), str(index), source_format="parquet",
        indexing_modes={"msg": "text_uuid_strip", "note": f"text_custom_strip:{custom}"},
    )  # fmt: skip
    cache = {"spark.indextables.cache.directoryPath": str(tmp_path / "cache")}
    table = open_table(str(index), options=cache)
    (split,) = table._view.splits[:1]
    store = open_table_store(str(index), {})
    directory = SplitCache(str(tmp_path / "cache"), 10**9).fetch(store, str(index), split.entry.ref)
    assert split_manifest(directory).string_indexing_modes == {
        "msg": {"mode": "text_uuid_strip"},
        "note": {"mode": "text_custom_strip", "regex": custom},
    }
    con = duckdb.connect()
    source = f"read_parquet('{root}/*/*.parquet', hive_partitioning = true)"
    msg = _tokens_sql("msg", UUID_PATTERN)
    note = _tokens_sql("note", custom)
    cases = {
        "msg:error": f"list_contains({msg}, 'error')",
        "msg:user AND msg:ok": f"list_contains({msg}, 'user') AND list_contains({msg}, 'ok')",
        # a UUID's pieces were stripped: only rows where the piece stands alone match
        "msg:12d3": f"list_contains({msg}, '12d3')",
        "msg:deadbeef": f"list_contains({msg}, 'deadbeef')",
        "msg:abcdef01": f"list_contains({msg}, 'abcdef01')",
        "note:ord": f"list_contains({note}, 'ord')",
        "note:42": f"list_contains({note}, '42')",
        "note:17": f"list_contains({note}, '17')",
        "msg:café OR note:café": f"list_contains({msg}, 'café') OR list_contains({note}, 'café')",
    }
    for query, where in cases.items():
        expected = duck(con, f"SELECT id, msg, note, p FROM {source} WHERE {where}")
        found = table.search(query, columns=["id", "msg", "note", "p"])
        assert canonical(found) == canonical(expected), query
    # a filter on the column compares the source's value, not the stripped one
    value = UUIDS[0]
    expected = duck(con, f"SELECT id, p FROM {source} WHERE msg = '{value}'")
    found = table.search(where=f"msg = '{value}'", columns=["id", "p"])
    assert canonical(found) == canonical(expected)
    con.close()


@pytest.mark.parametrize(
    ("mode", "named"),
    [
        ("exact_only", "exact_only is not supported"),
        ("text_uuid_exactonly", "text_uuid_exactonly is not supported"),
        ("text_custom_exactonly:[0-9]+", "text_custom_exactonly is not supported"),
        ("text_custom_strip:", "text_custom_strip needs a regex"),
        ("text_custom_strip:(unclosed", "does not compile"),
        ("text_uuid_strip:x", "not supported here"),
    ],
)
def test_other_string_modes_are_refused_by_name(tmp_path: Path, mode: str, named: str) -> None:
    root = tmp_path / "src"
    _log_source(root)
    with pytest.raises(CompanionError, match=re.escape(named)):
        build_companion(
            str(root), str(tmp_path / "idx"), source_format="parquet",
            indexing_modes={"msg": mode},
        )  # fmt: skip
    assert not (tmp_path / "idx").exists() or not any((tmp_path / "idx").rglob("*.split"))


# -- a whole companion table in the reference's form ---------------------------------------


def test_a_reference_companion_table_reads_like_duckdb(tmp_path: Path) -> None:
    """A table whose log, configuration and split are written by hand as the reference
    writes them (no builder involved): open_table answers like DuckDB over the source."""
    import io
    import time

    from indextables.protocol.actions import AddAction
    from indextables.protocol.splitbundle import write_split_bundle
    from indextables.search.schema.schemajson import spark_json
    from indextables.search.table.tableaccess import _engine
    from indextables.search.write.splitwriter import to_reference_form

    root = tmp_path / "src"
    _source(root)
    uri = str(tmp_path / "idx")
    config = {
        "indextables.companion.enabled": "true",
        "indextables.companion.sourceTablePath": str(root),
        "indextables.companion.sourceFormat": "parquet",
        "indextables.companion.fastFieldMode": "HYBRID",
        "indextables.companion.lastSyncedVersion": "0",
    }
    table = _engine().create_table(
        uri, schema=spark_json(source_schema()), partition_columns=(), configuration=config,
        storage_options={}, config={},
    )  # fmt: skip
    directory = str(tmp_path / "split")
    write_reference_split(directory, str(root), FILES, reverse=True)
    to_reference_form(directory)  # the reference's term dictionaries are SSTables
    buffer = io.BytesIO()
    footer = write_split_bundle(directory, buffer)
    data = buffer.getvalue()
    open_table_store(uri, {}).put("part-reference.split", data)
    add = AddAction(
        path="part-reference.split", partition_values={}, size=len(data),
        modification_time=int(time.time() * 1000), data_change=True, num_records=83,
        footer_start_offset=footer.footer_start_offset,
        footer_end_offset=footer.footer_end_offset, has_footer_offsets=True,
        doc_mapping_json=reference_doc_mapping(promoted=True),
        companion_source_files=FILES, companion_fast_field_mode="HYBRID",
    )  # fmt: skip
    table.commit(adds=[add], removes=[], metadata=None)
    opened = open_table(uri, options={"spark.indextables.cache.directoryPath": str(tmp_path / "c")})
    files = ", ".join(f"'{root / f}'" for f in FILES if "empty" not in f)
    con = duckdb.connect()
    for query, where in QUERIES.items():
        expected = duck(con, f"SELECT * FROM read_parquet([{files}]) WHERE {where}")
        found = opened.search(query, columns=source_schema().names)
        assert canonical(found) == canonical(expected), query
    assert (
        opened.count(where="n > 0")
        == duck(con, f"SELECT count(*) AS c FROM read_parquet([{files}]) WHERE n > 0")
        .column(0)[0]
        .as_py()
    )
    con.close()


def test_a_column_named_like_a_hidden_field_is_refused(tmp_path: Path) -> None:
    from indextables.search.errors import CompanionSourceError

    folder = tmp_path / "src" / "p=a"
    folder.mkdir(parents=True)
    pq.write_table(pa.table({"id": [1], "__pq_row_in_file": [5]}), folder / "f.parquet")
    with pytest.raises(CompanionSourceError, match=r"__pq_row_in_file.*EXCLUDE COLUMNS"):
        build_companion(str(tmp_path / "src"), str(tmp_path / "idx"), source_format="parquet")
    build_companion(
        str(tmp_path / "src"), str(tmp_path / "idx2"), source_format="parquet",
        exclude_columns=("__pq_row_in_file",),
    )  # fmt: skip
    cache = {"spark.indextables.cache.directoryPath": str(tmp_path / "cache")}
    table = open_table(str(tmp_path / "idx2"), options=cache)
    assert table.search("id:1").to_pylist() == [{"id": 1, "__pq_row_in_file": 5, "p": "a"}]
