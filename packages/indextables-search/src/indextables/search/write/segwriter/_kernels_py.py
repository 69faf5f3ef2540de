"""Pure-Python twin of the segment writer's Cython kernels (``_kernels.pyx``).

Same functions, same results, same errors; the tests run both.

``tokenize`` turns a column of UTF-8 values into its tokens the way Tantivy's
analyzers do (see :mod:`.tokenize` for the rules), returning four buffers: the
token bytes, their ``int64`` offsets (a leading 0, one end per token), the
``uint32`` position of each token within its value and the ``int64`` row it
came from, all little-endian.
"""

from __future__ import annotations

import itertools
import re
import struct
import sys
from array import array
from typing import Final

import numpy as np

from indextables.search.write.segwriter._unicodetables import ALPHANUMERIC, LOWERCASE, WHITESPACE
from indextables.search.write.segwriter.errors import SegmentWriteError

__all__ = [
    "BLOCK_LEN",
    "MODE_RAW",
    "MODE_SIMPLE",
    "MODE_WHITESPACE",
    "NOGIL",
    "invert_tokens",
    "lz4_block",
    "positions",
    "postings",
    "store_blocks",
    "tokenize",
]

MODE_SIMPLE = 0
MODE_WHITESPACE = 1
MODE_RAW = 2
NOGIL = False


def _char_class(ranges: tuple[tuple[int, int], ...], negate: bool) -> re.Pattern[str]:
    parts = "".join(
        re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}"
        for a, b in ranges
    )
    return re.compile(f"[{'^' if negate else ''}{parts}]+")


_RUNS = {
    MODE_SIMPLE: _char_class(ALPHANUMERIC, negate=False),
    MODE_WHITESPACE: _char_class(WHITESPACE, negate=True),
}
_LOWER = dict(LOWERCASE)


def _checked_offsets(offsets: memoryview, size: int, rows: int) -> None:
    if len(offsets) != rows + 1:
        raise SegmentWriteError(f"{len(offsets)} offsets for {rows} rows (expected {rows + 1})")
    previous = 0
    for row in range(rows + 1):
        value = offsets[row]
        if value < previous or value > size:
            raise SegmentWriteError(
                f"row {max(row - 1, 0)}: offset {value} out of order or past the {size} data bytes"
            )
        previous = value


def tokenize(
    data: bytes | memoryview,
    offsets: bytes | memoryview,
    valid: bytes | memoryview,
    mode: int,
    limit: int,
) -> tuple[bytes, bytes, bytes, bytes]:
    """The tokens of every valid row (see the module docstring for the buffers).

    Args:
        data: the values' UTF-8 bytes, one after the other.
        offsets: ``int64`` little-endian, one start per row and the final end.
        valid: one byte per row, 0 for a null (no tokens).
        mode: :data:`MODE_SIMPLE`, :data:`MODE_WHITESPACE` or :data:`MODE_RAW`.
        limit: a token of this many UTF-8 bytes or more (lowercased) is dropped, its
            position left unused; 0 for no limit.

    Raises:
        SegmentWriteError: a value is not UTF-8, offsets out of order or range, an
            unknown mode.
    """
    source = memoryview(data).cast("B")
    bounds = memoryview(offsets).cast("B").cast("q")
    flags = memoryview(valid).cast("B")
    if mode not in (MODE_SIMPLE, MODE_WHITESPACE, MODE_RAW):
        raise SegmentWriteError(f"unknown tokenizer mode {mode}")
    _checked_offsets(bounds, len(source), len(flags))
    out = bytearray()
    ends = array("q", [0])
    positions = array("I")
    rows = array("q")
    runs = _RUNS.get(mode)
    for row in range(len(flags)):
        if not flags[row]:
            continue
        raw = bytes(source[bounds[row] : bounds[row + 1]])
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SegmentWriteError(f"row {row}: not UTF-8 at byte {exc.start}") from None
        if runs is None:
            if limit and len(raw) >= limit:
                continue
            out += raw
            ends.append(len(out))
            positions.append(0)
            rows.append(row)
            continue
        for position, match in enumerate(runs.finditer(text)):
            token = match.group().translate(_LOWER).encode("utf-8")
            if limit and len(token) >= limit:
                continue
            out += token
            ends.append(len(out))
            positions.append(position)
            rows.append(row)
    if sys.byteorder != "little":  # pragma: no cover - the buffers are little-endian
        for part in (ends, positions, rows):
            part.byteswap()
    return bytes(out), ends.tobytes(), positions.tobytes(), rows.tobytes()


# The inversion, postings and positions (the layout: ``postings.py``).
BLOCK_LEN: Final = 128
_RECORDS: Final = (0, 1, 2)  # documents, with frequencies, with positions
_U32_MAX: Final = 0xFFFFFFFF


def _vint(value: int, out: bytearray) -> None:
    while value >= 0x80:
        out.append(value & 0x7F)
        value >>= 7
    out.append(value | 0x80)


def _num_bits(values: list[int]) -> int:
    combined = 0
    for value in values:
        combined |= value
    return combined.bit_length()


def _pack(values: list[int], num_bits: int, out: bytearray) -> None:
    """128 values of ``num_bits`` bits in BitPacker4x's layout (four lanes of u32 words)."""
    if num_bits == 0:
        return
    words = [0] * (4 * num_bits)
    for lane in range(4):
        stream = 0
        for i in range(BLOCK_LEN // 4):
            stream |= values[4 * i + lane] << (i * num_bits)
        for w in range(num_bits):
            words[4 * w + lane] = (stream >> (32 * w)) & _U32_MAX
    out += struct.pack(f"<{len(words)}I", *words)


def _ints(values: object) -> list[int]:
    return memoryview(values).tolist()  # type: ignore[arg-type]


def _check_starts(starts: list[int], count: int) -> None:
    if not starts or starts[0] != 0 or starts[-1] != count:
        raise SegmentWriteError(f"term starts must run from 0 to the {count} documents")
    for k in range(1, len(starts)):
        if starts[k] < starts[k - 1]:
            raise SegmentWriteError(f"term starts decrease at term {k - 1}")


def _block_max(
    docs: list[int], freqs: list[int], codes: bytes, norms: np.ndarray
) -> tuple[int, int]:
    """The (fieldnorm code, frequency) of the block's best BM25 document, the last of equals."""
    block_codes = [codes[doc] for doc in docs]
    tf = np.array(freqs, dtype=np.float32)
    scores = (tf / (tf + norms[block_codes])).tolist()  # f32 values, exact as floats
    best = 0
    for j in range(1, len(scores)):
        if not scores[j] < scores[best]:
            best = j
    return block_codes[best], freqs[best]


def postings(
    doc_starts: object,
    docs: object,
    term_freqs: object,
    fieldnorms: object,
    norms: object,
    record: int,
) -> tuple[bytes, bytes]:
    """Every term's ``.idx`` postings back to back, and their int64 ends (a leading 0).

    ``doc_starts`` (int64, one more than the terms) cuts ``docs`` (uint32, strictly
    ascending per term) and ``term_freqs`` (uint32, read unless ``record`` is 0:
    documents only; 1: with frequencies, 2: with positions) into terms;
    ``fieldnorms`` (one code per document, or empty: no block maxima) and ``norms``
    (the 256 f32 BM25 length norms) give each block's maximum.
    """
    if record not in _RECORDS:
        raise SegmentWriteError(f"unknown postings record {record}")
    starts, doc_list = _ints(doc_starts), _ints(docs)
    _check_starts(starts, len(doc_list))
    freq_list: list[int] = []
    if record:
        freq_list = _ints(term_freqs)
        if len(freq_list) != len(doc_list):
            raise SegmentWriteError(
                f"{len(freq_list)} term frequencies for {len(doc_list)} documents"
            )
    codes = bytes(memoryview(fieldnorms))  # type: ignore[arg-type]
    norm_values = np.asarray(norms, dtype=np.float32)
    if codes and norm_values.shape != (256,):
        raise SegmentWriteError(f"{norm_values.size} BM25 norms (expected 256)")
    out = bytearray()
    ends = array("q", [0])
    for t in range(len(starts) - 1):
        start, end = starts[t], starts[t + 1]
        term_docs = doc_list[start:end]
        for k in range(1, len(term_docs)):
            if term_docs[k] <= term_docs[k - 1]:
                raise SegmentWriteError(f"postings documents not ascending at {term_docs[k]}")
        term_freqs_list = freq_list[start:end]
        if record and codes:
            for doc in term_docs:
                if doc >= len(codes):
                    raise SegmentWriteError(
                        f"document {doc} has no fieldnorm ({len(codes)} documents)"
                    )
        for doc, freq in zip(term_docs, term_freqs_list, strict=False):
            if freq == 0:
                raise SegmentWriteError(f"term frequency 0 for document {doc}")
        skip = bytearray()
        body = bytearray()
        last = 0
        k = 0
        while len(term_docs) - k >= BLOCK_LEN:
            block = term_docs[k : k + BLOCK_LEN]
            first = block[0] if k == 0 else block[0] - last - 1
            deltas = [first] + [block[j] - block[j - 1] - 1 for j in range(1, BLOCK_LEN)]
            num_bits = _num_bits(deltas)
            _pack(deltas, num_bits, body)
            last = block[-1]
            skip += struct.pack("<IB", last, num_bits | 0x40)
            if record:
                freqs = term_freqs_list[k : k + BLOCK_LEN]
                minus_one = [f - 1 for f in freqs]
                tf_bits = _num_bits(minus_one)
                _pack(minus_one, tf_bits, body)
                skip.append(tf_bits)
                if record == 2:
                    total = sum(freqs)
                    if total > _U32_MAX:
                        raise SegmentWriteError(
                            f"a block's term frequencies from document {block[0]} pass 2**32"
                        )
                    skip += struct.pack("<I", total)
                code, freq = _block_max(block, freqs, codes, norm_values) if codes else (0, 0)
                skip += bytes([code, min(freq, 255)])
            k += BLOCK_LEN
        previous = last
        for doc in term_docs[k:]:
            _vint(doc - previous, body)
            previous = doc
        for freq in term_freqs_list[k:]:
            _vint(freq, body)
        if len(term_docs) >= BLOCK_LEN:
            _vint(len(skip), out)
            out += skip
        out += body
        ends.append(len(out))
    if sys.byteorder != "little":  # pragma: no cover - the buffers are little-endian
        ends.byteswap()
    return bytes(out), ends.tobytes()


def positions(doc_starts: object, term_freqs: object, positions: object) -> tuple[bytes, bytes]:
    """Every term's ``.pos`` bytes back to back, and their int64 ends (a leading 0).

    ``doc_starts`` (int64) cuts the (term, document) entries into terms,
    ``term_freqs`` (uint32) gives each entry's count of ``positions`` (uint32,
    ascending within an entry; they follow the entries in order).
    """
    starts, freqs, all_positions = _ints(doc_starts), _ints(term_freqs), _ints(positions)
    _check_starts(starts, len(freqs))
    out = bytearray()
    ends = array("q", [0])
    at = 0
    for t in range(len(starts) - 1):
        deltas: list[int] = []
        for k in range(starts[t], starts[t + 1]):
            if at + freqs[k] > len(all_positions):
                raise SegmentWriteError(
                    f"term frequencies do not sum to the {len(all_positions)} positions"
                )
            previous = 0
            for position in all_positions[at : at + freqs[k]]:
                if position < previous:
                    raise SegmentWriteError(f"positions not ascending at {position}")
                deltas.append(position - previous)
                previous = position
            at += freqs[k]
        full = len(deltas) - len(deltas) % BLOCK_LEN
        _vint(full // BLOCK_LEN, out)
        blocks = [deltas[s : s + BLOCK_LEN] for s in range(0, full, BLOCK_LEN)]
        widths = [_num_bits(block) for block in blocks]
        out += bytes(widths)
        for block, num_bits in zip(blocks, widths, strict=True):
            _pack(block, num_bits, out)
        for delta in deltas[full:]:
            _vint(delta, out)
        ends.append(len(out))
    if at != len(all_positions):
        raise SegmentWriteError(
            f"term frequencies do not sum to the {len(all_positions)} positions"
        )
    if sys.byteorder != "little":  # pragma: no cover - the buffers are little-endian
        ends.byteswap()
    return bytes(out), ends.tobytes()


def invert_tokens(
    ranks: object, rows: object, positions: object, groups: int
) -> tuple[bytes, bytes, bytes, bytes] | None:
    """A field's tokens inverted: each token's term rank (uint32, below ``groups``), row
    (int64, a u32 document) and position (uint32), in row then position order, give
    (per term where its documents start: int64, ``groups + 1`` entries; the documents:
    uint32; their term frequencies: uint32; the positions by term, document,
    position: uint32), all bytes; None when the tokens are not in that order."""
    rank_values = np.asarray(memoryview(ranks)).astype(np.uint32, copy=False)  # type: ignore[arg-type]
    row_values = np.asarray(memoryview(rows)).astype(np.int64, copy=False)  # type: ignore[arg-type]
    position_values = np.asarray(memoryview(positions)).astype(np.uint32, copy=False)  # type: ignore[arg-type]
    n = rank_values.size
    if row_values.size != n or position_values.size != n:
        raise SegmentWriteError(
            f"{n} token ranks, {row_values.size} rows and {position_values.size} positions"
        )
    if groups < 0:
        raise SegmentWriteError(f"{groups} groups")
    bad_rank = np.flatnonzero(rank_values >= groups)
    bad_row = np.flatnonzero((row_values < 0) | (row_values > _U32_MAX))
    if bad_rank.size and (not bad_row.size or bad_rank[0] <= bad_row[0]):
        at = int(bad_rank[0])
        raise SegmentWriteError(f"rank {int(rank_values[at])} at {at} is not below {groups}")
    if bad_row.size:
        raise SegmentWriteError(f"token row {int(row_values[bad_row[0]])} is not a u32 document")
    if n > 1:
        step = np.diff(row_values)
        back = np.diff(position_values.astype(np.int64)) < 0
        if (step < 0).any() or (back & (step == 0)).any():
            return None
    order = np.argsort(rank_values, kind="stable")
    sorted_ranks, sorted_rows = rank_values[order], row_values[order]
    new_doc = np.ones(n, dtype=bool)
    if n > 1:
        new_doc[1:] = (sorted_ranks[1:] != sorted_ranks[:-1]) | (
            sorted_rows[1:] != sorted_rows[:-1]
        )
    doc_first = np.flatnonzero(new_doc)
    freqs = np.diff(np.append(doc_first, n))
    per_term = np.bincount(sorted_ranks[doc_first], minlength=groups)[:groups]
    starts = np.concatenate([[0], np.cumsum(per_term)]).astype("<i8")
    return (
        starts.tobytes(),
        sorted_rows[doc_first].astype("<u4").tobytes(),
        freqs.astype("<u4").tobytes(),
        position_values[order].astype("<u4").tobytes(),
    )


# LZ4 blocks as lz4_flex makes them (see ``lz4block`` for the rules).
_MFLIMIT: Final = 12
_END_OFFSET: Final = 6
_MIN_LENGTH: Final = _MFLIMIT + 1
_MAX_DISTANCE: Final = (1 << 16) - 1
_MINMATCH: Final = 4
_SMALL_INPUT: Final = (1 << 16) - 1
_MASK32: Final = (1 << 32) - 1
_MASK64: Final = (1 << 64) - 1


def _length_bytes(out: bytearray, n: int) -> None:
    # The bytes after a nibble of 15: 255s, then the rest.
    full, rest = divmod(n, 255)
    out += b"\xff" * full
    out.append(rest)


def _last_literals(out: bytearray, src: bytes, start: int) -> None:
    length = len(src) - start
    out.append(min(length, 15) << 4)
    if length >= 15:
        _length_bytes(out, length - 15)
    out += src[start:]


def lz4_block(src: bytes) -> bytes:
    """``src`` as one raw LZ4 block (no size header, no frame), the bytes ``lz4_flex`` makes."""
    n = len(src)
    out = bytearray()
    if n < _MIN_LENGTH:
        _last_literals(out, src, 0)
        return bytes(out)
    table = [0] * 4096
    small = n < _SMALL_INPUT
    from_bytes = int.from_bytes

    def slot(pos: int) -> int:
        if small:
            return (((from_bytes(src[pos : pos + 4], "little") * 2654435761) & _MASK32) >> 16) >> 4
        word = (from_bytes(src[pos : pos + 8], "little") << 24) & _MASK64
        return ((word * 889523592379) & _MASK64) >> 52

    last_check = n - _MFLIMIT
    match_end = n - _END_OFFSET
    literal_start = 0
    table[slot(0)] = 0
    cur = 1
    while True:
        misses = 1 << 5
        next_cur = cur
        while True:
            step = misses >> 5
            misses += 1
            cur = next_cur
            next_cur += step
            if cur > last_check:
                _last_literals(out, src, literal_start)
                return bytes(out)
            h = slot(cur)
            candidate = table[h]
            table[h] = cur
            if cur - candidate > _MAX_DISTANCE:
                continue
            if src[candidate : candidate + 4] == src[cur : cur + 4]:
                break
        while candidate > 0 and cur > literal_start and src[cur - 1] == src[candidate - 1]:
            cur -= 1
            candidate -= 1
        literals = cur - literal_start
        offset = cur - candidate
        cur += _MINMATCH
        candidate += _MINMATCH
        start = cur
        # Extend the match: whole 64-byte runs first, then byte by byte.
        while cur + 64 <= match_end and src[cur : cur + 64] == src[candidate : candidate + 64]:
            cur += 64
            candidate += 64
        while cur < match_end and src[cur] == src[candidate]:
            cur += 1
            candidate += 1
        duplicate = cur - start
        table[slot(cur - 2)] = cur - 2
        out.append((min(literals, 15) << 4) | min(duplicate, 15))
        if literals >= 15:
            _length_bytes(out, literals - 15)
        out += src[literal_start : literal_start + literals]
        out += offset.to_bytes(2, "little")
        if duplicate >= 15:
            _length_bytes(out, duplicate - 15)
        literal_start = cur


def _vint_bytes(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F)
        value >>= 7
    out.append(value | 0x80)
    return bytes(out)


#: A doc-store column width: each row's bytes between its offsets, without a length.
RAW_WIDTH = 255


def store_blocks(
    heads: bytes,
    widths: bytes,
    datas: list[bytes],
    offsets: list[bytes],
    valids: list[bytes],
    num_docs: int,
    block_size: int,
    lz4: bool,
) -> tuple[bytes, bytes]:
    """The doc store's blocks of ``num_docs`` documents (see ``_kernels.store_blocks``).

    Column ``c`` has the 5-byte head ``heads[5c:5c+5]``, one validity byte per row in
    ``valids[c]`` and its values in ``datas[c]``: ``widths[c]`` bytes per row, or for a
    width of 0 the bytes between the ``int64`` offsets ``row`` and ``row + 1`` after
    their ``VInt`` length (a width of ``RAW_WIDTH``, 255: those bytes as they are).
    Returns the blocks and each block's ``int64`` document count and end byte.
    """
    ncols = len(widths)
    if len(heads) != 5 * ncols or not len(datas) == len(offsets) == len(valids) == ncols:
        raise SegmentWriteError(
            "store_blocks: one head, width, data, offsets and validity per column"
        )
    columns = []
    for c in range(ncols):
        width = widths[c]
        valid = bytes(valids[c])
        data = bytes(datas[c])
        if len(valid) != num_docs:
            raise SegmentWriteError(f"store_blocks: column {c}: {len(valid)} validity bytes")
        ends: list[int] = []
        if width in (0, RAW_WIDTH):
            raw = bytes(offsets[c])
            if len(raw) != 8 * (num_docs + 1):
                raise SegmentWriteError(f"store_blocks: column {c}: {len(raw) // 8} offsets")
            ends = list(struct.unpack(f"<{num_docs + 1}q", raw))
            if any(not 0 <= e <= len(data) for e in ends) or any(
                b < a for a, b in itertools.pairwise(ends)
            ):
                raise SegmentWriteError(f"store_blocks: column {c}: offsets out of order")
        elif len(data) != width * num_docs:
            raise SegmentWriteError(f"store_blocks: column {c}: {len(data)} data bytes")
        columns.append((heads[5 * c : 5 * c + 5], width, data, ends, valid))
    out = bytearray()
    counts = bytearray()
    block = bytearray()
    starts: list[int] = []

    def close_block() -> None:
        if not block:
            return
        for start in starts:
            block.extend(struct.pack("<I", start))
        block.extend(struct.pack("<I", len(starts)))
        if lz4:
            out.extend(struct.pack("<I", len(block)))
            out.extend(lz4_block(bytes(block)))
        else:
            out.extend(block)
        counts.extend(struct.pack("<qq", len(starts), len(out)))
        block.clear()
        starts.clear()

    for row in range(num_docs):
        starts.append(len(block))
        block.extend(_vint_bytes(sum(1 for column in columns if column[4][row])))
        for head, width, data, ends, valid in columns:
            if not valid[row]:
                continue
            block.extend(head)
            if width == 0:
                value = data[ends[row] : ends[row + 1]]
                block.extend(_vint_bytes(len(value)))
                block.extend(value)
            elif width == RAW_WIDTH:
                block.extend(data[ends[row] : ends[row + 1]])
            else:
                block.extend(data[width * row : width * (row + 1)])
        if len(block) >= 1 << 32:
            raise SegmentWriteError("a document of 4 GiB or more does not fit a store block")
        if len(block) + 8 * len(starts) > block_size:
            close_block()
    close_block()
    return bytes(out), bytes(counts)
