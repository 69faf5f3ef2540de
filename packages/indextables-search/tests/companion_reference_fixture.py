"""Write a companion split directory in tantivy4java's form, by hand, from its documented layout.

Independent of this package's builder on purpose: the schema, documents and
``_parquet_manifest.json`` below follow docs/companion.md ("Format"), i.e.
tantivy4java's ``parquet_companion/{schema_derivation,indexing,manifest}.rs``:

- HYBRID fields: numbers and booleans indexed + fast; strings ``raw``-tokenized
  text (a ``default``-tokenized override for full text), positions, not fast;
  nothing stored (the doc store holds empty documents, the "stub" store);
- every document carries ``__pq_file_hash`` (Rust ``DefaultHasher`` of the
  file's relative path; the values below were printed by rustc 1.95) and
  ``__pq_row_in_file``, u64 fast fields, neither indexed nor stored;
- the manifest's JSON keys are those of its serde structs.

``layout`` also writes the older forms a reader must accept: ``"segments"``
(tantivy4java's splits before the hidden fields: only ``segment_row_ranges``
map hits) and ``"row_key"`` (this package's first companion splits: a hidden
``__indextables_row = file number << 32 | row``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import tantivy

# Rust: `let mut h = DefaultHasher::new(); path.hash(&mut h); h.finish()` (rustc 1.95.0).
RUST_PATH_HASHES = {
    "": 3476900567878811119,
    "a": 8186225505942432243,
    "part-00000.parquet": 7448134752139004834,
    "day=2024-01-01/part-0.parquet": 2576414014127321410,
    "données/ü€.parquet": 16470903812004590369,
    "0123456789abcdef0123456789": 16243038423002766663,
    "data/part-00000.parquet": 16695083932732030933,
    "data/part-00001.parquet": 575483795069555291,
    "data/empty.parquet": 3700413653645053043,
    "p=a/part-0.parquet": 13611339292858394539,
    "p=a/part-1.parquet": 10177387592047826189,
    "p=a/part-2.parquet": 11945704418065699655,
}

# column -> (doc mapping type, tokenizer); the doc mapping tantivy4java reports.
COLUMNS = {
    "id": ("i64", None),
    "n": ("i64", None),
    "x": ("f64", None),
    "s": ("text", "raw"),
    "msg": ("text", "default"),
    "flag": ("bool", None),
}


def reference_doc_mapping(*, promoted: bool = False) -> str:
    """The AddAction's doc mapping for the fixture's columns (HYBRID: strings not fast).

    ``promoted``: every field reported fast, as tantivy4java reports it
    (``promote_doc_mapping_all_fast``: its runtime serves the rest from Parquet).
    """
    entries = []
    for name, (kind, tokenizer) in COLUMNS.items():
        entry: dict[str, Any] = {
            "name": name,
            "type": kind,
            "stored": False,
            "indexed": True,
            "fast": promoted or kind != "text",
        }
        if tokenizer:
            entry["tokenizer"] = tokenizer
            entry["record"] = "position"
        entries.append(entry)
    return json.dumps(entries)


def write_reference_split(
    directory: str,
    root: str,
    files: Sequence[str],
    *,
    layout: str = "pq",
    reverse: bool = False,
    compress: bool = False,
) -> dict[str, Any]:
    """Index ``files`` (paths relative to ``root``) into a split directory; return its manifest.

    ``reverse`` adds the documents last row first, as a merge may leave them
    (then only the hidden fields map hits: ``segment_row_ranges`` is the
    naive one tantivy4java writes).
    """
    builder = tantivy.SchemaBuilder()
    for name, (kind, tokenizer) in COLUMNS.items():
        if kind == "text":
            builder.add_text_field(name, tokenizer_name=tokenizer, index_option="position")
        elif kind == "i64":
            builder.add_integer_field(name, indexed=True, fast=True)
        elif kind == "f64":
            builder.add_float_field(name, indexed=True, fast=True)
        else:
            builder.add_boolean_field(name, indexed=True, fast=True)
    if layout == "pq":
        builder.add_unsigned_field("__pq_file_hash", fast=True)
        builder.add_unsigned_field("__pq_row_in_file", fast=True)
    elif layout == "row_key":
        builder.add_unsigned_field("__indextables_row", fast=True)
    os.makedirs(directory, exist_ok=True)
    index = tantivy.Index(builder.build(), path=directory)
    writer = index.writer(50_000_000, num_threads=1)
    documents = []
    entries = []
    offset = 0
    for number, relative in enumerate(files):
        location = os.path.join(root, relative)
        table = pq.read_table(location)
        metadata = pq.read_metadata(location)
        # this package's first builder listed files without rows too (its row key
        # numbers files by their place in the split); tantivy4java refuses them
        if table.num_rows or layout == "row_key":
            entries.append(_file_entry(relative, location, metadata, offset))
        for row, values in enumerate(table.to_pylist()):
            documents.append(_document(values, relative, number, row, layout))
        offset += table.num_rows
    for doc in reversed(documents) if reverse else documents:
        writer.add_document(doc)
    writer.commit()
    writer.wait_merging_threads()
    manifest = {
        "version": 1,
        "table_root": "",
        "fast_field_mode": "hybrid",
        "segment_row_ranges": [{"segment_ord": 0, "row_offset": 0, "num_rows": offset}],
        "parquet_files": entries,
        "column_mapping": [
            {
                "tantivy_field_name": name,
                "parquet_column_name": name,
                "physical_ordinal": ordinal,
                "parquet_type": {"i64": "INT64", "f64": "DOUBLE", "bool": "BOOLEAN"}.get(
                    kind, "BYTE_ARRAY"
                ),
                "tantivy_type": {"i64": "I64", "f64": "F64", "bool": "Bool"}.get(kind, "Str"),
                "field_id": None,
            }
            for ordinal, (name, (kind, _)) in enumerate(COLUMNS.items())
        ],
        "total_rows": offset,
        "storage_config": None,
        "metadata": {},
        "string_hash_fields": {},
        "string_indexing_modes": {},
        "companion_hash_fields": {},
    }
    data = json.dumps(manifest).encode("utf-8")
    if compress:
        import zstandard

        data = zstandard.ZstdCompressor(level=3).compress(data)
    with open(os.path.join(directory, "_parquet_manifest.json"), "wb") as handle:
        handle.write(data)
    return manifest


def _document(
    values: dict[str, Any], relative: str, number: int, row: int, layout: str
) -> tantivy.Document:
    doc = tantivy.Document()
    for name, (kind, _) in COLUMNS.items():
        value = values.get(name)
        if value is None:
            continue
        if kind == "text":
            doc.add_text(name, value)
        elif kind == "i64":
            doc.add_integer(name, value)
        elif kind == "f64":
            doc.add_float(name, value)
        else:
            doc.add_boolean(name, value)
    if layout == "pq":
        doc.add_unsigned("__pq_file_hash", RUST_PATH_HASHES[relative])
        doc.add_unsigned("__pq_row_in_file", row)
    elif layout == "row_key":
        doc.add_unsigned("__indextables_row", (number << 32) | row)
    return doc


def _file_entry(
    relative: str, location: str, metadata: pq.FileMetaData, offset: int
) -> dict[str, Any]:
    groups = []
    first = 0
    for index in range(metadata.num_row_groups):
        group = metadata.row_group(index)
        groups.append(
            {
                "row_group_idx": index,
                "num_rows": group.num_rows,
                "row_offset_in_file": first,
                "columns": [
                    {
                        "column_idx": c,
                        "column_name": group.column(c).path_in_schema,
                        "data_page_offset": group.column(c).data_page_offset,
                        "compressed_size": group.column(c).total_compressed_size,
                        "uncompressed_size": group.column(c).total_uncompressed_size,
                        # tantivy4java's base64 page locations (ignored by this reader)
                        "page_locations": "AAAAAAAAAAAAAAAAAAAAAAAAAAA=",
                    }
                    for c in range(group.num_columns)
                ],
            }
        )
        first += group.num_rows
    return {
        "relative_path": relative,
        "file_size_bytes": os.path.getsize(location),
        "row_offset": offset,
        "num_rows": metadata.num_rows,
        "has_offset_index": False,
        "row_groups": groups,
    }


def source_schema() -> pa.Schema:
    return pa.schema(
        [
            ("id", pa.int64()),
            ("n", pa.int64()),
            ("x", pa.float64()),
            ("s", pa.string()),
            ("msg", pa.string()),
            ("flag", pa.bool_()),
        ]
    )
