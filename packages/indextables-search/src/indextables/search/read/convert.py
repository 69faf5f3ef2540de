"""Value conversion between Arrow and Tantivy documents, both ways.

Rows go into Tantivy one typed ``Document.add_*`` call per value (column-wise converted):
dates clamped into Tantivy's span, nested values in their searchable JSON
form (:mod:`indextables.search.read.jsoncodec`), each with the row key of its row
in the split's Arrow copy. Rows come back from stored documents (or numeric
fast fields) and are rebuilt as Arrow arrays exactly typed to the table's
Arrow schema (:mod:`indextables.search.schema.schemajson`; Spark refuses batches of other types);
values that stored documents cannot hold exactly come from the Arrow copy
(:mod:`indextables.search.read.rowcopy`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pyarrow as pa
import tantivy

from indextables.search.read.jsoncodec import from_json, to_json_field
from indextables.search.schema import columntypes as ct
from indextables.search.schema.mapping import ROW_KEY_FIELD, FieldKind, FieldSpec

# Tantivy dates are i64 nanoseconds: the span it can index, at microsecond precision.
TANTIVY_MIN_MICROS = ct.LONG_MIN // 1000 + 1
TANTIVY_MAX_MICROS = ct.LONG_MAX // 1000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
TANTIVY_MIN_DATE = _EPOCH + timedelta(microseconds=TANTIVY_MIN_MICROS)
TANTIVY_MAX_DATE = _EPOCH + timedelta(microseconds=TANTIVY_MAX_MICROS)


def clamp_micros(micros: int) -> int:
    """Epoch microseconds clamped into the span a Tantivy date field can hold.

    Dates and timestamps outside 1677-09-21 .. 2262-04-11 are indexed as the
    nearest end of that span (their exact value stays in the split's Arrow
    copy). Clamping keeps the order, so a range over in-span bounds matches
    every row it should; only a bound at an end of the span also matches the
    rows beyond it.
    """
    return min(max(micros, TANTIVY_MIN_MICROS), TANTIVY_MAX_MICROS)


_DAY_MICROS = 86_400_000_000


def clamped_instants(column: pa.Array) -> pa.Array:
    """A ``date32`` or timestamp column as UTC microsecond timestamps clamped into
    Tantivy's span (:func:`clamp_micros`, column-wise; nulls stay null).

    A date is its midnight and a naive timestamp's wall clock is taken as UTC. Days
    are clamped before they become microseconds, so no count of days overflows.
    """
    import pyarrow.compute as pc

    if pa.types.is_date32(column.type):
        days = column.cast(pa.int32()).cast(pa.int64())
        low, high = TANTIVY_MIN_MICROS // _DAY_MICROS, TANTIVY_MAX_MICROS // _DAY_MICROS + 1
        days = pc.max_element_wise(days, low, skip_nulls=False)
        days = pc.min_element_wise(days, high, skip_nulls=False)
        micros = pc.multiply_checked(days, _DAY_MICROS)
    else:
        micros = column.cast(pa.timestamp("us", tz=column.type.tz)).cast(pa.int64())
    # skip_nulls=False: a null stays null (skipping it would give the bound).
    micros = pc.max_element_wise(micros, TANTIVY_MIN_MICROS, skip_nulls=False)
    micros = pc.min_element_wise(micros, TANTIVY_MAX_MICROS, skip_nulls=False)
    return micros.cast(pa.timestamp("us", tz="UTC"))


def is_clamped(value: datetime) -> bool:
    """True when a stored date may stand for a value outside Tantivy's span."""
    return value <= TANTIVY_MIN_DATE or value >= TANTIVY_MAX_DATE


def _micros_to_date(micros: list[int | None]) -> list[datetime | None]:
    return [None if m is None else _EPOCH + timedelta(microseconds=clamp_micros(m)) for m in micros]


def _column_values(column: pa.Array, spec: FieldSpec) -> list[Any]:
    """Python values ready for Tantivy, converted column-wise where Arrow can help."""
    kind = spec.kind
    if kind is FieldKind.DATE and pa.types.is_timestamp(column.type):
        # to_pylist() on zoned timestamps costs ~40 us a value; integer micros do not.
        micros = column.cast(pa.timestamp("us", tz=column.type.tz)).cast(pa.int64())
        return _micros_to_date(micros.to_pylist())
    if kind is FieldKind.DATE and pa.types.is_date32(column.type):
        days = column.cast(pa.int32()).to_pylist()
        return _micros_to_date([None if d is None else d * 86_400_000_000 for d in days])
    values: list[Any] = column.to_pylist()
    if kind is FieldKind.JSON:
        return [_json_value(column.type, v, spec.name) for v in values]
    return values


def _json_value(data_type: pa.DataType, value: Any, column: str) -> Any:
    if value is None:
        return None
    return to_json_field(data_type, value, column=column)


def row_key(batch_number: int, row: int) -> int:
    """The row key of row ``row`` of record batch ``batch_number`` of a split's Arrow copy."""
    return (batch_number << 32) | row


# The per-kind ``Document`` method that adds one value of a scalar field. Calling
# these per value is ~2x faster than ``Document.from_dict`` with a dict per row
# (benchmarks/write.py) and converts the same way: tantivy-py's schema-typed
# conversion and these methods both take str -> Str, int -> I64, float -> F64,
# bool -> Bool and datetime -> Date. The other kinds (JSON, IP, bytes) go through
# ``Document.extend`` with the schema, as before.
_ADDERS: dict[FieldKind, Callable[[tantivy.Document, str, Any], None]] = {
    FieldKind.I64: tantivy.Document.add_integer,
    FieldKind.F64: tantivy.Document.add_float,
    FieldKind.BOOL: tantivy.Document.add_boolean,
    FieldKind.DATE: tantivy.Document.add_date,
    FieldKind.STRING: tantivy.Document.add_text,
    FieldKind.TEXT: tantivy.Document.add_text,
}


# One column's share of a row: its adder, its field name, its Python values.
_Step = tuple[Callable[[tantivy.Document, str, Any], None], str, Sequence[Any]]


def _schema_adder(schema: tantivy.Schema) -> Callable[[tantivy.Document, str, Any], None]:
    extend = tantivy.Document.extend

    def add(doc: tantivy.Document, name: str, value: Any) -> None:
        extend(doc, {name: value}, schema)

    return add


def documents(
    batch: pa.RecordBatch,
    specs: Sequence[FieldSpec],
    schema: tantivy.Schema,
    *,
    batch_number: int | None = None,
    first_row: int = 0,
    unsigned: Sequence[tuple[str, Sequence[int]]] = (),
) -> Iterator[tantivy.Document]:
    """Tantivy documents for the rows of ``batch`` (null values are left out).

    With ``batch_number`` (the batch's position in the split's Arrow copy),
    each document also gets its row key, which leads a read from a search
    hit to the row's exact values; its rows are numbered from ``first_row``
    (a companion split keys rows as ``(file number, row in file)``).
    ``unsigned`` (field name, one u64 per row) adds further fields to every
    document (a companion split's hidden coordinates), in the same pass.

    Each column is converted to Python values once (column-wise, see
    ``_column_values``); each document is then built whole, one typed add
    call per non-null value, and handed out before the next one is started:
    building row by row keeps a document in cache until ``add_document``
    takes it, and was 1.5x cheaper than adding column by column to a list of
    documents (``map`` per column: 0.75 vs 0.50 CPU-s for 400,000 log rows,
    benchmarks/results/write-2026-11-27T1535Z.json). Every document gets
    its fields in the same order: the columns without nulls, ``unsigned``,
    the columns with nulls, the row key.
    """
    fallback = _schema_adder(schema)
    dense: list[_Step] = []
    sparse: list[_Step] = []
    for spec in specs:
        column = batch.column(spec.name)
        if column.null_count == len(column):
            continue  # nothing to add
        step = (_ADDERS.get(spec.kind, fallback), spec.name, _column_values(column, spec))
        (sparse if column.null_count else dense).append(step)
    add_key = tantivy.Document.add_unsigned
    dense.extend((add_key, name, values) for name, values in unsigned)
    rows = batch.num_rows
    tail: list[_Step] = []
    if batch_number is not None:
        first_key = row_key(batch_number, first_row)
        keys = range(first_key, first_key + rows)
        (tail if sparse else dense).append((add_key, ROW_KEY_FIELD, keys))
    new_document = tantivy.Document
    if not sparse:  # the common case: no test per value
        for row in range(rows):
            doc = new_document()
            for add, name, values in dense:
                add(doc, name, values[row])
            yield doc
        return
    for row in range(rows):
        doc = new_document()
        for add, name, values in dense:
            add(doc, name, values[row])
        for add, name, values in sparse:
            value = values[row]
            if value is not None:
                add(doc, name, value)
        for add, name, values in tail:
            add(doc, name, values[row])
        yield doc


def column_from_docs(
    docs: Sequence[tantivy.Document], name: str, arrow_type: pa.DataType
) -> pa.Array:
    """One Arrow column rebuilt from stored documents (``get_first``: ~40% cheaper than to_dict)."""
    if _pass_through(arrow_type):
        # Strings, numbers and timestamps come out of Tantivy as Arrow takes them.
        return pa.array([doc.get_first(name) for doc in docs], type=arrow_type)
    values = [from_stored(arrow_type, doc.get_first(name)) for doc in docs]
    return pa.array(values, type=arrow_type)


def has_clamped_dates(docs: Sequence[tantivy.Document], name: str) -> bool:
    """True when a stored date of field ``name`` may stand for a value outside Tantivy's span."""
    for doc in docs:
        value = doc.get_first(name)
        if isinstance(value, datetime) and is_clamped(value):
            return True
    return False


def _pass_through(t: pa.DataType) -> bool:
    """Types whose stored values Arrow takes as they are (strings, numbers, instants)."""
    return (
        ct.is_string(t)
        or ct.is_boolean(t)
        or ct.is_integral(t)
        or ct.is_floating(t)
        or ct.is_timestamp(t)
    )


def from_stored(data_type: pa.DataType, value: Any) -> Any:
    """A column value from a stored document's value (a Tantivy date, JSON object, address...)."""
    if value is None:
        return None
    if isinstance(value, datetime) and not ct.is_string(data_type):
        if ct.is_date(data_type):
            return value.astimezone(UTC).date()
        if ct.is_timestamp_ntz(data_type):
            return value.astimezone(UTC).replace(tzinfo=None)
        return value
    if ct.is_string(data_type) and isinstance(value, str) and value.startswith("::ffff:"):
        return value[len("::ffff:") :]  # an IPv4 address stored in an ip field
    return from_json(data_type, value)
