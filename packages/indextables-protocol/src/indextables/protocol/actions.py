"""The five log actions and their exact JSON codec.

A version file holds one action per line, each a one-key object naming its
type: ``protocol``, ``metaData``, ``add``, ``remove`` or ``mergeskip``.

Byte-exact round trips: a decoded action remembers the keys it was read with,
in order (``key_order``, including keys whose value was ``null``), and any
keys it does not know (``extra``); encoding writes them back the same way.
An action built in code has no ``key_order`` and is written the way the
reference implementation (v0.5.4, Jackson) writes it: every field, in
declaration order, ``null`` for absent optional values.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from indextables.protocol.errors import CorruptFileError, MissingFieldError, UnknownActionError
from indextables.protocol.jsonwire import JsonObject, check, dumps, loads_object
from indextables.protocol.pathsafety import check_relative_path
from indextables.protocol.state import FileEntry

__all__ = [
    "Action",
    "AddAction",
    "FileFormat",
    "MetadataAction",
    "ProtocolAction",
    "RemoveAction",
    "SkipAction",
    "action_from_json",
    "action_to_json",
    "decode_action_object",
    "encode_action_object",
]


def _extra() -> Any:
    return field(default_factory=dict, kw_only=True)


def _order() -> Any:
    return field(default=None, kw_only=True, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class FileFormat:
    """The ``format`` object of a ``metaData`` action."""

    provider: str = "indextables"
    options: Mapping[str, str] = field(default_factory=dict)
    extra: Mapping[str, Any] = _extra()
    key_order: tuple[str, ...] | None = _order()


@dataclass(frozen=True, slots=True)
class ProtocolAction:
    """Minimum reader/writer versions and feature names (``protocol``)."""

    min_reader_version: int
    min_writer_version: int
    reader_features: tuple[str, ...] | None = field(default=None, kw_only=True)
    writer_features: tuple[str, ...] | None = field(default=None, kw_only=True)
    extra: Mapping[str, Any] = _extra()
    key_order: tuple[str, ...] | None = _order()


@dataclass(frozen=True, slots=True)
class MetadataAction:
    """Table identity, schema, partitioning and configuration (``metaData``)."""

    id: str
    format: FileFormat
    schema_string: str
    partition_columns: tuple[str, ...]
    configuration: Mapping[str, str]
    name: str | None = field(default=None, kw_only=True)
    description: str | None = field(default=None, kw_only=True)
    created_time: int | None = field(default=None, kw_only=True)
    extra: Mapping[str, Any] = _extra()
    key_order: tuple[str, ...] | None = _order()


@dataclass(frozen=True, slots=True)
class AddAction:
    """A split added to the table (``add``).

    ``time_range_start``/``time_range_end`` hold what the writer wrote: an
    ISO instant string (Scala writer) or epoch number (native writer).
    """

    path: str
    partition_values: Mapping[str, str | None]
    size: int
    modification_time: int
    data_change: bool
    stats: str | None = field(default=None, kw_only=True)
    tags: Mapping[str, str] | None = field(default=None, kw_only=True)
    min_values: Mapping[str, str] | None = field(default=None, kw_only=True)
    max_values: Mapping[str, str] | None = field(default=None, kw_only=True)
    num_records: int | None = field(default=None, kw_only=True)
    footer_start_offset: int | None = field(default=None, kw_only=True)
    footer_end_offset: int | None = field(default=None, kw_only=True)
    hotcache_start_offset: int | None = field(default=None, kw_only=True)
    hotcache_length: int | None = field(default=None, kw_only=True)
    has_footer_offsets: bool = field(default=False, kw_only=True)
    time_range_start: str | int | None = field(default=None, kw_only=True)
    time_range_end: str | int | None = field(default=None, kw_only=True)
    split_tags: tuple[str, ...] | None = field(default=None, kw_only=True)
    delete_opstamp: int | None = field(default=None, kw_only=True)
    num_merge_ops: int | None = field(default=None, kw_only=True)
    doc_mapping_json: str | None = field(default=None, kw_only=True)
    doc_mapping_ref: str | None = field(default=None, kw_only=True)
    uncompressed_size_bytes: int | None = field(default=None, kw_only=True)
    companion_source_files: tuple[str, ...] | None = field(default=None, kw_only=True)
    companion_delta_version: int | None = field(default=None, kw_only=True)
    companion_fast_field_mode: str | None = field(default=None, kw_only=True)
    extra: Mapping[str, Any] = _extra()
    key_order: tuple[str, ...] | None = _order()

    def to_file_entry(self, *, added_at_version: int, added_at_timestamp: int) -> FileEntry:
        """Return the state record of this split, added by the given commit.

        Partition values that are ``null`` are left out (a state map holds
        strings only); a missing key reads back as null.
        """
        return FileEntry(
            self.path,
            {k: v for k, v in self.partition_values.items() if v is not None},
            self.size,
            self.modification_time,
            self.data_change,
            added_at_version,
            added_at_timestamp,
            stats=self.stats,
            min_values=self.min_values,
            max_values=self.max_values,
            num_records=self.num_records,
            footer_start_offset=self.footer_start_offset,
            footer_end_offset=self.footer_end_offset,
            has_footer_offsets=self.has_footer_offsets,
            delete_opstamp=self.delete_opstamp,
            split_tags=self.split_tags,
            num_merge_ops=self.num_merge_ops,
            doc_mapping_json=self.doc_mapping_json,
            doc_mapping_ref=self.doc_mapping_ref,
            uncompressed_size_bytes=self.uncompressed_size_bytes,
            time_range_start=_epoch_or_none(self.time_range_start),
            time_range_end=_epoch_or_none(self.time_range_end),
            companion_source_files=self.companion_source_files,
            companion_delta_version=self.companion_delta_version,
            companion_fast_field_mode=self.companion_fast_field_mode,
        )

    @classmethod
    def from_file_entry(cls, entry: FileEntry) -> AddAction:
        """Return the ``add`` action that re-adds ``entry`` (version fields dropped)."""
        return cls(
            entry.path,
            dict(entry.partition_values),
            entry.size,
            entry.modification_time,
            entry.data_change,
            stats=entry.stats,
            min_values=entry.min_values,
            max_values=entry.max_values,
            num_records=entry.num_records,
            footer_start_offset=entry.footer_start_offset,
            footer_end_offset=entry.footer_end_offset,
            has_footer_offsets=entry.has_footer_offsets,
            time_range_start=entry.time_range_start,
            time_range_end=entry.time_range_end,
            split_tags=entry.split_tags,
            delete_opstamp=entry.delete_opstamp,
            num_merge_ops=entry.num_merge_ops,
            doc_mapping_json=entry.doc_mapping_json,
            doc_mapping_ref=entry.doc_mapping_ref,
            uncompressed_size_bytes=entry.uncompressed_size_bytes,
            companion_source_files=entry.companion_source_files,
            companion_delta_version=entry.companion_delta_version,
            companion_fast_field_mode=entry.companion_fast_field_mode,
        )


def _epoch_or_none(value: str | int | None) -> int | None:
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.lstrip("-").isdigit():
        return int(value)
    return None


@dataclass(frozen=True, slots=True)
class RemoveAction:
    """A split logically removed from the table (``remove``)."""

    path: str
    data_change: bool
    deletion_timestamp: int | None = field(default=None, kw_only=True)
    extended_file_metadata: bool | None = field(default=None, kw_only=True)
    partition_values: Mapping[str, str | None] | None = field(default=None, kw_only=True)
    size: int | None = field(default=None, kw_only=True)
    tags: Mapping[str, str] | None = field(default=None, kw_only=True)
    extra: Mapping[str, Any] = _extra()
    key_order: tuple[str, ...] | None = _order()


@dataclass(frozen=True, slots=True)
class SkipAction:
    """A split an operation (usually merge) skipped, with a cooldown (``mergeskip``)."""

    path: str
    skip_timestamp: int
    reason: str
    operation: str
    partition_values: Mapping[str, str | None] | None = field(default=None, kw_only=True)
    size: int | None = field(default=None, kw_only=True)
    retry_after: int | None = field(default=None, kw_only=True)
    skip_count: int = field(default=1, kw_only=True)
    extra: Mapping[str, Any] = _extra()
    key_order: tuple[str, ...] | None = _order()


Action = ProtocolAction | MetadataAction | AddAction | RemoveAction | SkipAction
Record = Action | FileFormat


@dataclass(frozen=True, slots=True)
class _Field:
    wire: str
    attr: str
    kind: str  # a jsonwire kind; "?" prefix: nullable; "format": nested FileFormat
    required: bool = False


def _f(wire: str, attr: str, kind: str, required: bool = False) -> _Field:
    return _Field(wire, attr, kind, required)


# Field order is the reference's declaration order: the layout of new records.
_SPECS: Final[dict[type[Any], tuple[_Field, ...]]] = {
    FileFormat: (_f("provider", "provider", "str", True), _f("options", "options", "str_map")),
    ProtocolAction: (
        _f("minReaderVersion", "min_reader_version", "int", True),
        _f("minWriterVersion", "min_writer_version", "int", True),
        _f("readerFeatures", "reader_features", "?str_list"),
        _f("writerFeatures", "writer_features", "?str_list"),
    ),
    MetadataAction: (
        _f("id", "id", "str", True),
        _f("name", "name", "?str"),
        _f("description", "description", "?str"),
        _f("format", "format", "format", True),
        _f("schemaString", "schema_string", "str", True),
        _f("partitionColumns", "partition_columns", "str_list", True),
        _f("configuration", "configuration", "str_map", True),
        _f("createdTime", "created_time", "?int"),
    ),
    AddAction: (
        _f("path", "path", "str", True),
        _f("partitionValues", "partition_values", "nstr_map", True),
        _f("size", "size", "int", True),
        _f("modificationTime", "modification_time", "int", True),
        _f("dataChange", "data_change", "bool", True),
        _f("stats", "stats", "?str"),
        _f("tags", "tags", "?str_map"),
        _f("minValues", "min_values", "?str_map"),
        _f("maxValues", "max_values", "?str_map"),
        _f("numRecords", "num_records", "?int"),
        _f("footerStartOffset", "footer_start_offset", "?int"),
        _f("footerEndOffset", "footer_end_offset", "?int"),
        _f("hotcacheStartOffset", "hotcache_start_offset", "?int"),
        _f("hotcacheLength", "hotcache_length", "?int"),
        _f("hasFooterOffsets", "has_footer_offsets", "bool"),
        _f("timeRangeStart", "time_range_start", "?str_or_int"),
        _f("timeRangeEnd", "time_range_end", "?str_or_int"),
        _f("splitTags", "split_tags", "?str_list"),
        _f("deleteOpstamp", "delete_opstamp", "?int"),
        _f("numMergeOps", "num_merge_ops", "?int"),
        _f("docMappingJson", "doc_mapping_json", "?str"),
        _f("docMappingRef", "doc_mapping_ref", "?str"),
        _f("uncompressedSizeBytes", "uncompressed_size_bytes", "?int"),
        _f("companionSourceFiles", "companion_source_files", "?str_list"),
        _f("companionDeltaVersion", "companion_delta_version", "?int"),
        _f("companionFastFieldMode", "companion_fast_field_mode", "?str"),
    ),
    RemoveAction: (
        _f("path", "path", "str", True),
        _f("deletionTimestamp", "deletion_timestamp", "?int"),
        _f("dataChange", "data_change", "bool", True),
        _f("extendedFileMetadata", "extended_file_metadata", "?bool"),
        _f("partitionValues", "partition_values", "?nstr_map"),
        _f("size", "size", "?int"),
        _f("tags", "tags", "?str_map"),
    ),
    SkipAction: (
        _f("path", "path", "str", True),
        _f("skipTimestamp", "skip_timestamp", "int", True),
        _f("reason", "reason", "str", True),
        _f("operation", "operation", "str", True),
        _f("partitionValues", "partition_values", "?nstr_map"),
        _f("size", "size", "?int"),
        _f("retryAfter", "retry_after", "?int"),
        _f("skipCount", "skip_count", "int"),
    ),
}
_BY_WIRE: Final = {cls: {f.wire: f for f in fields} for cls, fields in _SPECS.items()}


def register_record(cls: type[Any], fields: tuple[tuple[str, str, str, bool], ...]) -> None:
    """Make ``cls`` (a frozen dataclass with ``extra``/``key_order``) codable.

    Each field is ``(wire name, attribute, kind, required)``, in the order a
    new record is written.
    """
    _SPECS[cls] = tuple(_Field(*f) for f in fields)
    _BY_WIRE[cls] = {f.wire: f for f in _SPECS[cls]}


ACTION_KEYS: Final[dict[str, type[Any]]] = {
    "protocol": ProtocolAction,
    "metaData": MetadataAction,
    "add": AddAction,
    "remove": RemoveAction,
    "mergeskip": SkipAction,
}
_KEY_OF: Final = {cls: key for key, cls in ACTION_KEYS.items()}


def decode_record(cls: type[Any], obj: JsonObject, *, path: str, where: str) -> Any:
    """Decode ``obj`` into a record of ``cls`` (an action or :class:`FileFormat`)."""
    known = _BY_WIRE[cls]
    values: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, raw in obj.items():
        spec = known.get(key)
        if spec is None:
            extra[key] = raw
            continue
        values[spec.attr] = _decode_value(spec, raw, path=path, where=f"{where}.{key}")
    for spec in _SPECS[cls]:
        if spec.required and spec.wire not in obj:
            raise _missing(path, where, spec.wire)
    return cls(**values, extra=extra, key_order=tuple(obj))


def _missing(path: str, where: str, wire: str) -> CorruptFileError:
    return MissingFieldError(path, f"{where} lacks required field {wire!r}")


def _decode_value(spec: _Field, raw: Any, *, path: str, where: str) -> Any:
    if spec.kind == "format":
        if not isinstance(raw, dict):
            raise CorruptFileError(path, f"{where} should be an object, got {raw!r}")
        return decode_record(FileFormat, raw, path=path, where=where)
    if spec.kind.lstrip("?") == "nstr_map":
        return _nullable_str_map(raw, nullable=spec.kind.startswith("?"), path=path, where=where)
    if spec.kind == "?str_or_int" and isinstance(raw, str):
        return raw
    if spec.kind == "?str_or_int":
        return check(raw, "?int", path=path, where=where)
    if not spec.required and not spec.kind.startswith("?") and raw is None:
        raise CorruptFileError(path, f"{where} is null")
    return check(raw, spec.kind, path=path, where=where)


def _nullable_str_map(raw: Any, *, nullable: bool, path: str, where: str) -> Any:
    if raw is None and nullable:
        return None
    if isinstance(raw, dict) and all(v is None or isinstance(v, str) for v in raw.values()):
        problem = lone_surrogate_entry(raw)
        if problem is not None:
            raise CorruptFileError(path, f"{where}: {problem}")
        return dict(raw)
    raise CorruptFileError(path, f"{where} should be a map of strings, got {raw!r}"[:300])


def lone_surrogate_entry(values: Mapping[str, str | None]) -> str | None:
    """What names a lone surrogate (not UTF-8: a JSON ``\\ud800`` escape) in a partition
    map, or None: no store key, Avro state or UTF-8 log file can hold one."""
    for name, value in values.items():
        for text in (name, value):
            if text is None or text.isascii():
                continue
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                return f"partition value {name!r}: {value!r} holds a lone surrogate (not UTF-8)"
    return None


def encode_record(record: Any) -> JsonObject:
    """Return the JSON object of ``record`` (an action or :class:`FileFormat`)."""
    specs = _BY_WIRE[type(record)]
    order = record.key_order or tuple(f.wire for f in _SPECS[type(record)])
    out: JsonObject = {}
    for key in order:
        if key in specs:
            out[key] = _encode_value(getattr(record, specs[key].attr))
        elif key in record.extra:
            out[key] = record.extra[key]
    defaults = _defaults(type(record))
    for spec in _SPECS[type(record)]:  # fields set after decoding, absent from key_order
        value = getattr(record, spec.attr)
        if spec.wire not in out and value is not None and value != defaults.get(spec.attr):
            out[spec.wire] = _encode_value(value)
    for key, value in record.extra.items():
        out.setdefault(key, value)
    return out


_DEFAULTS: dict[type[Any], dict[str, Any]] = {}


def _defaults(cls: type[Any]) -> dict[str, Any]:
    found = _DEFAULTS.get(cls)
    if found is None:
        fields = dataclasses.fields(cls)
        found = {f.name: f.default for f in fields if f.default is not dataclasses.MISSING}
        _DEFAULTS[cls] = found
    return found


def _encode_value(value: Any) -> Any:
    if isinstance(value, FileFormat):
        return encode_record(value)
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, Mapping):
        return dict(value)
    return value


def encode_action_object(action: Action) -> JsonObject:
    """Return the one-key wrapper object of ``action`` (``{"add": {...}}``)."""
    return {_KEY_OF[type(action)]: encode_record(action)}


def decode_action_object(obj: JsonObject, *, path: str, line: int | None = None) -> Action:
    """Decode a one-key wrapper object into an action.

    Raises:
        UnknownActionError: no known action key.
        MissingFieldError: a required field is absent.
        UnsafePathError: an add/remove path escapes the table root.
        CorruptFileError: a field has the wrong type.
    """
    where = f"line {line}" if line is not None else "action"
    for key, cls in ACTION_KEYS.items():
        if key in obj:
            body = obj[key]
            if not isinstance(body, dict):
                raise CorruptFileError(path, f"{where}: {key!r} is not an object")
            action: Action = decode_record(cls, body, path=path, where=f"{where} {key}")
            if isinstance(action, AddAction | RemoveAction | SkipAction):
                check_relative_path(action.path, file=path)
            return action
    raise UnknownActionError(path, f"{where}: unknown action type {sorted(obj)!r}")


def action_to_json(action: Action) -> str:
    """Serialize ``action`` as one version-file line (without the newline)."""
    return dumps(encode_action_object(action))


def action_from_json(line: str, *, path: str, line_number: int | None = None) -> Action:
    """Parse one version-file line into an action.

    Args:
        line: the JSON text of the line.
        path: the file the line came from, for error messages.
        line_number: its 1-based line number, for error messages.
    """
    where = f"line {line_number}" if line_number is not None else "action line"
    obj = loads_object(line, path=path, what=f"JSON on {where}")
    return decode_action_object(obj, path=path, line=line_number)
