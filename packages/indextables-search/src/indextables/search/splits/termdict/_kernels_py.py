"""Pure-Python term-dictionary kernels: the readable reference of the compiled ``_kernels``.

Both twins expose the same functions with the same behaviour:

- ``fst_build`` / ``fst_entries``: a tantivy-fst (format 2) map from sorted keys
  to u64 values, built exactly as tantivy-fst's builder (bounded dedup
  registry included) so the bytes match tantivy's, and walked back to its
  (key, value) pairs in key order.
- ``tis_encode`` / ``tis_decode``: the FST form's bit-packed TermInfoStore.
- ``sst_encode`` / ``sst_decode``: the SSTable form's blocks (TermInfo values
  then prefix-compressed keys, zstd when it pays).

Keys travel packed: one ``bytes`` of all keys back to back plus an
``array('Q')`` of each key's end offset. Term infos travel as five parallel
``array('Q')`` (``Columns``): doc_freq, postings_start, postings_len,
positions_start, positions_len. The compiled twin then never makes a Python
object per term.
"""

from __future__ import annotations

import struct
from array import array
from collections.abc import Sequence
from typing import TypeAlias

from indextables.search.splits.termdict._kernels_common import (
    COMMON_INPUTS,
    COMMON_INPUTS_INV,
    FST_VERSION,
    REGISTRY_CELLS,
    REGISTRY_ROWS,
    SST_BLOCK_LEN,
    SST_ZSTD_MIN,
    TIS_BLOCK_LEN,
    Compress,
    Decompress,
    KernelError,
)
from indextables.search.splits.vint import decode_leb128, decode_vint, encode_leb128, encode_vint

__all__ = [
    "Columns",
    "KeyEnds",
    "pack_keys",
    "unpack_keys",
    "fst_build",
    "fst_entries",
    "fst_near",
    "sst_decode",
    "sst_encode",
    "tis_decode",
    "tis_encode",
]

Columns: TypeAlias = "tuple[array[int], array[int], array[int], array[int], array[int]]"
KeyEnds: TypeAlias = Sequence[int]

_EMPTY_ADDRESS = 0
_NONE_ADDRESS = 1
_MASK64 = (1 << 64) - 1
_FNV_OFFSET = 14_695_981_039_346_656_037
_FNV_PRIME = 1_099_511_628_211
_TRANS_INDEX_THRESHOLD = 32
_U64 = struct.Struct("<Q")
_TIS_META = struct.Struct("<QIQIQIBBB")
_VINT_MODE = 1


# --------------------------------------------------------------------------- helpers


def _pack_size(value: int) -> int:
    return max(1, (value.bit_length() + 7) // 8)


def _num_bits(value: int) -> int:
    bits = value.bit_length()
    return bits if bits <= 56 else 64


def _common_idx(byte: int) -> int:
    idx = (COMMON_INPUTS[byte] + 1) % 256
    return idx if idx <= 63 else 0


def _read_vint(data: bytes, pos: int, end: int) -> tuple[int, int]:
    """tantivy's VInt (``splits.vint``), bounded by the SSTable block's ``end``."""
    return decode_vint(data, pos, end, error=KernelError, context="SSTable block")


def _read_leb128(data: bytes, pos: int, end: int) -> tuple[int, int]:
    """The sstable crate's own varint (LEB128: 0x80 marks a CONTINUED byte)."""
    return decode_leb128(data, pos, end, error=KernelError, context="SSTable block keep/add")


def _bits_at(data: bytes, addr: int, nbits: int) -> int:
    if nbits == 0:
        return 0
    start = addr >> 3
    window = int.from_bytes(data[start : start + 9], "little")
    return (window >> (addr & 7)) & ((1 << nbits) - 1)


def unpack_keys(key_data: bytes, key_ends: KeyEnds) -> list[bytes]:
    """The keys of a packed (key_data, key_ends) pair, as a list."""
    keys = []
    start = 0
    for end in key_ends:
        if not start <= end <= len(key_data):
            raise KernelError(
                f"key end {end} out of order or past the key data ({len(key_data)} bytes)"
            )
        keys.append(key_data[start:end])
        start = end
    return keys


def pack_keys(keys: Sequence[bytes]) -> tuple[bytes, array[int]]:
    """Pack ``keys`` as (all keys back to back, each key's end offset)."""
    ends = array("Q")
    total = 0
    for key in keys:
        total += len(key)
        ends.append(total)
    return b"".join(keys), ends


def _columns(lists: tuple[list[int], ...]) -> Columns:
    df, ps, pl, qs, ql = (array("Q", values) for values in lists)
    return df, ps, pl, qs, ql


# --------------------------------------------------------------------------- fst build


class _Unfinished:
    """A node on the builder's unfinished path, with its pending last transition."""

    __slots__ = ("final", "final_out", "last_inp", "last_out", "trans")

    def __init__(self, final: bool) -> None:
        self.final = final
        self.final_out = 0
        self.trans: list[tuple[int, int, int]] = []
        self.last_inp = -1
        self.last_out = 0

    def add_output_prefix(self, prefix: int) -> None:
        if self.final:
            self.final_out += prefix
        self.trans = [(inp, out + prefix, addr) for inp, out, addr in self.trans]
        if self.last_inp >= 0:
            self.last_out += prefix

    def freeze_last(self, addr: int) -> None:
        if self.last_inp >= 0:
            self.trans.append((self.last_inp, self.last_out, addr))
            self.last_inp = -1
            self.last_out = 0


def _node_hash(final: bool, final_out: int, trans: list[tuple[int, int, int]]) -> int:
    h = ((_FNV_OFFSET ^ int(final)) * _FNV_PRIME) & _MASK64
    h = ((h ^ final_out) * _FNV_PRIME) & _MASK64
    for inp, out, addr in trans:
        h = ((h ^ inp) * _FNV_PRIME) & _MASK64
        h = ((h ^ out) * _FNV_PRIME) & _MASK64
        h = ((h ^ addr) * _FNV_PRIME) & _MASK64
    return h % REGISTRY_ROWS


def _delta(start: int, target: int) -> int:
    return 0 if target == _EMPTY_ADDRESS else start - target


def _emit_one_trans_next(out: bytearray, inp: int) -> None:
    idx = _common_idx(inp)
    if idx == 0:
        out.append(inp)
    out.append(0b11_000000 | idx)


def _emit_one_trans(out: bytearray, start: int, inp: int, value: int, target: int) -> None:
    osize = 0
    if value:
        osize = _pack_size(value)
        out += value.to_bytes(osize, "little")
    delta = _delta(start, target)
    tsize = _pack_size(delta)
    out += delta.to_bytes(tsize, "little")
    out.append((tsize << 4) | osize)
    idx = _common_idx(inp)
    if idx == 0:
        out.append(inp)
    out.append(0b10_000000 | idx)


def _emit_any_trans(
    out: bytearray, start: int, final: bool, final_out: int, trans: list[tuple[int, int, int]]
) -> None:
    ntrans = len(trans)
    tsize = 0
    osize = _pack_size(final_out)
    any_outs = final_out != 0
    for _inp, value, target in trans:
        tsize = max(tsize, _pack_size(_delta(start, target)))
        osize = max(osize, _pack_size(value))
        any_outs = any_outs or value != 0
    if any_outs:
        if final:
            out += final_out.to_bytes(osize, "little")
        for _inp, value, _target in reversed(trans):
            out += value.to_bytes(osize, "little")
    for _inp, _value, target in reversed(trans):
        out += _delta(start, target).to_bytes(tsize, "little")
    out += bytes(inp for inp, _value, _target in reversed(trans))
    if ntrans > _TRANS_INDEX_THRESHOLD:
        index = bytearray(b"\xff" * 256)
        for i, (inp, _value, _target) in enumerate(trans):
            index[inp] = i & 0xFF
        out += index
    out.append((tsize << 4) | (osize if any_outs else 0))
    state = 0b01_000000 if final else 0
    if 0 < ntrans <= 63:
        state |= ntrans
    else:
        out.append(1 if ntrans == 256 else ntrans)
    out.append(state)


class _FstBuilder:
    """tantivy-fst's ``Builder``: incremental minimal-ish acyclic construction."""

    def __init__(self) -> None:
        self.out = bytearray(_U64.pack(FST_VERSION) + _U64.pack(0))
        self.stack = [_Unfinished(False)]
        self.registry: list[list[tuple[tuple[object, ...], int] | None]] = [
            [None] * REGISTRY_CELLS for _ in range(REGISTRY_ROWS)
        ]
        self.last_addr = _NONE_ADDRESS
        self.count = 0
        self.last_key: bytes | None = None

    def insert(self, key: bytes, value: int) -> None:
        if self.last_key is not None and key <= self.last_key:
            raise KernelError(f"fst keys must strictly increase: {self.last_key!r} then {key!r}")
        self.last_key = key
        if not key:
            self.count = 1
            self.stack[0].final = True
            self.stack[0].final_out = value
            return
        prefix_len, value = self._common_prefix_and_set_output(key, value)
        self.count += 1
        self._compile_from(prefix_len)
        self._add_suffix(key[prefix_len:], value)

    def finish(self) -> bytes:
        self._compile_from(0)
        root = self.stack.pop()
        root_addr = self._compile(root)
        self.out += _U64.pack(self.count) + _U64.pack(root_addr)
        return bytes(self.out)

    def _common_prefix_and_set_output(self, key: bytes, value: int) -> tuple[int, int]:
        stack = self.stack
        i = 0
        while i < len(key):
            node = stack[i]
            if node.last_inp != key[i]:
                break
            i += 1
            common = min(node.last_out, value)
            add_prefix = node.last_out - common
            value -= common
            node.last_out = common
            if add_prefix:
                stack[i].add_output_prefix(add_prefix)
        return i, value

    def _compile_from(self, istate: int) -> None:
        addr = _NONE_ADDRESS
        stack = self.stack
        while istate + 1 < len(stack):
            node = stack.pop()
            if addr != _NONE_ADDRESS:
                node.freeze_last(addr)
            addr = self._compile(node)
        if addr != _NONE_ADDRESS:
            stack[-1].freeze_last(addr)

    def _add_suffix(self, suffix: bytes, value: int) -> None:
        if not suffix:
            return
        top = self.stack[-1]
        top.last_inp = suffix[0]
        top.last_out = value
        for byte in suffix[1:]:
            node = _Unfinished(False)
            node.last_inp = byte
            self.stack.append(node)
        self.stack.append(_Unfinished(True))

    def _compile(self, node: _Unfinished) -> int:
        final, final_out, trans = node.final, node.final_out, node.trans
        if final and not trans and final_out == 0:
            return _EMPTY_ADDRESS
        ident = (final, final_out, tuple(trans))
        bucket = self.registry[_node_hash(final, final_out, trans)]
        for i, cell in enumerate(bucket):
            if cell is not None and cell[0] == ident:
                bucket.insert(0, bucket.pop(i))
                return cell[1]
        start = len(self.out)
        self._emit(start, final, final_out, trans)
        self.last_addr = len(self.out) - 1
        bucket.pop()
        bucket.insert(0, (ident, self.last_addr))
        return self.last_addr

    def _emit(
        self, start: int, final: bool, final_out: int, trans: list[tuple[int, int, int]]
    ) -> None:
        if len(trans) != 1 or final:
            _emit_any_trans(self.out, start, final, final_out, trans)
            return
        inp, value, target = trans[0]
        if target != self.last_addr or value != 0:
            _emit_one_trans(self.out, start, inp, value, target)
        else:
            _emit_one_trans_next(self.out, inp)


def fst_build(key_data: bytes, key_ends: KeyEnds, values: Sequence[int] | None = None) -> bytes:
    """A tantivy-fst map from strictly increasing keys to ``values`` (default: ordinals)."""
    keys = unpack_keys(key_data, key_ends)
    builder = _FstBuilder()
    if values is None:
        for ordinal, key in enumerate(keys):
            builder.insert(key, ordinal)
    else:
        if len(values) != len(keys):
            raise KernelError("fst_build: keys and values differ in length")
        for key, value in zip(keys, values, strict=True):
            builder.insert(key, value)
    return builder.finish()


# --------------------------------------------------------------------------- fst walk


def _uint(data: bytes, at: int, size: int) -> int:
    return int.from_bytes(data[at : at + size], "little")


def _parse_node(data: bytes, addr: int) -> tuple[bool, int, list[tuple[int, int, int]]]:
    """(is_final, final_output, [(input, output, target)]) of the node at ``addr``."""
    if addr == _EMPTY_ADDRESS:
        return True, 0, []
    if not 16 <= addr < len(data) - 16:
        raise KernelError(f"fst node address {addr} outside the node area")
    state = data[addr]
    kind = state >> 6
    if kind == 0b11:
        idx = state & 0x3F
        end = addr if idx else addr - 1
        inp = COMMON_INPUTS_INV[idx - 1] if idx else data[addr - 1]
        return False, 0, [(inp, 0, end - 1)]
    if kind == 0b10:
        idx = state & 0x3F
        at = addr if idx else addr - 1
        inp = COMMON_INPUTS_INV[idx - 1] if idx else data[addr - 1]
        sizes = data[at - 1]
        tsize, osize = sizes >> 4, sizes & 0x0F
        delta = _uint(data, at - 1 - tsize, tsize)
        value = _uint(data, at - 1 - tsize - osize, osize) if osize else 0
        end = at - 1 - tsize - osize
        return False, 0, [(inp, value, _target(end, delta))]
    return _parse_any_trans(data, addr, state)


def _target(end: int, delta: int) -> int:
    if delta == 0:
        return _EMPTY_ADDRESS
    target = end - delta
    if target < 16:
        raise KernelError(f"fst transition target {target} before the node area")
    return target


def _parse_any_trans(
    data: bytes, addr: int, state: int
) -> tuple[bool, int, list[tuple[int, int, int]]]:
    final = bool(state & 0b01_000000)
    ntrans = state & 0x3F
    at = addr
    if ntrans == 0:
        at -= 1
        ntrans = data[at]
        if ntrans == 1:
            ntrans = 256
    sizes = data[at - 1]
    tsize, osize = sizes >> 4, sizes & 0x0F
    index_size = 256 if ntrans > _TRANS_INDEX_THRESHOLD else 0
    inputs_end = at - 1 - index_size
    deltas_end = inputs_end - ntrans
    outputs_end = deltas_end - ntrans * tsize
    end = outputs_end - ntrans * osize - (osize if final else 0)
    if end < 16:
        raise KernelError(f"fst node at {addr} runs before the node area")
    final_out = _uint(data, end, osize) if final and osize else 0
    trans = []
    for i in range(ntrans):
        inp = data[inputs_end - 1 - i]
        delta = _uint(data, deltas_end - (i + 1) * tsize, tsize) if tsize else 0
        value = _uint(data, outputs_end - (i + 1) * osize, osize) if osize else 0
        trans.append((inp, value, _target(end, delta)))
    return final, final_out, trans


def _fst_header(data: bytes) -> tuple[int, int]:
    if len(data) < 32:
        raise KernelError(f"fst of {len(data)} bytes is shorter than its 32-byte frame")
    version = _U64.unpack_from(data, 0)[0]
    if version != FST_VERSION:
        # version 1 lays out nodes with over 32 transitions differently; tantivy-fst writes 2
        raise KernelError(f"fst format version {version} is not supported (only {FST_VERSION})")
    count = _U64.unpack_from(data, len(data) - 16)[0]
    root = _U64.unpack_from(data, len(data) - 8)[0]
    if not (root == _EMPTY_ADDRESS and len(data) == 32) and root + 17 != len(data):
        raise KernelError(f"fst root address {root} does not end the node area")
    return count, root


def fst_entries(data: bytes) -> tuple[bytes, array[int], array[int]]:
    """Every (key, value) of a tantivy-fst map, in key order."""
    count, root = _fst_header(data)
    keys: list[bytes] = []
    values: list[int] = []
    todo: list[tuple[int, bytes, int]] = [(root, b"", 0)]
    while todo:
        addr, prefix, acc = todo.pop()
        final, final_out, trans = _parse_node(data, addr)
        if final:
            if len(keys) >= count:
                raise KernelError(f"fst holds more keys than its count {count}")
            keys.append(prefix)
            values.append((acc + final_out) & _MASK64)
        for inp, value, target in reversed(trans):
            if target != _EMPTY_ADDRESS and target >= addr:
                raise KernelError(f"fst transition at {addr} points forward to {target}")
            todo.append((target, prefix + bytes((inp,)), acc + value))
    if len(keys) != count:
        raise KernelError(f"fst holds {len(keys)} keys, its footer says {count}")
    key_data, key_ends = pack_keys(keys)
    return key_data, key_ends, array("Q", values)


def fst_near(data: bytes, term: str, distance: int, most: int) -> list[bytes]:
    """The keys of a tantivy-fst map within ``distance`` edits of ``term`` (optimal
    string alignment over characters: insertion, deletion, substitution, transposition
    of neighbours), in key order, at most ``most + 1`` of them; keys that are not UTF-8
    are never near.

    A depth-first walk carrying the prefix's row of distances to every prefix of
    ``term``; a branch whose row is all past ``distance`` is left (no extension comes
    back: a row's cells never drop below the row before's minimum, a transposition
    included)."""
    _, root = _fst_header(data)
    size = len(term)
    found: list[bytes] = []
    # (node, key so far, bytes of an unfinished character, the key's row, the row
    # before it, the key's last character)
    todo: list[tuple[int, bytes, bytes, list[int], list[int] | None, str]] = [
        (root, b"", b"", list(range(size + 1)), None, "")
    ]
    while todo:
        addr, key, pending, row, before, last = todo.pop()
        final, _, transitions = _parse_node(data, addr)
        if final and not pending and row[size] <= distance:
            found.append(key)
            if len(found) > most:
                return found
        for byte, _, child in reversed(transitions):
            if child != _EMPTY_ADDRESS and child >= addr:
                raise KernelError(f"fst transition at {addr} points forward to {child}")
            grown = pending + bytes((byte,))
            char = _utf8_char(grown)
            if char is None:
                todo.append((child, key + bytes((byte,)), grown, row, before, last))
            elif char:
                step = _osa_row(row, before, last, char, term)
                if min(step) <= distance:
                    todo.append((child, key + bytes((byte,)), b"", step, row, char))
    return found


def _utf8_char(data: bytes) -> str | None:
    """The character ``data`` encodes in UTF-8, None while it is a valid unfinished
    start, "" when it is no UTF-8 (surrogates and overlong forms included)."""
    lead = data[0]
    if lead < 0x80:
        need = 1
    elif 0xC2 <= lead < 0xE0:
        need = 2
    elif 0xE0 <= lead < 0xF0:
        need = 3
    elif 0xF0 <= lead < 0xF5:
        need = 4
    else:
        return ""
    if len(data) > 1 and not 0x80 <= data[-1] < 0xC0:
        return ""
    if len(data) < need:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return ""


def _osa_row(
    row: list[int], before: list[int] | None, last: str, char: str, term: str
) -> list[int]:
    """The distances of the key extended by ``char`` to every prefix of ``term``
    (``row``: the key's, ``before``: the row before it, ``last``: its last character)."""
    step = [row[0] + 1]
    for j, wanted in enumerate(term, 1):
        best = min(row[j] + 1, step[j - 1] + 1, row[j - 1] + (char != wanted))
        if before is not None and j > 1 and char == term[j - 2] and last == wanted:
            best = min(best, before[j - 2] + 1)
        step.append(best)
    return step


# --------------------------------------------------------------------------- TermInfoStore


def _check_contiguous(cols: Sequence[Sequence[int]], start: int, stop: int, what: str) -> None:
    _df, ps, pl, qs, ql = cols
    for i in range(start + 1, stop):
        if ps[i] != ps[i - 1] + pl[i - 1] or qs[i] != qs[i - 1] + ql[i - 1]:
            raise KernelError(
                f"term {i}: postings/positions are not contiguous, {what} cannot hold them"
            )


def tis_encode(cols: Columns) -> bytes:
    """The FST form's TermInfoStore: blocks of 256, bit-packed relative to each first term."""
    df, ps, pl, qs, ql = cols
    count = len(df)
    if any(len(col) != count for col in cols):
        raise KernelError(f"expected five columns of {count} values")
    metas = bytearray()
    bits = bytearray()
    for first in range(0, count, TIS_BLOCK_LEN):
        stop = min(first + TIS_BLOCK_LEN, count)
        _check_contiguous(cols, first, stop, "a TermInfoStore")
        postings_end = ps[stop - 1] + pl[stop - 1] - ps[first]
        positions_end = qs[stop - 1] + ql[stop - 1] - qs[first]
        nb_df = _num_bits(max(df[first + 1 : stop], default=0))
        nb_p = _num_bits(postings_end)
        nb_q = _num_bits(positions_end)
        metas += _TIS_META.pack(
            len(bits), df[first], ps[first], pl[first], qs[first], ql[first], nb_df, nb_p, nb_q
        )
        acc = 0
        pos = 0
        for i in range(first + 1, stop):
            acc |= (ps[i] - ps[first]) << pos
            pos += nb_p
            acc |= (qs[i] - qs[first]) << pos
            pos += nb_q
            acc |= df[i] << pos
            pos += nb_df
        acc |= postings_end << pos
        pos += nb_p
        acc |= positions_end << pos
        pos += nb_q
        bits += acc.to_bytes((pos + 7) // 8, "little")
    return _U64.pack(len(metas)) + _U64.pack(count) + bytes(metas) + bytes(bits)


def tis_decode(data: bytes) -> Columns:
    """Decode a whole TermInfoStore back to its five columns."""
    if len(data) < 16:
        raise KernelError("TermInfoStore shorter than its 16-byte header")
    metas_len = _U64.unpack_from(data, 0)[0]
    count = _U64.unpack_from(data, 8)[0]
    nblocks = (count + TIS_BLOCK_LEN - 1) // TIS_BLOCK_LEN
    if metas_len != nblocks * _TIS_META.size or 16 + metas_len > len(data):
        raise KernelError(f"TermInfoStore: {metas_len} bytes of block metas for {count} terms")
    bits = data[16 + metas_len :]
    cols: tuple[list[int], ...] = ([], [], [], [], [])
    for block in range(nblocks):
        meta = _TIS_META.unpack_from(data, 16 + block * _TIS_META.size)
        size = min(TIS_BLOCK_LEN, count - block * TIS_BLOCK_LEN)
        _decode_tis_block(bits, meta, size, cols)
    return _columns(cols)


def _decode_tis_block(
    bits: bytes, meta: tuple[int, ...], size: int, cols: tuple[list[int], ...]
) -> None:
    offset, df0, ps0, pl0, qs0, ql0, nb_df, nb_p, nb_q = meta
    if max(nb_df, nb_p, nb_q) > 64:
        raise KernelError("TermInfoStore block with a bit width over 64")
    total = nb_df + nb_p + nb_q
    base = offset * 8
    if (base + (size - 1) * total + nb_p + nb_q + 7) // 8 > len(bits):
        raise KernelError("TermInfoStore bit-packed data is truncated")
    df, ps, pl, qs, ql = cols
    # term 0 of the block is the reference, stored whole; the others are
    # (postings start, positions start, doc_freq) relative to it, and each
    # one's end is the next one's start (the block's end is stored last)
    df.append(df0)
    ps.append(ps0)
    pl.append(pl0)
    qs.append(qs0)
    ql.append(ql0)
    at = base
    start_p = ps0 + _bits_at(bits, at, nb_p)
    start_q = qs0 + _bits_at(bits, at + nb_p, nb_q)
    for _ in range(size - 1):
        freq = _bits_at(bits, at + nb_p + nb_q, nb_df)
        at += total
        next_p = ps0 + _bits_at(bits, at, nb_p)
        next_q = qs0 + _bits_at(bits, at + nb_p, nb_q)
        if next_p < start_p or next_q < start_q:
            raise KernelError("TermInfoStore term ends before it starts")
        df.append(freq)
        ps.append(start_p)
        pl.append(next_p - start_p)
        qs.append(start_q)
        ql.append(next_q - start_q)
        start_p, start_q = next_p, next_q


# --------------------------------------------------------------------------- SSTable blocks


def _common_prefix(left: bytes, right: bytes) -> int:
    limit = min(len(left), len(right))
    i = 0
    while i < limit and left[i] == right[i]:
        i += 1
    return i


def _block_values(cols: Columns, start: int, stop: int) -> bytearray:
    df, ps, pl, qs, ql = cols
    out = bytearray()
    encode_vint(stop - start, out)
    encode_vint(ps[start], out)
    encode_vint(qs[start], out)
    for i in range(start, stop):
        encode_vint(df[i], out)
        encode_vint(pl[i], out)
        encode_vint(ql[i], out)
    return out


def _write_block(out: bytearray, payload: bytes, compress: Compress | None) -> None:
    if compress is not None and len(payload) > SST_ZSTD_MIN:
        packed = compress(payload)
        if len(packed) < len(payload):
            out += struct.pack("<IB", len(packed) + 1, 1)
            out += packed
            return
    out += struct.pack("<IB", len(payload) + 1, 0)
    out += payload


def sst_encode(
    key_data: bytes, key_ends: KeyEnds, cols: Columns, compress: Compress | None
) -> tuple[bytes, list[tuple[bytes, int, int, int]]]:
    """SSTable blocks for sorted keys: (bytes, [(last_key, start, end, first_ordinal)])."""
    keys = unpack_keys(key_data, key_ends)
    if len(cols) != 5 or any(len(col) != len(keys) for col in cols):
        raise KernelError(f"expected five columns of {len(keys)} values")
    out = bytearray()
    blocks: list[tuple[bytes, int, int, int]] = []
    keybuf = bytearray()
    first = 0
    previous = b""
    last_key: bytes | None = None
    for i, key in enumerate(keys):
        if last_key is not None and key <= last_key:
            raise KernelError(f"SSTable keys must strictly increase: {last_key!r} then {key!r}")
        last_key = key
        keep = _common_prefix(previous, key)
        add = len(key) - keep
        if keep < 16 and add < 16:
            keybuf.append(keep | (add << 4))
        else:
            keybuf.append(_VINT_MODE)
            encode_leb128(keep, keybuf)
            encode_leb128(add, keybuf)
        keybuf += key[keep:]
        previous = key
        if len(keybuf) > SST_BLOCK_LEN:
            _flush(out, blocks, keys, cols, first, i + 1, keybuf, compress)
            first = i + 1
            previous = b""
            keybuf = bytearray()
    if keybuf:
        _flush(out, blocks, keys, cols, first, len(keys), keybuf, compress)
    return bytes(out), blocks


def _flush(
    out: bytearray,
    blocks: list[tuple[bytes, int, int, int]],
    keys: Sequence[bytes],
    cols: Columns,
    first: int,
    stop: int,
    keybuf: bytearray,
    compress: Compress | None,
) -> None:
    _check_contiguous(cols, first, stop, "an SSTable block")
    start = len(out)
    _write_block(out, bytes(_block_values(cols, first, stop) + keybuf), compress)
    blocks.append((keys[stop - 1], start, len(out), first))


def sst_decode(
    data: bytes, end: int, decompress: Decompress
) -> tuple[bytes, array[int], Columns, list[tuple[int, int, int, bool, int]]]:
    """Decode every block in ``data[:end]`` (end marker included).

    Returns (key_data, key_ends, columns, [(start, stop, payload_len, compressed, terms)]).
    """
    keys: list[bytes] = []
    cols: tuple[list[int], ...] = ([], [], [], [], [])
    blocks: list[tuple[int, int, int, bool, int]] = []
    pos = 0
    while True:
        if pos + 4 > end:
            raise KernelError(f"SSTable block header at {pos} runs past the blocks' end {end}")
        length = struct.unpack_from("<I", data, pos)[0]
        if length <= 1:
            pos += 4
            break
        stop = pos + 4 + length
        if stop > end:
            raise KernelError(f"SSTable block at {pos} ({length} bytes) runs past {end}")
        flag = data[pos + 4]
        payload = data[pos + 5 : stop]
        if flag == 1:
            payload = decompress(payload)
        elif flag != 0:
            raise KernelError(f"SSTable block at {pos}: unknown compression flag {flag}")
        before = len(keys)
        _decode_block(payload, keys, cols)
        blocks.append((pos, stop, len(payload), flag == 1, len(keys) - before))
        pos = stop
    if pos != end:
        raise KernelError(f"SSTable end marker at {pos - 4}, but the index starts at {end}")
    key_data, key_ends = pack_keys(keys)
    return key_data, key_ends, _columns(cols), blocks


def _decode_block(payload: bytes, keys: list[bytes], cols: tuple[list[int], ...]) -> None:
    df, ps, pl, qs, ql = cols
    end = len(payload)
    count, pos = _read_vint(payload, 0, end)
    if count == 0:
        raise KernelError("SSTable block with no terms")
    postings, pos = _read_vint(payload, pos, end)
    positions, pos = _read_vint(payload, pos, end)
    for _ in range(count):
        freq, pos = _read_vint(payload, pos, end)
        plen, pos = _read_vint(payload, pos, end)
        qlen, pos = _read_vint(payload, pos, end)
        df.append(freq)
        ps.append(postings)
        pl.append(plen)
        qs.append(positions)
        ql.append(qlen)
        postings += plen
        positions += qlen
    previous = b""
    for _ in range(count):
        if pos >= end:
            raise KernelError("SSTable block keys are truncated")
        header = payload[pos]
        pos += 1
        if header == _VINT_MODE:
            keep, pos = _read_leb128(payload, pos, end)
            add, pos = _read_leb128(payload, pos, end)
        else:
            keep, add = header & 0x0F, header >> 4
        if keep > len(previous) or pos + add > end:
            raise KernelError("SSTable key keeps more than the previous key or runs past its block")
        key = previous[:keep] + payload[pos : pos + add]
        pos += add
        keys.append(key)
        previous = key
    if pos != end:
        raise KernelError(f"SSTable block payload has {end - pos} bytes after its last key")
