"""Seeded random table plans: schema, IndexTables write options, and a sequence of writes.

A :class:`TablePlan` is everything needed to build the same table twice, once
as IndexTables and once as Parquet: the schema, the ``partitionBy`` columns,
the IndexTables field options, and the writes (appends and one overwrite) with
their rows.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from difftest import values

TYPEMAP = "spark.indextables.indexing.typemap."
TOKENIZER = "spark.indextables.indexing.tokenizer."
FASTFIELDS = "spark.indextables.indexing.fastfields"
STOREONLY = "spark.indextables.indexing.storeonlyfields"


def _struct(*fields: tuple[str, DataType]) -> StructType:
    return StructType([StructField(n, t, True) for n, t in fields])


# Data columns: name -> (type, chance of being in a table).
SCALARS: dict[str, DataType] = {
    "c_byte": ByteType(),
    "c_short": ShortType(),
    "c_int": IntegerType(),
    "c_long": LongType(),
    "c_float": FloatType(),
    "c_double": DoubleType(),
    "c_bool": BooleanType(),
    "c_str": StringType(),
    "c_str2": StringType(),
    "c_text": StringType(),
    "c_date": DateType(),
    "c_ts": TimestampType(),
    "c_ntz": TimestampNTZType(),
}
NESTED: dict[str, DataType] = {
    "c_arr": ArrayType(StringType()),
    "c_arr_long": ArrayType(LongType()),
    "c_arr_double": ArrayType(DoubleType()),
    "c_map": MapType(StringType(), LongType()),
    "c_struct": _struct(("a", IntegerType()), ("s", StringType()), ("d", DoubleType())),
    "c_deep": _struct(
        ("arr", ArrayType(_struct(("x", LongType()), ("y", StringType())))),
        ("m", MapType(StringType(), ArrayType(IntegerType()))),
    ),
    "c_struct_time": _struct(("d", DateType()), ("t", TimestampType())),
    "c_map_int": MapType(IntegerType(), StringType()),
}
# Types the docs say are refused (decimal, binary): a write may refuse them at planning,
# naming the column; otherwise they must read back exactly.
REFUSABLE: dict[str, DataType] = {
    "c_bin": BinaryType(),
    "c_dec": DecimalType(10, 2),
    "c_arr_bin": ArrayType(BinaryType()),
    "c_struct_dec": _struct(("dec", DecimalType(5, 1))),
}
PARTITION_TYPES: dict[str, DataType] = {
    "p_str": StringType(),
    "p_int": IntegerType(),
    "p_long": LongType(),
    "p_byte": ByteType(),
    "p_short": ShortType(),
    "p_bool": BooleanType(),
    "p_date": DateType(),
    "p_ts": TimestampType(),
    "p_ntz": TimestampNTZType(),
    "p_double": DoubleType(),
    "p_float": FloatType(),
}
TOKENIZERS = ("default", "raw", "whitespace", "en_stem")


def may_be_refused(data_type: DataType) -> bool:
    """True for types the docs list as refused (decimal, binary), anywhere inside."""
    if isinstance(data_type, (BinaryType, DecimalType)):
        return True
    if isinstance(data_type, ArrayType):
        return may_be_refused(data_type.elementType)
    if isinstance(data_type, MapType):
        return may_be_refused(data_type.keyType) or may_be_refused(data_type.valueType)
    if isinstance(data_type, StructType):
        return any(may_be_refused(f.dataType) for f in data_type.fields)
    return False


@dataclass(frozen=True)
class Features:
    """Hostile data a table may hold, chosen per seed.

    A value that breaks every write or every read of a table (a date outside
    Tantivy's range, a null partition value) would otherwise hide every other
    difference in every seed; each table holds it with even odds instead, so
    some seeds test it and the others test everything else.
    """

    extreme_temporal: bool
    null_partitions: bool

    @classmethod
    def draw(cls, rng: random.Random) -> Features:
        return cls(extreme_temporal=rng.random() < 0.5, null_partitions=rng.random() < 0.5)


@dataclass(frozen=True)
class Write:
    """One write of the plan: ``append`` or ``overwrite`` with its rows (tuples in schema order)."""

    mode: str
    rows: tuple[tuple[Any, ...], ...]


@dataclass(frozen=True)
class TablePlan:
    """A table built the same way as IndexTables and as Parquet."""

    seed: int
    schema: StructType
    partition_by: tuple[str, ...]
    options: Mapping[str, str]
    writes: tuple[Write, ...]
    features: Features
    refused: tuple[str, ...] = field(default=())

    @property
    def columns(self) -> list[str]:
        return [f.name for f in self.schema.fields]

    def type_of(self, column: str) -> DataType:
        return self.schema[column].dataType

    def write_options(self) -> dict[str, str]:
        """The IndexTables write options (``partitionBy`` included)."""
        options = dict(self.options)
        if self.partition_by:
            options["partitionBy"] = ",".join(self.partition_by)
        return options

    def live_writes(self) -> tuple[Write, ...]:
        """The writes from the last overwrite on: the rows the table holds at the end."""
        last = max((i for i, w in enumerate(self.writes) if w.mode == "overwrite"), default=0)
        return self.writes[last:]

    def live_rows(self) -> list[tuple[Any, ...]]:
        return [row for w in self.live_writes() for row in w.rows]

    def without_columns(self, dropped: Sequence[str]) -> TablePlan:
        """The same plan without some columns (their options dropped too)."""
        gone = set(dropped)
        keep = [i for i, f in enumerate(self.schema.fields) if f.name not in gone]
        schema = StructType([self.schema.fields[i] for i in keep])
        writes = tuple(
            Write(w.mode, tuple(tuple(r[i] for i in keep) for r in w.rows)) for w in self.writes
        )
        return replace(
            self,
            schema=schema,
            writes=writes,
            partition_by=tuple(c for c in self.partition_by if c not in gone),
            options=_options_without(self.options, gone),
        )


def _options_without(options: Mapping[str, str], gone: set[str]) -> dict[str, str]:
    kept: dict[str, str] = {}
    for key, value in options.items():
        if any(key.lower().endswith("." + c) for c in gone):
            continue
        if key in (FASTFIELDS, STOREONLY):
            names = [c for c in value.split(",") if c and c not in gone]
            if not names:
                continue
            value = ",".join(names)
        kept[key] = value
    return kept


def _choose_columns(rng: random.Random) -> list[StructField]:
    chosen = [StructField("id", LongType(), False)]
    for name, data_type in SCALARS.items():
        if rng.random() < 0.75:
            chosen.append(StructField(name, data_type, True))
    for name, data_type in NESTED.items():
        if rng.random() < 0.4:
            chosen.append(StructField(name, data_type, True))
    for name, data_type in REFUSABLE.items():
        if rng.random() < 0.15:
            chosen.append(StructField(name, data_type, True))
    return chosen


def _options(rng: random.Random, names: set[str]) -> dict[str, str]:
    options: dict[str, str] = {}
    if "c_text" in names:
        options[TYPEMAP + "c_text"] = "text"
        options[TOKENIZER + "c_text"] = rng.choice(TOKENIZERS)
        if rng.random() < 0.4:
            options[FASTFIELDS] = "c_text"
    if "c_str" in names and rng.random() < 0.5:
        options[TYPEMAP + "c_str"] = "string"
    store_only = [c for c in ("c_str2", "c_int") if c in names and rng.random() < 0.4]
    if store_only:
        options[STOREONLY] = ",".join(store_only)
    return options


def random_plan(seed: int, *, rows_per_write: int, writes: int = 4) -> TablePlan:
    """A random table: columns of every kind, partition columns, appends and one overwrite."""
    rng = random.Random(seed)
    features = Features.draw(rng)
    fields = _choose_columns(rng)
    partitions = rng.sample(sorted(PARTITION_TYPES), rng.choice([0, 1, 1, 2]))
    fields += [StructField(p, PARTITION_TYPES[p], True) for p in partitions]
    schema = StructType(fields)
    pools = {
        p: values.partition_pool(PARTITION_TYPES[p], null=features.null_partitions)
        for p in partitions
    }
    null_rate = rng.choice([0.05, 0.15, 0.3])
    overwrite_at = rng.randint(1, max(1, writes - 2))
    plan_writes = []
    next_id = 0
    for index in range(writes):
        rows = []
        for _ in range(rng.randint(max(1, rows_per_write // 2), rows_per_write)):
            row: list[Any] = []
            for f in schema.fields:
                if f.name == "id":
                    row.append(next_id)
                elif f.name in pools:
                    row.append(rng.choice(pools[f.name]))
                else:
                    value = values.value_for(
                        rng, f.dataType, null_rate, extreme=features.extreme_temporal
                    )
                    row.append(value)
            next_id += 1
            rows.append(tuple(row))
        mode = "overwrite" if index == overwrite_at else "append"
        plan_writes.append(Write(mode, tuple(rows)))
    options = _options(rng, {f.name for f in fields})
    schema, plan_writes, options = _with_ip_column(seed, schema, plan_writes, options, null_rate)
    return TablePlan(seed, schema, tuple(partitions), options, tuple(plan_writes), features)


# IP addresses as a string column holds them: several spellings of one address, so
# `=` on the string (Spark) and on the parsed address (Tantivy) differ.
IP_VALUES = (
    "1.2.3.4",
    "::ffff:1.2.3.4",
    "::FFFF:1.2.3.4",
    "10.0.0.1",
    "10.0.0.10",
    "9.255.255.255",
    "::1",
    "0:0:0:0:0:0:0:1",
    "2001:db8::1",
    "2001:DB8::1",
    "255.255.255.255",
    "0.0.0.0",
)


def _with_ip_column(
    seed: int,
    schema: StructType,
    writes: list[Write],
    options: dict[str, str],
    null_rate: float,
) -> tuple[StructType, list[Write], dict[str, str]]:
    """Half the tables get ``c_ip`` (typemap ``ip``), drawn from their own generator.

    A separate generator keeps every other draw of a seed as it was before
    this column existed (the bounded seeds were chosen for those draws).
    """
    rng = random.Random(seed * 104_729 + 17)
    if rng.random() < 0.5:
        return schema, writes, options
    fields = [*schema.fields, StructField("c_ip", StringType(), True)]
    widened = [
        Write(
            w.mode,
            tuple(
                (*row, None if rng.random() < null_rate else rng.choice(IP_VALUES))
                for row in w.rows
            ),
        )
        for w in writes
    ]
    return StructType(fields), widened, {**options, TYPEMAP + "c_ip": "ip"}
