"""A whole Tantivy segment from Arrow columns: every file tantivy-py writes for one segment.

The fields come from the index's ``meta.json`` schema (:func:`segment_fields`), so the
segment is written for exactly the schema Tantivy will open it with. Per extension:

* ``.idx``, ``.pos``, ``.term``, ``.fieldnorm``: text fields through
  :func:`.invertedfiles.inverted_files` (tokens, postings, positions), the other
  indexed fields from :func:`.numericterms.value_terms` (documents only, no positions),
  every field's blob in field-id order in one composite file each;
* ``.store``: the stored fields (:mod:`.docstore`), a list column's values as repeated
  values of its field, an ``ip`` value as its IPv6 u128, a JSON field's object;
* ``.fast``: the fast fields (:func:`.fastfields.fast_file`); a segment without any
  holds an empty columnar file (its document count only). A fast text or bytes value
  past 65,535 bytes keeps its first 65,535 bytes there, as Tantivy's does (the stored
  value is whole; an indexed bytes term keeps its first 65,531 bytes and a text token
  past 65,530 bytes is not indexed, as in Tantivy).

JSON fields (``json_object``) are written for list columns of integers, floats or bools
(their terms, objects and fast columns: :mod:`.jsonfields`).

Not written (refused with :class:`SegmentWriteError` naming the field): other JSON
values (strings, structs, maps: :mod:`.jsonfields`), JSON fast tokenizers and expanded
dots, facet fields, text analyzers the writer does not implement (stemming and other
custom ones), list columns of indexed text fields (several texts per document are not
tokenized).
"""

from __future__ import annotations

import dataclasses
import importlib
import os
import struct
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import pyarrow as pa

from indextables.search.splits.termdict.composite import (
    FieldBlob,
    join_composite,
    split_composite,
    split_footer,
    with_footer,
)
from indextables.search.splits.termdict.fstform import encode_fst_dict
from indextables.search.write.segwriter.docstore import (
    DEFAULT_BLOCK_SIZE,
    StoredColumn,
    StoredKind,
    store_file,
)
from indextables.search.write.segwriter.errors import SegmentWriteError
from indextables.search.write.segwriter.fastfields import FastField
from indextables.search.write.segwriter.fieldnorm import (
    FOOTER_JSON,
    fieldnorm_ids,
    token_counts,
)
from indextables.search.write.segwriter.invert import invert
from indextables.search.write.segwriter.invertedfiles import (
    TextField,
    field_terms,
    inverted_files,
)
from indextables.search.write.segwriter.ipvalues import ip_fixed
from indextables.search.write.segwriter.jsonfields import (
    JsonColumn,
    json_blobs,
    json_column,
)
from indextables.search.write.segwriter.numericterms import value_terms
from indextables.search.write.segwriter.postings import field_header, field_postings
from indextables.search.write.segwriter.tokenize import Analyzer, analyzer_for

__all__ = [
    "SEGMENT_EXTENSIONS",
    "FieldType",
    "SegmentField",
    "SegmentTimes",
    "segment_fields",
    "segment_files",
    "write_segment",
]

Record = Literal["basic", "freq", "position"]
FieldType = Literal["text", "u64", "i64", "f64", "bool", "date", "ip", "bytes", "json"]
_VALUE_TYPES: Final = ("u64", "i64", "f64", "bool", "date", "ip", "bytes")
#: The files of one segment, as ``<segment id>.<extension>``.
SEGMENT_EXTENSIONS: Final = ("idx", "pos", "term", "fieldnorm", "store", "fast")
# ``meta.json`` type names that differ from the writer's.
_META_TYPES: Final = {"ip_addr": "ip"}
_RECORDS: Final = {"basic": "basic", "freq": "freq", "position": "position"}
# An empty columnar ``.fast`` file: the empty column dictionary, then the document count
# (u32) and the columnar format's version and magic bytes, as tantivy-py 0.27 writes it.
_EMPTY_COLUMNAR_HEAD: Final = bytes.fromhex(
    "00000000000000000000000004000000000000000000000000000000030000002000000000000000"
)
_EMPTY_COLUMNAR_TAIL: Final = bytes.fromhex("0200000002717742")
_FAST_MODULE: Final = "indextables.search.write.segwriter.fastfields"


@dataclass(frozen=True, slots=True)
class SegmentField:
    """One field of the index's schema as the segment writer needs it.

    Attributes:
        name: the field (and column) name.
        field_id: its position in the schema.
        type: its Tantivy type.
        indexed: whether it has terms and postings.
        stored: whether the doc store holds its values.
        fast: whether it has a fast (columnar) column.
        analyzer: a text field's analyzer (None for other types or unindexed text).
        tokenizer: a text field's tokenizer name, as the schema gives it.
        record: what a text field's postings record (other types: documents only).
        fieldnorms: whether it has fieldnorms.
        options: the schema entry's options as ``meta.json`` gives them.
    """

    name: str
    field_id: int
    type: FieldType
    indexed: bool
    stored: bool
    fast: bool
    analyzer: Analyzer | None = None
    tokenizer: str | None = None
    record: Record = "basic"
    fieldnorms: bool = False
    options: Mapping[str, Any] = field(default_factory=dict, compare=False)


@dataclass(slots=True)
class SegmentTimes:
    """CPU seconds spent per phase of :func:`segment_files` (added up over calls)."""

    inverted: float = 0.0
    values: float = 0.0
    store: float = 0.0
    fast: float = 0.0

    def as_dict(self) -> dict[str, float]:
        """The phases by name."""
        return {
            "inverted": self.inverted,
            "values": self.values,
            "store": self.store,
            "fast": self.fast,
        }


def _text_field(field_id: int, name: str, options: Mapping[str, Any]) -> SegmentField:
    indexing = options.get("indexing")
    stored = bool(options.get("stored", False))
    fast = bool(options.get("fast", False))
    if not indexing:
        return SegmentField(name, field_id, "text", False, stored, fast, options=options)
    tokenizer = str(indexing.get("tokenizer", "default"))
    analyzer = analyzer_for(tokenizer)
    if analyzer is None:
        raise SegmentWriteError(f"field {name!r}: the writer has no {tokenizer!r} analyzer")
    record = _RECORDS.get(str(indexing.get("record", "basic")))
    if record is None:
        raise SegmentWriteError(f"field {name!r}: unknown record option {indexing.get('record')!r}")
    return SegmentField(
        name,
        field_id,
        "text",
        True,
        stored,
        fast,
        analyzer=analyzer,
        tokenizer=tokenizer,
        record=record,  # type: ignore[arg-type]
        fieldnorms=bool(indexing.get("fieldnorms", True)),
        options=options,
    )


def _json_field(field_id: int, name: str, options: Mapping[str, Any]) -> SegmentField:
    spec = _text_field(field_id, name, options)
    fast = options.get("fast", False)
    if fast not in (True, False) or options.get("expand_dots_enabled", False):
        raise SegmentWriteError(
            f"field {name!r}: JSON fast tokenizers and expanded dots are not written"
        )
    return dataclasses.replace(spec, type="json", fieldnorms=False)


def segment_fields(schema: Sequence[Mapping[str, Any]]) -> tuple[SegmentField, ...]:
    """The fields of a ``meta.json`` schema (its ``"schema"`` list), in field-id order.

    Raises:
        SegmentWriteError: a field the writer cannot write (JSON, facet, an analyzer it
            does not implement, a stored IP field), naming it.
    """
    out = []
    for field_id, entry in enumerate(schema):
        name, kind = str(entry["name"]), str(entry["type"])
        kind = _META_TYPES.get(kind, kind)
        options = entry.get("options", {}) or {}
        if kind == "text":
            out.append(_text_field(field_id, name, options))
            continue
        if kind == "json_object":
            out.append(_json_field(field_id, name, options))
            continue
        if kind not in _VALUE_TYPES:
            raise SegmentWriteError(f"field {name!r}: the writer has no {kind!r} fields")
        indexed = bool(options.get("indexed", False))
        stored = bool(options.get("stored", False))
        out.append(
            SegmentField(
                name,
                field_id,
                kind,  # type: ignore[arg-type]
                indexed,
                stored,
                bool(options.get("fast", False)),
                fieldnorms=indexed and bool(options.get("fieldnorms", False)),
                options=options,
            )
        )
    return tuple(out)


def _fast_writer() -> Callable[..., bytes] | None:
    try:
        module = importlib.import_module(_FAST_MODULE)
    except ImportError:
        return None
    writer = getattr(module, "fast_file", None)
    return writer if callable(writer) else None


def fast_fields_supported() -> bool:
    """Whether this build writes fast fields (``fastfields.fast_file`` is present)."""
    return _fast_writer() is not None


def empty_fast_file(max_doc: int) -> bytes:
    """The ``.fast`` file of a segment of ``max_doc`` documents without fast fields."""
    if not 0 <= max_doc < 1 << 32:
        raise SegmentWriteError(f"max_doc {max_doc} is not a u32")
    body = _EMPTY_COLUMNAR_HEAD + struct.pack("<I", max_doc) + _EMPTY_COLUMNAR_TAIL
    return with_footer(body, FOOTER_JSON)


def _value_blobs(
    column: pa.Array | pa.ChunkedArray, spec: SegmentField, max_doc: int
) -> tuple[bytes | None, bytes | None, bytes | None]:
    """(idx blob, term blob, fieldnorm codes) of a non-text indexed field (None: none)."""
    tokens = value_terms(column, spec.type, name=spec.name)  # type: ignore[arg-type]
    codes = fieldnorm_ids(token_counts(tokens, max_doc)) if spec.fieldnorms else None
    total = len(tokens.rows)
    if not total:
        return None, None, codes
    inverted = invert(tokens)
    # Every term's postings in one kernel call (documents only, no block maxima).
    encoded = field_postings(inverted, record="basic", norms=None)
    terms = field_terms(inverted, encoded)
    return field_header(total) + encoded.postings, encode_fst_dict(terms), codes


def _stored_column(
    spec: SegmentField, column: pa.Array | pa.ChunkedArray | JsonColumn
) -> StoredColumn:
    kind: StoredKind = "text" if spec.type == "text" else spec.type
    if isinstance(column, JsonColumn):
        return StoredColumn(spec.name, spec.field_id, kind, column.stored)
    return StoredColumn(spec.name, spec.field_id, kind, column)


def _blobs(data: bytes) -> list[FieldBlob]:
    body, _ = split_footer(data)
    return split_composite(body)


def _composite(blobs: list[FieldBlob]) -> bytes:
    return with_footer(join_composite(sorted(blobs, key=lambda b: b.field)), FOOTER_JSON)


def segment_files(
    fields: Sequence[SegmentField],
    columns: Mapping[str, pa.Array | pa.ChunkedArray],
    max_doc: int,
    *,
    block_size: int = DEFAULT_BLOCK_SIZE,
    compressor: Literal["lz4", "none"] = "lz4",
    times: SegmentTimes | None = None,
) -> dict[str, bytes]:
    """Every file of one segment of ``max_doc`` documents, by extension.

    Args:
        fields: the schema's fields (:func:`segment_fields`).
        columns: each field's values by field name, ``max_doc`` each (a list column: several
            values per document; a null: none). A field without a column has no values.
            Dates are timestamps (stored and indexed as Tantivy's nanoseconds).
        max_doc: the document count.
        block_size: the doc store's block size (``docstore_blocksize``).
        compressor: the doc store's compressor (``docstore_compression``).
        times: CPU seconds per phase are added here when given.

    Raises:
        SegmentWriteError: a column of another length or type, a fast field while fast
            fields are not written, a value a field cannot hold.
    """
    clock = time.process_time
    times = times if times is not None else SegmentTimes()
    empty: dict[str, pa.Array] = {}
    for spec in fields:
        column = columns.get(spec.name)
        if column is None:
            continue
        if len(column) != max_doc:
            raise SegmentWriteError(
                f"column {spec.name!r}: {len(column)} values for {max_doc} documents"
            )

    parts: dict[str, JsonColumn] = {}

    def values_of(spec: SegmentField) -> pa.Array | pa.ChunkedArray | JsonColumn:
        if spec.type == "json":  # its terms, stored objects and fast columns, made once
            if spec.name not in parts:
                found = columns.get(spec.name)
                found = pa.nulls(max_doc, pa.list_(pa.int64())) if found is None else found
                parts[spec.name] = json_column(found, field=spec.name)
            return parts[spec.name]
        column = columns.get(spec.name)
        if column is None:
            if spec.name not in empty:
                empty[spec.name] = pa.nulls(max_doc, _null_type(spec))
            return empty[spec.name]
        if spec.type == "ip":
            # Parsed once for its terms, fast column and stored values.
            if spec.name not in empty:
                empty[spec.name] = ip_fixed(column, spec.name)
            return empty[spec.name]
        return column

    started = clock()
    text = [f for f in fields if f.type == "text" and f.indexed and f.analyzer is not None]
    blobs: dict[str, list[FieldBlob]] = {
        "idx": [],
        "pos": [],
        "term": [],
        "fieldnorm": [],
    }
    if text:
        made = inverted_files(
            [values_of(f) for f in text],
            [TextField(f.field_id, f.name, f.analyzer, f.record, f.fieldnorms) for f in text],  # type: ignore[arg-type]
            max_doc,
        )
        for ext in blobs:
            blobs[ext].extend(_blobs(made[ext]))
    middle = clock()
    times.inverted += middle - started
    for spec in fields:
        if spec.type == "text" or not spec.indexed:
            continue
        values = values_of(spec)
        if isinstance(values, JsonColumn):  # its terms, positions and token count
            made_json = json_blobs(
                values, positions=spec.record == "position", encode=encode_fst_dict
            )
            for ext, blob in zip(("idx", "pos", "term"), made_json or (), strict=False):
                blobs[ext].append(FieldBlob(spec.field_id, 0, blob))
            continue
        idx, term, codes = _value_blobs(values, spec, max_doc)
        if idx is not None and term is not None:
            blobs["idx"].append(FieldBlob(spec.field_id, 0, idx))
            blobs["term"].append(FieldBlob(spec.field_id, 0, term))
            blobs["pos"].append(FieldBlob(spec.field_id, 0, b""))
        if codes is not None:
            blobs["fieldnorm"].append(FieldBlob(spec.field_id, 0, codes))
    out = {ext: _composite(found) for ext, found in blobs.items()}
    after_values = clock()
    times.values += after_values - middle
    stored = [_stored_column(f, values_of(f)) for f in fields if f.stored]
    out["store"] = store_file(stored, max_doc, block_size=block_size, compressor=compressor)
    after_store = clock()
    times.store += after_store - after_values
    out["fast"] = _fast(fields, values_of, max_doc)
    times.fast += clock() - after_store
    return out


def _null_type(spec: SegmentField) -> pa.DataType:
    return {
        "text": pa.string(),
        "u64": pa.uint64(),
        "i64": pa.int64(),
        "f64": pa.float64(),
        "bool": pa.bool_(),
        "date": pa.timestamp("us", tz="UTC"),
        "ip": pa.string(),
        "bytes": pa.binary(),
    }[spec.type]


def _fast(
    fields: Sequence[SegmentField],
    values_of: Callable[[SegmentField], Any],
    max_doc: int,
) -> bytes:
    fast = [f for f in fields if f.fast]
    if not fast:
        return empty_fast_file(max_doc)
    writer = _fast_writer()
    if writer is None:
        names = ", ".join(repr(f.name) for f in fast)
        raise SegmentWriteError(f"fast fields are not written yet (fields {names})")
    columns: dict[str, Any] = {}
    kept: list[Any] = []
    for spec in fast:
        values = values_of(spec)
        if isinstance(values, JsonColumn):  # a column per path holding values (jsonfields)
            if values.fast_values.flatten().null_count < len(values.fast_values.flatten()):
                kept.append(FastField(values.fast_name, values.fast_kind))  # type: ignore[arg-type]
                columns[values.fast_name] = values.fast_values
            continue
        kept.append(spec)
        columns[spec.name] = values
    if not kept:
        return empty_fast_file(max_doc)
    return writer(kept, columns, max_doc)


def write_segment(
    directory: str,
    fields: Sequence[SegmentField],
    columns: Mapping[str, pa.Array | pa.ChunkedArray],
    max_doc: int,
    *,
    block_size: int = DEFAULT_BLOCK_SIZE,
    compressor: Literal["lz4", "none"] = "lz4",
    times: SegmentTimes | None = None,
) -> str:
    """Write one segment's files into ``directory``; return its id (32 hex digits).

    ``meta.json`` is not touched (:mod:`.metajson` lists the segment). See
    :func:`segment_files` for the arguments and errors.
    """
    if max_doc < 1:
        raise SegmentWriteError("a segment holds at least one document")
    files = segment_files(
        fields,
        columns,
        max_doc,
        block_size=block_size,
        compressor=compressor,
        times=times,
    )
    segment_id = uuid.uuid4().hex
    for ext, data in files.items():
        with open(os.path.join(directory, f"{segment_id}.{ext}"), "wb") as handle:
            handle.write(data)
    return segment_id
