"""Table schema (Arrow) -> IndexTables field specs -> Tantivy schema and doc mapping JSON.

One :class:`FieldSpec` per non-partition column decides how the column is
indexed. The doc mapping JSON is what the transaction log records per split
(``[{"fast":true,"indexed":true,"name":"id","stored":true,"type":"i64"}, ...]``,
keys sorted, exactly as the reference writes it).
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

import pyarrow as pa
import tantivy

from indextables.search.errors import OptionError, UnsupportedTypeError
from indextables.search.options import (
    DEFAULT_DOCSTORE_BLOCK_SIZE,
    DEFAULT_TOKEN_LENGTH,
    IndexingOptions,
)
from indextables.search.refkeys import warn_once
from indextables.search.schema import columntypes as ct
from indextables.search.schema.tokenizers import (
    LIMITED_TOKENIZERS,
    limit_ignored_reason,
    open_index,
    split_limit,
    with_limit,
)


class FieldKind(Enum):
    """How one column is held in the Tantivy index."""

    I64 = "i64"
    F64 = "f64"
    BOOL = "bool"
    DATE = "date"
    STRING = "string"  # text field, raw tokenizer: exact match
    TEXT = "text"  # text field, tokenized: full-text search
    JSON = "json"
    IP = "ip"
    BYTES = "bytes"


# A hidden fast field in every split this package writes: the position of the
# document's row in the split's Arrow copy (see convert.row_key). Not a column.
ROW_KEY_FIELD = "__indextables_row"

# The Arrow types a numeric fast field holds exactly, by the field's kind (its values read
# back as int64 / float64). Anything else indexed as a number (a companion's decimals, held as
# the nearest doubles) is an approximation there: exact values come from the rows.
_FAST_EXACT: dict[FieldKind, tuple[pa.DataType, ...]] = {
    FieldKind.I64: (
        pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(),
    ),
    FieldKind.F64: (pa.float32(), pa.float64()),
}  # fmt: skip
_FAST_READ_TYPE: dict[FieldKind, pa.DataType] = {
    FieldKind.I64: pa.int64(),
    FieldKind.F64: pa.float64(),
}


def fast_read_type(data_type: pa.DataType, kind: FieldKind) -> pa.DataType | None:
    """The type a numeric fast field of ``kind`` reads a ``data_type`` column's values as,
    when it holds them exactly; None when it holds approximations or is not numeric."""
    return _FAST_READ_TYPE[kind] if data_type in _FAST_EXACT.get(kind, ()) else None


# The wire "type" each kind has in the doc mapping JSON.
_WIRE_TYPE = {
    FieldKind.I64: "i64",
    FieldKind.F64: "f64",
    FieldKind.BOOL: "bool",
    FieldKind.DATE: "datetime",
    FieldKind.STRING: "text",
    FieldKind.TEXT: "text",
    FieldKind.JSON: "object",
    FieldKind.IP: "ip",
    FieldKind.BYTES: "bytes",
}


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """The indexing decision for one column.

    Attributes:
        name: Column name.
        kind: The field kind.
        tokenizer: Tokenizer name for text/json kinds, else None.
        stored: Whether values are stored (needed to read the column back).
        indexed: Whether values are searchable.
        fast: Whether values get a columnar fast field.
        record_option: What a tokenized text field's postings hold (basic,
            freq, position; phrase queries need position).
        token_length: The longest token (UTF-8 bytes) a ``default`` or
            ``whitespace`` tokenized field indexes; longer ones are dropped.
    """

    name: str
    kind: FieldKind
    tokenizer: str | None
    stored: bool
    indexed: bool
    fast: bool
    record_option: str = "position"
    token_length: int = DEFAULT_TOKEN_LENGTH

    @property
    def tokenizer_name(self) -> str | None:
        """The tokenizer name written into the split (the reference's form:
        ``default_limit_40`` for a ``default`` field limited to 40 bytes)."""
        if self.tokenizer is None or self.kind not in (FieldKind.TEXT, FieldKind.JSON):
            return self.tokenizer
        return with_limit(self.tokenizer, self.token_length)

    @property
    def is_tokenized(self) -> bool:
        """True for fields whose terms are produced by a non-raw tokenizer."""
        return self.kind in (FieldKind.TEXT, FieldKind.JSON) and self.tokenizer != "raw"

    @property
    def is_exact(self) -> bool:
        """True for fields whose indexed term is the whole value (exact match)."""
        return self.kind is FieldKind.STRING or (
            self.kind is FieldKind.TEXT and self.tokenizer == "raw"
        )

    def to_json_dict(self) -> dict[str, Any]:
        """The doc mapping JSON entry of this field (keys sorted as the reference writes)."""
        entry: dict[str, Any] = {
            "fast": self.fast,
            "indexed": self.indexed,
            "name": self.name,
            "stored": self.stored,
        }
        if self.tokenizer is not None:
            entry["tokenizer"] = self.tokenizer_name
        entry["type"] = _WIRE_TYPE[self.kind]
        return dict(sorted(entry.items()))


def default_kind(name: str, data_type: pa.DataType) -> FieldKind:
    """The field kind a column type maps to when no typemap option overrides it.

    Raises:
        UnsupportedTypeError: for types no field kind can hold (decimal, intervals, ...),
            at the top level or inside a struct, array or map.
    """
    if ct.is_boolean(data_type):
        return FieldKind.BOOL
    if ct.is_integral(data_type):
        return FieldKind.I64
    if ct.is_floating(data_type):
        return FieldKind.F64
    if ct.is_temporal(data_type):
        return FieldKind.DATE
    if ct.is_string(data_type):
        return FieldKind.STRING
    if ct.is_binary(data_type):
        return FieldKind.BYTES
    if ct.is_nested(data_type):
        _check_nested(name, data_type)
        return FieldKind.JSON
    raise UnsupportedTypeError(
        f"column {name!r} has type {ct.type_name(data_type)!r}, which IndexTables cannot index; "
        "supported: string, binary, integral and floating types, boolean, date, timestamp, "
        "timestamp_ntz, and structs, arrays and maps of these (decimals too inside them)"
    )


def _check_nested(path: str, data_type: pa.DataType) -> None:
    """Refuse a nested type holding a leaf type that cannot be stored, naming its path."""
    if ct.is_struct(data_type):
        for child in ct.fields_of(data_type):
            _check_nested(f"{path}.{child.name}", child.type)
    elif ct.is_list(data_type):
        _check_nested(f"{path}[]", data_type.value_type)
    elif ct.is_map(data_type):
        _check_nested(f"{path}.<key>", data_type.key_type)
        _check_nested(f"{path}.<value>", data_type.item_type)
    elif not ct.is_scalar(data_type):  # their exact values live in the Arrow copy
        raise UnsupportedTypeError(
            f"column path {path!r} has type {ct.type_name(data_type)!r}, which IndexTables "
            "cannot store inside a struct, array or map; supported there: string, binary, "
            "integral, floating and decimal types, boolean, date, timestamp, timestamp_ntz"
        )


def _check_override(name: str, data_type: pa.DataType, kind: FieldKind) -> None:
    allowed = {
        FieldKind.STRING: ct.is_string(data_type),
        FieldKind.TEXT: ct.is_string(data_type),
        FieldKind.IP: ct.is_string(data_type),
        FieldKind.JSON: ct.is_nested(data_type) or ct.is_string(data_type),
    }
    if not allowed.get(kind, False):
        raise OptionError(
            f"option spark.indextables.indexing.typemap.{name}={kind.value!r} does not fit "
            f"column {name!r} of type {ct.type_name(data_type)!r}"
        )


def field_spec(name: str, data_type: pa.DataType, options: IndexingOptions) -> FieldSpec:
    """Decide how one column is indexed, applying the typemap/fast/store/index/tokenizer options."""
    key = name.lower()
    kind = default_kind(name, data_type)
    if key in options.typemap:
        kind = FieldKind(options.typemap[key])
        _check_override(name, data_type, kind)
    tokenizer: str | None = None
    if kind is FieldKind.STRING:
        tokenizer = "raw"
    elif kind in (FieldKind.TEXT, FieldKind.JSON):
        tokenizer = options.tokenizers.get(key, "default")
    fast = _is_fast(key, kind, options)
    stored = key not in options.index_only_fields
    indexed = key not in options.store_only_fields
    # As the reference: a table's record options apply to tokenized text fields; exact
    # strings keep positions (a companion may choose otherwise: companion.layout).
    record = (
        options.record_options.get(key, options.default_record_option)
        if kind is FieldKind.TEXT
        else "position"
    )
    length = options.token_lengths.get(key, options.default_token_length)
    if kind is not FieldKind.TEXT or tokenizer not in LIMITED_TOKENIZERS:
        # As the reference: only text fields take a limit; raw and en_stem none (see tokenizers).
        if key in options.token_lengths and tokenizer is not None:
            warn_once(
                f"spark.indextables.indexing.tokenLength.{key}", limit_ignored_reason(tokenizer)
            )
        length = DEFAULT_TOKEN_LENGTH
    return FieldSpec(name, kind, tokenizer, stored, indexed, fast, record, length)


def _is_fast(key: str, kind: FieldKind, options: IndexingOptions) -> bool:
    """Which fields get a fast field, as the reference decides.

    With ``fastfields`` given, exactly the fields it names; otherwise numbers,
    booleans, dates and exact strings, less those ``nonfastfields`` names.
    JSON fields follow ``json.mode`` (``full``: fast) and IP fields are
    always fast (range queries on them need it), whatever the lists say.
    """
    if kind is FieldKind.IP:
        return True
    if kind is FieldKind.JSON:
        return options.json_mode == "full" or key in options.fast_fields
    if options.fast_fields:
        return key in options.fast_fields
    if key in options.non_fast_fields:
        return False
    return kind not in (FieldKind.TEXT, FieldKind.BYTES)


def field_specs(
    schema: pa.Schema, options: IndexingOptions, *, partition_columns: Sequence[str] = ()
) -> tuple[FieldSpec, ...]:
    """Field specs of every non-partition column of ``schema``.

    Raises:
        UnsupportedTypeError: a column's type cannot be indexed.
        OptionError: an option names a column that does not exist or does not fit.
    """
    parts = {c.lower() for c in partition_columns}
    if options.fast_only_fields:
        raise OptionError(
            "option spark.indextables.indexing.fastonlyfields applies to companion indexes "
            "only (BUILD INDEXTABLES COMPANION, build_companion): a table's rows are read "
            "back from its own splits; use spark.indextables.indexing.storeonlyfields there"
        )
    if any(f.name.lower() == ROW_KEY_FIELD for f in schema):
        raise UnsupportedTypeError(
            f"column name {ROW_KEY_FIELD!r} is reserved by IndexTables; rename the column"
        )
    specs = tuple(
        field_spec(f.name, f.type, options) for f in schema if f.name.lower() not in parts
    )
    _check_named_fields(options, {f.name.lower() for f in schema})
    return specs


def _check_named_fields(options: IndexingOptions, columns: set[str]) -> None:
    for option, names in options.named_fields().items():
        unknown = sorted(set(names) - columns)
        if unknown:
            raise OptionError(
                f"option {option} names column(s) {', '.join(unknown)} that the DataFrame "
                f"does not have (columns: {', '.join(sorted(columns))})"
            )


def doc_mapping_json(specs: Iterable[FieldSpec]) -> str:
    """The compact doc mapping JSON recorded in the log for splits with these fields."""
    return json.dumps([s.to_json_dict() for s in specs], separators=(",", ":"))


def specs_from_doc_mapping(text: str) -> dict[str, FieldSpec]:
    """Parse a doc mapping JSON (ours or the reference's) into field specs by lowercase name.

    Every split of a table usually carries the same text, so each distinct
    text is parsed once (a read of many splits paid ~2 ms per split for it).
    """
    return dict(_parsed_doc_mapping(text))


@functools.lru_cache(maxsize=256)
def _parsed_doc_mapping(text: str) -> tuple[tuple[str, FieldSpec], ...]:
    specs: dict[str, FieldSpec] = {}
    for entry in json.loads(text):
        spec = _spec_from_entry(entry)
        specs[spec.name.lower()] = spec
    return tuple(specs.items())


def _spec_from_entry(entry: Mapping[str, Any]) -> FieldSpec:
    wire = str(entry.get("type", "text"))
    tokenizer, length = split_limit(entry.get("tokenizer"))
    if wire == "text":
        kind = FieldKind.STRING if tokenizer in (None, "raw") else FieldKind.TEXT
        tokenizer = tokenizer or "raw"
    else:
        kind = _KIND_BY_WIRE.get(wire, FieldKind.JSON)
    return FieldSpec(
        name=str(entry["name"]),
        kind=kind,
        tokenizer=tokenizer,
        stored=bool(entry.get("stored", True)),
        indexed=bool(entry.get("indexed", True)),
        fast=bool(entry.get("fast", False)),
        token_length=length,
    )


_KIND_BY_WIRE = {
    "i64": FieldKind.I64,
    "u64": FieldKind.I64,
    "f64": FieldKind.F64,
    "bool": FieldKind.BOOL,
    "date": FieldKind.DATE,
    "datetime": FieldKind.DATE,
    "object": FieldKind.JSON,
    "json": FieldKind.JSON,
    "ip": FieldKind.IP,
    "bytes": FieldKind.BYTES,
}


def tantivy_schema(
    specs: Iterable[FieldSpec], *, row_key: bool = False, hidden_fast: Sequence[str] = ()
) -> tantivy.Schema:
    """Build the Tantivy schema for these field specs (plus the hidden row key field).

    ``hidden_fast`` names further u64 fast fields (neither indexed nor stored)
    added after the others: a companion split's row coordinates.
    """
    builder = tantivy.SchemaBuilder()
    for spec in specs:
        _add_field(builder, spec)
    if row_key:
        builder.add_unsigned_field(ROW_KEY_FIELD, fast=True)
    for name in hidden_fast:
        builder.add_unsigned_field(name, fast=True)
    return builder.build()


def create_index(
    specs: Sequence[FieldSpec],
    directory: str,
    *,
    row_key: bool = False,
    fast_dates: bool = False,
    hidden_fast: Sequence[str] = (),
    docstore_block_size: int = DEFAULT_DOCSTORE_BLOCK_SIZE,
) -> tantivy.Index:
    """A new empty Tantivy index in ``directory`` with the settings the builder cannot express.

    tantivy-py's schema builder has no date precision and no way to leave a
    text or JSON field unindexed, so the index's ``meta.json`` is adjusted
    before the index is opened: date fast fields keep microseconds (Tantivy's
    default truncates them to seconds, and range queries on a fast date field
    compare the fast values), store-only text and JSON fields get no inverted
    index, and no field has field norms (nothing here scores). With
    ``fast_dates`` every date field is made fast (the searchable copies of
    reference splits, whose date fields may not be). ``docstore_block_size``:
    the uncompressed size at which Tantivy closes a doc-store block (a read of
    one scattered row decompresses part of one block; smaller blocks compress
    a little worse).
    """
    tantivy.Index(tantivy_schema(specs, row_key=row_key, hidden_fast=hidden_fast), path=directory)
    meta_path = os.path.join(directory, "meta.json")
    with open(meta_path, encoding="utf-8") as source:
        meta = json.load(source)
    meta.setdefault("index_settings", {})["docstore_blocksize"] = docstore_block_size
    by_name = {s.name: s for s in specs}
    for entry in meta["schema"]:
        spec = by_name.get(entry["name"])
        if spec is not None:
            _adjust_entry(entry, spec, fast_dates=fast_dates)
    with open(meta_path, "w", encoding="utf-8") as target:
        json.dump(meta, target)
    return open_index(directory)


def _adjust_entry(entry: dict[str, Any], spec: FieldSpec, *, fast_dates: bool) -> None:
    options = entry["options"]
    if entry["type"] == "date":
        options["precision"] = "microseconds"
        if fast_dates:
            options["fast"] = True
    elif entry["type"] in ("text", "json_object") and not spec.indexed:
        options["indexing"] = None
    elif entry["type"] in ("text", "json_object") and options.get("indexing"):
        # Field norms serve only BM25 scores, which no read path orders by; the reference
        # writes none either. One byte per document and field saved (~6% of a log split).
        options["indexing"]["fieldnorms"] = False
    if entry["type"] == "json_object" and spec.fast:
        # The reference's JSON fast fields keep string values whole (no fast tokenizer).
        options["fast"] = True


def _add_field(builder: tantivy.SchemaBuilder, s: FieldSpec) -> None:
    if s.kind in (FieldKind.STRING, FieldKind.TEXT):
        option = s.record_option if s.indexed else "basic"
        builder.add_text_field(
            s.name,
            stored=s.stored,
            fast=s.fast,
            tokenizer_name=s.tokenizer_name or "raw",
            index_option=option,
        )
    elif s.kind is FieldKind.JSON:
        builder.add_json_field(
            s.name, stored=s.stored, fast=s.fast, tokenizer_name=s.tokenizer_name or "default"
        )
    elif s.kind is FieldKind.I64:
        builder.add_integer_field(s.name, stored=s.stored, indexed=s.indexed, fast=s.fast)
    elif s.kind is FieldKind.F64:
        builder.add_float_field(s.name, stored=s.stored, indexed=s.indexed, fast=s.fast)
    elif s.kind is FieldKind.BOOL:
        builder.add_boolean_field(s.name, stored=s.stored, indexed=s.indexed, fast=s.fast)
    elif s.kind is FieldKind.DATE:
        builder.add_date_field(s.name, stored=s.stored, indexed=s.indexed, fast=s.fast)
    elif s.kind is FieldKind.BYTES:
        builder.add_bytes_field(s.name, stored=s.stored, indexed=s.indexed, fast=s.fast)
    else:
        builder.add_ip_addr_field(s.name, stored=s.stored, indexed=s.indexed, fast=s.fast)
