"""Decode stored documents in bulk into an Arrow record batch.

Hits are grouped per block so each block is decompressed once; rows come out
in the order of ``doc_ids`` (duplicates allowed).
"""

from __future__ import annotations

import ipaddress
import json
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

import pyarrow as pa

from indextables.search.read.docstore import _kernels_py as codes
from indextables.search.read.docstore.errors import DocStoreError
from indextables.search.read.docstore.impl import kernels
from indextables.search.read.docstore.store import StoreIndex

__all__ = ["FieldKind", "FieldSpec", "decode_docs"]

FieldKind = Literal["text", "u64", "i64", "f64", "bool", "date", "bytes", "ip", "json"]

_ARROW: Final[dict[str, pa.DataType]] = {
    "text": pa.string(),
    "u64": pa.uint64(),
    "i64": pa.int64(),
    "f64": pa.float64(),
    "bool": pa.bool_(),
    "date": pa.timestamp("ns", tz="UTC"),
    "bytes": pa.binary(),
    "ip": pa.string(),
    "json": pa.string(),
}
_CODES: Final[dict[str, frozenset[int]]] = {
    "text": frozenset({codes.TEXT}),
    "u64": frozenset({codes.U64}),
    "i64": frozenset({codes.I64}),
    "f64": frozenset({codes.F64}),
    "bool": frozenset({codes.BOOL}),
    "date": frozenset({codes.DATE}),
    "bytes": frozenset({codes.BYTES}),
    "ip": frozenset({codes.IP}),
    "json": frozenset({codes.OBJECT}),
}


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """One output column: the stored field's name, its kind, list-valued or not."""

    name: str
    kind: FieldKind
    multi: bool = False

    def arrow_type(self) -> pa.DataType:
        base = _ARROW[self.kind]
        return pa.list_(base) if self.multi else base


def _ip_text(value: int) -> str:
    # Tantivy stores every IP as an IPv6 u128 (IPv4 as ::ffff:a.b.c.d), as tantivy-py prints it.
    addr = ipaddress.IPv6Address(value)
    mapped = addr.ipv4_mapped
    return f"::ffff:{mapped}" if mapped is not None else str(addr)


def _convert(spec: FieldSpec, value: Any) -> Any:
    if spec.kind == "ip":
        return _ip_text(value)
    if spec.kind == "json":
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return value


def _decompress(store: StoreIndex, block: int, mod: Any) -> bytes:
    raw = store.data[store.byte_starts[block] : store.byte_ends[block]]
    if store.compressor == "none":
        return raw
    if len(raw) < 4:
        raise DocStoreError(f"doc store: block {block} shorter than its size header")
    size = struct.unpack_from("<I", raw, 0)[0]
    if store.compressor == "lz4":
        return bytes(mod.lz4_decompress(raw[4:], size))
    import zstandard

    out = zstandard.ZstdDecompressor().decompress(raw[4:], max_output_size=size)
    if len(out) != size:
        raise DocStoreError(f"doc store: zstd block {block} expanded to the wrong size")
    return out


def decode_docs(
    store: StoreIndex,
    doc_ids: Sequence[int],
    fields: Mapping[int, FieldSpec],
) -> pa.RecordBatch:
    """Decode ``doc_ids`` into one column per entry of ``fields`` (field id -> spec).

    A field absent from a document is null. A single-valued spec meeting several
    values, or a stored value whose type code does not match the spec's kind,
    raises :class:`DocStoreError` naming the field.
    """
    mod = kernels()
    field_ids = list(fields)
    slots = {fid: i for i, fid in enumerate(field_ids)}
    specs = [fields[fid] for fid in field_ids]
    by_block: dict[int, list[tuple[int, int]]] = {}
    for out_row, doc in enumerate(doc_ids):
        block = store.block_of(int(doc))
        by_block.setdefault(block, []).append((out_row, int(doc) - store.doc_starts[block]))
    columns: list[list[Any]] = [[None] * len(doc_ids) for _ in specs]
    for block in sorted(by_block):
        hits = by_block[block]
        data = _decompress(store, block, mod)
        rows = mod.decode_block(data, [pos for _, pos in hits], slots, len(specs), store.version)
        for (out_row, _), row in zip(hits, rows, strict=True):
            for slot, values in enumerate(row):
                if not values:
                    continue
                spec = specs[slot]
                accepted = _CODES[spec.kind]
                converted = []
                for code, value in values:
                    if code == codes.NULL:
                        continue
                    if code not in accepted:
                        raise DocStoreError(
                            f"fields: field {field_ids[slot]} ({spec.name!r}) holds a value of "
                            f"type code {code}, not {spec.kind}"
                        )
                    converted.append(_convert(spec, value))
                if not converted:
                    continue
                if spec.multi:
                    columns[slot][out_row] = converted
                elif len(converted) > 1:
                    raise DocStoreError(
                        f"fields: field {field_ids[slot]} ({spec.name!r}) has "
                        f"{len(converted)} values; declare it multi=True"
                    )
                else:
                    columns[slot][out_row] = converted[0]
    arrays = [
        pa.array(col, type=spec.arrow_type()) for col, spec in zip(columns, specs, strict=True)
    ]
    return pa.RecordBatch.from_arrays(arrays, names=[spec.name for spec in specs])
