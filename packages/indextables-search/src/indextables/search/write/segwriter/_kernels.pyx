# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Cython kernels of the segment writer (twin: ``_kernels_py``, same functions and errors).

``tokenize`` runs without the GIL over the whole column: UTF-8 decoding (strict:
overlong forms, surrogates and code points past U+10FFFF are errors), the split
by the alphanumeric or whitespace table, the lowercase mapping and the length
filter, into growing C buffers handed back as ``bytes``.
"""

from cpython.bytes cimport PyBytes_FromStringAndSize
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcmp, memcpy, memset

from indextables.search.write.segwriter._unicodetables import ALPHANUMERIC, LOWERCASE, WHITESPACE
from indextables.search.write.segwriter.errors import SegmentWriteError

cdef enum:
    C_SIMPLE = 0
    C_WHITESPACE = 1
    C_RAW = 2
    CODE_POINTS = 0x110000

MODE_SIMPLE = C_SIMPLE
MODE_WHITESPACE = C_WHITESPACE
MODE_RAW = C_RAW
NOGIL = True

cdef uint8_t _alnum[CODE_POINTS >> 3]
cdef uint8_t _space[CODE_POINTS >> 3]
cdef uint8_t _lowered[CODE_POINTS >> 3]
cdef uint32_t[::1] _lower_keys
cdef int64_t[::1] _lower_starts
cdef bytes _lower_text


cdef void _fill(uint8_t* bits, object ranges):
    cdef uint32_t c
    for first, last in ranges:
        for c in range(<uint32_t>first, <uint32_t>last + 1):
            bits[c >> 3] |= <uint8_t>(1 << (c & 7))


def _init_tables():
    global _lower_keys, _lower_starts, _lower_text
    _fill(_alnum, ALPHANUMERIC)
    _fill(_space, WHITESPACE)
    keys = sorted(LOWERCASE)
    _fill(_lowered, [(c, c) for c in keys])
    import array

    _lower_keys = array.array("I", keys)
    starts = array.array("q", [0])
    parts = []
    total = 0
    for c in keys:
        part = LOWERCASE[c].encode("utf-8")
        parts.append(part)
        total += len(part)
        starts.append(total)
    _lower_starts = starts
    _lower_text = b"".join(parts)


_init_tables()


cdef struct Buf:
    char* data
    Py_ssize_t size
    Py_ssize_t capacity


cdef inline int _reserve(Buf* buf, Py_ssize_t extra) noexcept nogil:
    """0, or -1 when memory runs out."""
    cdef Py_ssize_t want = buf.size + extra
    cdef Py_ssize_t capacity
    cdef char* grown
    if want <= buf.capacity:
        return 0
    capacity = buf.capacity * 2 if buf.capacity else 4096
    while capacity < want:
        capacity *= 2
    grown = <char*>realloc(buf.data, capacity)
    if grown == NULL:
        return -1
    buf.data = grown
    buf.capacity = capacity
    return 0


cdef inline int _put(Buf* buf, const void* src, Py_ssize_t n) noexcept nogil:
    if _reserve(buf, n):
        return -1
    memcpy(buf.data + buf.size, src, n)
    buf.size += n
    return 0


cdef inline Py_ssize_t _decode(
    const unsigned char* s, Py_ssize_t i, Py_ssize_t end, uint32_t* cp
) noexcept nogil:
    """The length of the UTF-8 sequence at ``i`` (its code point in ``cp``), -1 if malformed."""
    cdef uint32_t c0 = s[i], c1, c2, c3, value
    if c0 < 0x80:
        cp[0] = c0
        return 1
    if c0 < 0xC2:
        return -1
    if c0 < 0xE0:
        if i + 1 >= end:
            return -1
        c1 = s[i + 1]
        if c1 & 0xC0 != 0x80:
            return -1
        cp[0] = ((c0 & 0x1F) << 6) | (c1 & 0x3F)
        return 2
    if c0 < 0xF0:
        if i + 2 >= end:
            return -1
        c1 = s[i + 1]
        c2 = s[i + 2]
        if c1 & 0xC0 != 0x80 or c2 & 0xC0 != 0x80:
            return -1
        value = ((c0 & 0x0F) << 12) | ((c1 & 0x3F) << 6) | (c2 & 0x3F)
        if value < 0x800 or 0xD800 <= value <= 0xDFFF:
            return -1
        cp[0] = value
        return 3
    if c0 < 0xF5:
        if i + 3 >= end:
            return -1
        c1 = s[i + 1]
        c2 = s[i + 2]
        c3 = s[i + 3]
        if c1 & 0xC0 != 0x80 or c2 & 0xC0 != 0x80 or c3 & 0xC0 != 0x80:
            return -1
        value = ((c0 & 0x07) << 18) | ((c1 & 0x3F) << 12) | ((c2 & 0x3F) << 6) | (c3 & 0x3F)
        if value < 0x10000 or value > 0x10FFFF:
            return -1
        cp[0] = value
        return 4
    return -1


cdef inline bint _bit(const uint8_t* bits, uint32_t c) noexcept nogil:
    return (bits[c >> 3] >> (c & 7)) & 1


cdef inline int _put_lower(
    Buf* out, const unsigned char* s, Py_ssize_t i, Py_ssize_t n, uint32_t c,
    const uint32_t* keys, Py_ssize_t nkeys, const int64_t* starts, const char* text,
) noexcept nogil:
    """Append the lowercase form of the character ``c`` (``n`` bytes at ``s + i``)."""
    cdef Py_ssize_t lo = 0, hi = nkeys, mid
    cdef char ch
    if c < 0x80:
        ch = <char>(c + 32 if 0x41 <= c <= 0x5A else c)
        return _put(out, &ch, 1)
    if not _bit(_lowered, c):
        return _put(out, s + i, n)
    while lo < hi:
        mid = (lo + hi) >> 1
        if keys[mid] < c:
            lo = mid + 1
        else:
            hi = mid
    return _put(out, text + starts[lo], starts[lo + 1] - starts[lo])


cdef inline int _emit(
    Buf* ends, Buf* positions, Buf* rows, int64_t end, uint32_t position, int64_t row
) noexcept nogil:
    if _put(ends, &end, 8) or _put(positions, &position, 4) or _put(rows, &row, 8):
        return -1
    return 0


cdef inline int64_t _offset(const unsigned char* offsets, Py_ssize_t k) noexcept nogil:
    cdef int64_t value
    memcpy(&value, offsets + 8 * k, 8)
    return value


cdef bytes _take(Buf* buf):
    return PyBytes_FromStringAndSize(buf.data, buf.size) if buf.size else b""


def tokenize(
    const unsigned char[::1] data,
    const unsigned char[::1] offsets,
    const unsigned char[::1] valid,
    int mode,
    Py_ssize_t limit,
):
    """The tokens of every valid row: (token bytes, int64 offsets with a leading 0,
    uint32 positions, int64 rows), little-endian (see ``_kernels_py.tokenize``)."""
    cdef Py_ssize_t nrows = valid.shape[0], size = data.shape[0]
    cdef const unsigned char* src = &data[0] if size else NULL
    cdef const unsigned char* offs
    cdef const unsigned char* flags = &valid[0] if nrows else NULL
    cdef Buf out, ends, positions, rows
    cdef Py_ssize_t row, i, end, n, token_start, bad_row = -1, bad_byte = 0
    cdef int64_t previous = 0, value, zero = 0
    cdef uint32_t c = 0, position
    cdef bint inside, failed = False
    cdef const uint32_t* keys = &_lower_keys[0]
    cdef Py_ssize_t nkeys = _lower_keys.shape[0]
    cdef const int64_t* starts = &_lower_starts[0]
    cdef const char* text = _lower_text
    cdef const uint8_t* splits = &_alnum[0]
    cdef bint split_on_set = mode == C_WHITESPACE
    if mode != C_SIMPLE and mode != C_WHITESPACE and mode != C_RAW:
        raise SegmentWriteError(f"unknown tokenizer mode {mode}")
    if mode == C_WHITESPACE:
        splits = &_space[0]
    if offsets.shape[0] != 8 * (nrows + 1):
        raise SegmentWriteError(
            f"{offsets.shape[0] // 8} offsets for {nrows} rows (expected {nrows + 1})"
        )
    offs = &offsets[0]
    for row in range(nrows + 1):
        value = _offset(offs, row)
        if value < previous or value > size:
            raise SegmentWriteError(
                f"row {max(row - 1, 0)}: offset {value} out of order or past the {size} data bytes"
            )
        previous = value
    out.data = ends.data = positions.data = rows.data = NULL
    out.size = ends.size = positions.size = rows.size = 0
    out.capacity = ends.capacity = positions.capacity = rows.capacity = 0
    try:
        with nogil:
            if _put(&ends, &zero, 8):
                failed = True
            row = 0
            while row < nrows and not failed and bad_row < 0:
                if not flags[row]:
                    row += 1
                    continue
                i = _offset(offs, row)
                end = _offset(offs, row + 1)
                if mode == C_RAW:
                    while i < end:
                        n = _decode(src, i, end, &c)
                        if n < 0:
                            bad_row = row
                            bad_byte = i - _offset(offs, row)
                            break
                        i += n
                    if bad_row >= 0:
                        break
                    i = _offset(offs, row)
                    if limit and end - i >= limit:
                        row += 1
                        continue
                    if _put(&out, src + i, end - i) or _emit(
                        &ends, &positions, &rows, out.size, 0, row
                    ):
                        failed = True
                    row += 1
                    continue
                position = 0
                inside = False
                token_start = out.size
                while i < end:
                    n = _decode(src, i, end, &c)
                    if n < 0:
                        bad_row = row
                        bad_byte = i - _offset(offs, row)
                        break
                    if _bit(splits, c) != split_on_set:
                        if not inside:
                            inside = True
                            token_start = out.size
                        if _put_lower(&out, src, i, n, c, keys, nkeys, starts, text):
                            failed = True
                            break
                    elif inside:
                        inside = False
                        if limit and out.size - token_start >= limit:
                            out.size = token_start
                        elif _emit(&ends, &positions, &rows, out.size, position, row):
                            failed = True
                            break
                        position += 1
                    i += n
                if inside and bad_row < 0 and not failed:
                    if limit and out.size - token_start >= limit:
                        out.size = token_start
                    elif _emit(&ends, &positions, &rows, out.size, position, row):
                        failed = True
                row += 1
        if failed:
            raise MemoryError("tokenizing a column")
        if bad_row >= 0:
            raise SegmentWriteError(f"row {bad_row}: not UTF-8 at byte {bad_byte}")
        return _take(&out), _take(&ends), _take(&positions), _take(&rows)
    finally:
        free(out.data)
        free(ends.data)
        free(positions.data)
        free(rows.data)


# The inversion, postings and positions (twins: ``_kernels_py.invert_tokens``, ``postings``
# and ``positions``; the layout is described in ``postings.py``).

cdef enum:
    C_BLOCK = 128
    C_BASIC = 0
    C_FREQ = 1
    C_POSITION = 2
    E_NONE = 0
    E_DOCS = 1
    E_FREQ = 2
    E_NORM = 3
    E_SUM = 4
    E_POSITIONS = 5
    E_COUNT = 6
    E_MEMORY = 7

BLOCK_LEN = C_BLOCK


cdef inline int _vint(Buf* buf, uint64_t value) noexcept nogil:
    cdef uint8_t tmp[10]
    cdef int n = 0
    while value >= 0x80:
        tmp[n] = <uint8_t>(value & 0x7F)
        value >>= 7
        n += 1
    tmp[n] = <uint8_t>(value | 0x80)
    return _put(buf, tmp, n + 1)


cdef inline int _byte(Buf* buf, uint8_t value) noexcept nogil:
    return _put(buf, &value, 1)


cdef inline void _store_u32(uint8_t* p, uint32_t value) noexcept nogil:
    p[0] = <uint8_t>(value & 0xFF)
    p[1] = <uint8_t>((value >> 8) & 0xFF)
    p[2] = <uint8_t>((value >> 16) & 0xFF)
    p[3] = <uint8_t>(value >> 24)


cdef inline int _u32(Buf* buf, uint32_t value) noexcept nogil:
    cdef uint8_t tmp[4]
    _store_u32(tmp, value)
    return _put(buf, tmp, 4)


cdef inline int _num_bits(const uint32_t* values) noexcept nogil:
    cdef uint32_t combined = 0
    cdef int i, bits = 0
    for i in range(C_BLOCK):
        combined |= values[i]
    while combined:
        bits += 1
        combined >>= 1
    return bits


cdef inline int _pack(Buf* buf, const uint32_t* values, int bits) noexcept nogil:
    """Append 128 values of ``bits`` bits in BitPacker4x's layout (lanes of u32 words)."""
    cdef uint8_t* out
    cdef uint64_t acc
    cdef int lane, i, filled, word
    if bits == 0:
        return 0
    if _reserve(buf, 16 * bits):
        return -1
    out = <uint8_t*>buf.data + buf.size
    for lane in range(4):
        acc = 0
        filled = 0
        word = 0
        for i in range(32):
            acc |= (<uint64_t>values[4 * i + lane]) << filled
            filled += bits
            if filled >= 32:
                _store_u32(out + 4 * (4 * word + lane), <uint32_t>acc)
                acc >>= 32
                filled -= 32
                word += 1
    buf.size += 16 * bits
    return 0


cdef void _clear(Buf* buf) noexcept nogil:
    buf.data = NULL
    buf.size = 0
    buf.capacity = 0


cdef inline int _block_max(
    const uint32_t* docs, const uint32_t* freqs, const uint8_t* codes, const float* norms,
    uint8_t* best_code, uint32_t* best_freq,
) noexcept nogil:
    """The (fieldnorm code, frequency) of the block's best BM25 document, the last of equals."""
    cdef int j
    cdef float tf, score, best = 0
    cdef uint8_t code
    for j in range(C_BLOCK):
        code = codes[docs[j]]
        tf = <float>freqs[j]
        score = tf / (tf + norms[code])
        if j == 0 or not score < best:
            best = score
            best_code[0] = code
            best_freq[0] = freqs[j]
    return 0


cdef object _check_starts(const int64_t[::1] starts, Py_ssize_t count, str what):
    cdef Py_ssize_t k, n = starts.shape[0]
    if n == 0 or starts[0] != 0 or starts[n - 1] != count:
        raise SegmentWriteError(f"term starts must run from 0 to the {count} {what}")
    for k in range(1, n):
        if starts[k] < starts[k - 1]:
            raise SegmentWriteError(f"term starts decrease at term {k - 1}")


def postings(
    const int64_t[::1] doc_starts not None,
    const uint32_t[::1] docs not None,
    const uint32_t[::1] term_freqs not None,
    const uint8_t[::1] fieldnorms not None,
    const float[::1] norms not None,
    int record,
):
    """Every term's ``.idx`` postings back to back, without the GIL: (bytes, int64 ends
    with a leading 0, as bytes); see ``_kernels_py.postings``."""
    cdef Py_ssize_t nterms = doc_starts.shape[0] - 1, ndocs = docs.shape[0]
    cdef Py_ssize_t nnorms = fieldnorms.shape[0], t, k, j, start, end
    cdef const uint32_t* d = &docs[0] if ndocs else NULL
    cdef const uint32_t* f = NULL
    cdef const uint8_t* codes = &fieldnorms[0] if nnorms else NULL
    cdef const float* nv = NULL
    cdef uint32_t deltas[C_BLOCK]
    cdef uint32_t last, previous, best_freq = 0, bad = 0
    cdef uint64_t total
    cdef uint8_t best_code = 0
    cdef int bits, error = E_NONE
    cdef Buf out, skip, body, ends
    cdef int64_t at
    if record != C_BASIC and record != C_FREQ and record != C_POSITION:
        raise SegmentWriteError(f"unknown postings record {record}")
    _check_starts(doc_starts, ndocs, "documents")
    if record != C_BASIC:
        if term_freqs.shape[0] != ndocs:
            raise SegmentWriteError(
                f"{term_freqs.shape[0]} term frequencies for {ndocs} documents"
            )
        f = &term_freqs[0] if ndocs else NULL
    if nnorms:
        if norms.shape[0] != 256:
            raise SegmentWriteError(f"{norms.shape[0]} BM25 norms (expected 256)")
        nv = &norms[0]
    _clear(&out)
    _clear(&skip)
    _clear(&body)
    _clear(&ends)
    try:
        with nogil:
            at = 0
            if _put(&ends, &at, 8):
                error = E_MEMORY
            t = 0
            while t < nterms and error == E_NONE:
                start = doc_starts[t]
                end = doc_starts[t + 1]
                for k in range(start + 1, end):
                    if d[k] <= d[k - 1]:
                        error = E_DOCS
                        bad = d[k]
                        break
                if error == E_NONE and nnorms and record != C_BASIC:
                    for k in range(start, end):
                        if d[k] >= nnorms:
                            error = E_NORM
                            bad = d[k]
                            break
                if error == E_NONE and record != C_BASIC:
                    for k in range(start, end):
                        if f[k] == 0:
                            error = E_FREQ
                            bad = d[k]
                            break
                if error != E_NONE:
                    break
                skip.size = 0
                body.size = 0
                last = 0
                k = start
                while end - k >= C_BLOCK and error == E_NONE:
                    deltas[0] = d[k] if k == start else d[k] - last - 1
                    for j in range(1, C_BLOCK):
                        deltas[j] = d[k + j] - d[k + j - 1] - 1
                    bits = _num_bits(deltas)
                    last = d[k + C_BLOCK - 1]
                    if _pack(&body, deltas, bits) or _u32(&skip, last) or _byte(
                        &skip, <uint8_t>(bits | 0x40)
                    ):
                        error = E_MEMORY
                        break
                    if record != C_BASIC:
                        total = 0
                        for j in range(C_BLOCK):
                            deltas[j] = f[k + j] - 1
                            total += f[k + j]
                        bits = _num_bits(deltas)
                        if _pack(&body, deltas, bits) or _byte(&skip, <uint8_t>bits):
                            error = E_MEMORY
                            break
                        if record == C_POSITION:
                            if total > 0xFFFFFFFFu:
                                error = E_SUM
                                bad = d[k]
                                break
                            if _u32(&skip, <uint32_t>total):
                                error = E_MEMORY
                                break
                        best_code = 0
                        best_freq = 0
                        if nnorms:
                            _block_max(d + k, f + k, codes, nv, &best_code, &best_freq)
                        if _byte(&skip, best_code) or _byte(
                            &skip, <uint8_t>(best_freq if best_freq < 255 else 255)
                        ):
                            error = E_MEMORY
                            break
                    k += C_BLOCK
                if error != E_NONE:
                    break
                previous = last
                for j in range(k, end):
                    if _vint(&body, d[j] - previous):
                        error = E_MEMORY
                    previous = d[j]
                if record != C_BASIC:
                    for j in range(k, end):
                        if _vint(&body, f[j]):
                            error = E_MEMORY
                if end - start >= C_BLOCK:
                    if _vint(&out, skip.size) or _put(&out, skip.data, skip.size):
                        error = E_MEMORY
                if _put(&out, body.data, body.size):
                    error = E_MEMORY
                at = out.size
                if _put(&ends, &at, 8):
                    error = E_MEMORY
                t += 1
        if error == E_MEMORY:
            raise MemoryError("encoding postings")
        if error == E_DOCS:
            raise SegmentWriteError(f"postings documents not ascending at {bad}")
        if error == E_NORM:
            raise SegmentWriteError(f"document {bad} has no fieldnorm ({nnorms} documents)")
        if error == E_FREQ:
            raise SegmentWriteError(f"term frequency 0 for document {bad}")
        if error == E_SUM:
            raise SegmentWriteError(f"a block's term frequencies from document {bad} pass 2**32")
        return _take(&out), _take(&ends)
    finally:
        free(out.data)
        free(skip.data)
        free(body.data)
        free(ends.data)


def positions(
    const int64_t[::1] doc_starts not None,
    const uint32_t[::1] term_freqs not None,
    const uint32_t[::1] positions not None,
):
    """Every term's ``.pos`` bytes back to back, without the GIL: (bytes, int64 ends with
    a leading 0, as bytes); see ``_kernels_py.positions``."""
    cdef Py_ssize_t nterms = doc_starts.shape[0] - 1, ndocs = term_freqs.shape[0]
    cdef Py_ssize_t npos = positions.shape[0], t, k, j, count, blocks, b
    cdef const uint32_t* f = &term_freqs[0] if ndocs else NULL
    cdef const uint32_t* p = &positions[0] if npos else NULL
    cdef uint32_t* deltas
    cdef uint32_t previous, bad = 0
    cdef Py_ssize_t at = 0
    cdef int error = E_NONE
    cdef Buf out, scratch, ends
    cdef int64_t end_at
    _check_starts(doc_starts, ndocs, "documents")
    _clear(&out)
    _clear(&scratch)
    _clear(&ends)
    try:
        with nogil:
            end_at = 0
            if _put(&ends, &end_at, 8):
                error = E_MEMORY
            t = 0
            while t < nterms and error == E_NONE:
                scratch.size = 0
                for k in range(doc_starts[t], doc_starts[t + 1]):
                    if at + f[k] > npos:
                        error = E_COUNT
                        break
                    if _reserve(&scratch, 4 * f[k]):
                        error = E_MEMORY
                        break
                    deltas = <uint32_t*>scratch.data + scratch.size // 4
                    previous = 0
                    for j in range(f[k]):
                        if p[at + j] < previous:
                            error = E_POSITIONS
                            bad = p[at + j]
                            break
                        deltas[j] = p[at + j] - previous
                        previous = p[at + j]
                    if error != E_NONE:
                        break
                    at += f[k]
                    scratch.size += 4 * f[k]
                if error != E_NONE:
                    break
                deltas = <uint32_t*>scratch.data
                count = scratch.size // 4
                blocks = count // C_BLOCK
                if _vint(&out, blocks) or _reserve(&out, blocks):
                    error = E_MEMORY
                    break
                for b in range(blocks):
                    out.data[out.size] = <char>_num_bits(deltas + C_BLOCK * b)
                    out.size += 1
                for b in range(blocks):
                    if _pack(&out, deltas + C_BLOCK * b, _num_bits(deltas + C_BLOCK * b)):
                        error = E_MEMORY
                for j in range(C_BLOCK * blocks, count):
                    if _vint(&out, deltas[j]):
                        error = E_MEMORY
                end_at = out.size
                if _put(&ends, &end_at, 8):
                    error = E_MEMORY
                t += 1
            if error == E_NONE and at != npos:
                error = E_COUNT
        if error == E_MEMORY:
            raise MemoryError("encoding positions")
        if error == E_POSITIONS:
            raise SegmentWriteError(f"positions not ascending at {bad}")
        if error == E_COUNT:
            raise SegmentWriteError(
                f"term frequencies do not sum to the {npos} positions"
            )
        return _take(&out), _take(&ends)
    finally:
        free(out.data)
        free(scratch.data)
        free(ends.data)


def invert_tokens(
    const uint32_t[::1] ranks not None,
    const int64_t[::1] rows not None,
    const uint32_t[::1] positions not None,
    Py_ssize_t groups,
):
    """A field's tokens inverted without the GIL (see ``_kernels_py.invert_tokens``):
    (doc_starts int64, docs uint32, term_freqs uint32, positions uint32) as bytes, or
    None when the tokens are not in row then position order."""
    cdef Py_ssize_t n = ranks.shape[0], i, t, k, ndocs = 0, bad = -1
    cdef int64_t* slots = NULL
    cdef int64_t* starts
    cdef uint32_t* docs
    cdef uint32_t* freqs
    cdef uint32_t* placed
    cdef int64_t* placed_rows = NULL
    cdef int64_t running = 0, c, row, previous_row
    cdef bint ordered = True
    cdef int error = E_NONE
    cdef bytes starts_out, docs_out, freqs_out, positions_out
    if rows.shape[0] != n or positions.shape[0] != n:
        raise SegmentWriteError(
            f"{n} token ranks, {rows.shape[0]} rows and {positions.shape[0]} positions"
        )
    if groups < 0:
        raise SegmentWriteError(f"{groups} groups")
    slots = <int64_t*>malloc(8 * (groups + 1))
    placed_rows = <int64_t*>malloc(8 * n + 8)
    if slots == NULL or placed_rows == NULL:
        free(slots)
        free(placed_rows)
        raise MemoryError("invert_tokens")
    starts_out = PyBytes_FromStringAndSize(NULL, 8 * (groups + 1))
    docs_out = PyBytes_FromStringAndSize(NULL, 4 * n)
    freqs_out = PyBytes_FromStringAndSize(NULL, 4 * n)
    positions_out = PyBytes_FromStringAndSize(NULL, 4 * n)
    starts = <int64_t*><char*>starts_out
    docs = <uint32_t*><char*>docs_out
    freqs = <uint32_t*><char*>freqs_out
    placed = <uint32_t*><char*>positions_out
    try:
        with nogil:
            memset(slots, 0, 8 * (groups + 1))
            for i in range(n):
                if ranks[i] >= groups:
                    error = E_COUNT
                    bad = i
                    break
                if rows[i] < 0 or rows[i] > 0xFFFFFFFFLL:
                    error = E_DOCS
                    bad = i
                    break
                if i and (rows[i] < rows[i - 1] or (
                    rows[i] == rows[i - 1] and positions[i] < positions[i - 1]
                )):
                    ordered = False
                slots[ranks[i]] += 1
            if error == E_NONE and ordered:
                for t in range(groups):
                    c = slots[t]
                    slots[t] = running
                    running += c
                slots[groups] = running
                for i in range(n):
                    k = slots[ranks[i]]
                    placed[k] = positions[i]
                    placed_rows[k] = rows[i]
                    slots[ranks[i]] = k + 1
                # slots[t] is now term t's end; term t starts where term t-1 ended.
                i = 0
                for t in range(groups):
                    starts[t] = ndocs
                    previous_row = -1
                    while i < slots[t]:
                        row = placed_rows[i]
                        if row != previous_row:
                            docs[ndocs] = <uint32_t>row
                            freqs[ndocs] = 1
                            ndocs += 1
                            previous_row = row
                        else:
                            freqs[ndocs - 1] += 1
                        i += 1
                starts[groups] = ndocs
        if error == E_COUNT:
            raise SegmentWriteError(f"rank {ranks[bad]} at {bad} is not below {groups}")
        if error == E_DOCS:
            raise SegmentWriteError(f"token row {rows[bad]} is not a u32 document")
        if not ordered:
            return None
        return starts_out, docs_out[: 4 * ndocs], freqs_out[: 4 * ndocs], positions_out
    finally:
        free(slots)
        free(placed_rows)


# LZ4 blocks as lz4_flex makes them (see ``lz4block``; the twin is ``_kernels_py.lz4_block``).

cdef inline uint32_t _lz4_slot(const uint8_t* s, Py_ssize_t pos, bint small) noexcept nogil:
    cdef uint32_t v32
    cdef uint64_t v64 = 0
    cdef int i
    if small:
        v32 = (<uint32_t>s[pos] | (<uint32_t>s[pos + 1] << 8) | (<uint32_t>s[pos + 2] << 16)
               | (<uint32_t>s[pos + 3] << 24))
        return (<uint32_t>(v32 * <uint32_t>2654435761u)) >> 20
    for i in range(8):
        v64 |= (<uint64_t>s[pos + i]) << (8 * i)
    return <uint32_t>(((v64 << 24) * <uint64_t>889523592379ULL) >> 52)


cdef inline Py_ssize_t _lz4_length(uint8_t* out, Py_ssize_t o, Py_ssize_t n) noexcept nogil:
    while n >= 255:
        out[o] = 255
        o += 1
        n -= 255
    out[o] = <uint8_t>n
    return o + 1


cdef Py_ssize_t _lz4_literals(
    const uint8_t* s, Py_ssize_t n, Py_ssize_t start, uint8_t* out, Py_ssize_t o
) noexcept nogil:
    cdef Py_ssize_t length = n - start
    out[o] = <uint8_t>((length if length < 15 else 15) << 4)
    o += 1
    if length >= 15:
        o = _lz4_length(out, o, length - 15)
    memcpy(out + o, s + start, length)
    return o + length


cdef Py_ssize_t _lz4_compress(const uint8_t* s, Py_ssize_t n, uint8_t* out) noexcept nogil:
    cdef uint32_t table[4096]
    cdef bint small = n < 65535
    cdef Py_ssize_t last_check = n - 12, match_end = n - 6
    cdef Py_ssize_t literal_start = 0, cur = 1, next_cur, step, misses, candidate
    cdef Py_ssize_t literals, offset, start, duplicate, o = 0
    cdef uint32_t h
    if n < 13:
        return _lz4_literals(s, n, 0, out, 0)
    memset(table, 0, sizeof(table))
    table[_lz4_slot(s, 0, small)] = 0
    while True:
        misses = 32
        next_cur = cur
        while True:
            step = misses >> 5
            misses += 1
            cur = next_cur
            next_cur += step
            if cur > last_check:
                return _lz4_literals(s, n, literal_start, out, o)
            h = _lz4_slot(s, cur, small)
            candidate = table[h]
            table[h] = <uint32_t>cur
            if cur - candidate > 65535:
                continue
            if memcmp(s + candidate, s + cur, 4) == 0:
                break
        while candidate > 0 and cur > literal_start and s[cur - 1] == s[candidate - 1]:
            cur -= 1
            candidate -= 1
        literals = cur - literal_start
        offset = cur - candidate
        cur += 4
        candidate += 4
        start = cur
        while cur < match_end and s[cur] == s[candidate]:
            cur += 1
            candidate += 1
        duplicate = cur - start
        table[_lz4_slot(s, cur - 2, small)] = <uint32_t>(cur - 2)
        out[o] = <uint8_t>(((literals if literals < 15 else 15) << 4)
                           | (duplicate if duplicate < 15 else 15))
        o += 1
        if literals >= 15:
            o = _lz4_length(out, o, literals - 15)
        memcpy(out + o, s + literal_start, literals)
        o += literals
        out[o] = <uint8_t>(offset & 0xFF)
        out[o + 1] = <uint8_t>(offset >> 8)
        o += 2
        if duplicate >= 15:
            o = _lz4_length(out, o, duplicate - 15)
        literal_start = cur


def lz4_block(const uint8_t[::1] src not None) -> bytes:
    """``src`` as one raw LZ4 block, the bytes ``lz4_flex`` makes (without the GIL)."""
    cdef Py_ssize_t n = src.shape[0]
    # LZ4's worst case: every byte a literal, one length byte per 255.
    cdef Py_ssize_t cap = n + n // 255 + 32
    cdef uint8_t* out = <uint8_t*>malloc(cap)
    cdef Py_ssize_t length
    cdef const uint8_t* s = &src[0] if n else <const uint8_t*>b""
    if out == NULL:
        raise MemoryError("lz4_block: no memory for the output")
    try:
        with nogil:
            length = _lz4_compress(s, n, out)
        return PyBytes_FromStringAndSize(<char*>out, length)
    finally:
        free(out)


cdef inline int _close_block(
    Buf* block, Buf* starts, Buf* out, Buf* ends, Buf* scratch, bint lz4
) noexcept nogil:
    """Close the pending block into ``out`` (compressed or not) and record its
    document count and end byte in ``ends``; 0, or -1 when memory runs out."""
    cdef Py_ssize_t count = starts.size // 4
    cdef Py_ssize_t cap, length
    cdef int64_t pair[2]
    if block.size == 0:
        return 0
    if _put(block, starts.data, starts.size) or _u32(block, <uint32_t>count):
        return -1
    if lz4:
        cap = block.size + block.size // 255 + 32
        if _reserve(scratch, cap):
            return -1
        length = _lz4_compress(<const uint8_t*>block.data, block.size, <uint8_t*>scratch.data)
        if _u32(out, <uint32_t>block.size) or _put(out, scratch.data, length):
            return -1
    elif _put(out, block.data, block.size):
        return -1
    pair[0] = count
    pair[1] = out.size
    if _put(ends, pair, 16):
        return -1
    block.size = 0
    starts.size = 0
    return 0


# A doc-store column width: each row's bytes between its offsets, written without a length.
cdef uint8_t _RAW = 255


def store_blocks(
    const uint8_t[::1] heads not None,
    const uint8_t[::1] widths not None,
    list datas not None,
    list offsets not None,
    list valids not None,
    Py_ssize_t num_docs,
    Py_ssize_t block_size,
    bint lz4,
):
    """The doc store's blocks of ``num_docs`` documents (without the GIL).

    Column ``c`` (in the documents' value order) has the 5-byte head
    ``heads[5c:5c+5]`` (u32 LE field id, type code), one validity byte per row in
    ``valids[c]`` and its values in ``datas[c]``: ``widths[c]`` bytes per row (8 or 1),
    or, for a width of 0, the bytes between the ``int64`` ``offsets[c][row]`` and
    ``offsets[c][row + 1]`` written after their ``VInt`` length (a width of 255: those
    bytes as they are, a value that carries its own framing, such as a JSON object). Returns the blocks
    (each ``[documents][u32 starts][u32 count]``, LZ4 as ``[u32 size][block]`` when
    ``lz4``) and, per block, its ``int64`` document count and end byte.
    """
    cdef Py_ssize_t ncols = widths.shape[0]
    cdef Py_ssize_t c, row, present, n, begin, end
    cdef const uint8_t** data_ptrs = NULL
    cdef const uint8_t** offset_ptrs = NULL
    cdef const uint8_t** valid_ptrs = NULL
    cdef const uint8_t[::1] view
    cdef Buf block, starts, out, ends, scratch
    cdef int failed = 0
    cdef uint8_t width
    cdef const uint8_t* hd = &heads[0] if heads.shape[0] else NULL
    cdef const uint8_t* wd = &widths[0] if ncols else NULL
    if heads.shape[0] != 5 * ncols or len(datas) != ncols or len(offsets) != ncols \
            or len(valids) != ncols:
        raise SegmentWriteError("store_blocks: one head, width, data, offsets and validity per column")
    keep = []
    block.data = starts.data = out.data = ends.data = scratch.data = NULL
    block.size = starts.size = out.size = ends.size = scratch.size = 0
    block.capacity = starts.capacity = out.capacity = ends.capacity = scratch.capacity = 0
    try:
        data_ptrs = <const uint8_t**>malloc((ncols + 1) * sizeof(uint8_t*))
        offset_ptrs = <const uint8_t**>malloc((ncols + 1) * sizeof(uint8_t*))
        valid_ptrs = <const uint8_t**>malloc((ncols + 1) * sizeof(uint8_t*))
        if data_ptrs == NULL or offset_ptrs == NULL or valid_ptrs == NULL:
            raise MemoryError("store_blocks: no memory for the column pointers")
        for c in range(ncols):
            width = wd[c]
            view = valids[c]
            if view.shape[0] != num_docs:
                raise SegmentWriteError(f"store_blocks: column {c}: {view.shape[0]} validity bytes")
            keep.append(view)
            valid_ptrs[c] = &view[0] if num_docs else NULL
            view = datas[c]
            keep.append(view)
            data_ptrs[c] = &view[0] if view.shape[0] else <const uint8_t*>b""
            if width == 0 or width == _RAW:
                n = view.shape[0]
                view = offsets[c]
                if view.shape[0] != 8 * (num_docs + 1):
                    raise SegmentWriteError(f"store_blocks: column {c}: {view.shape[0] // 8} offsets")
                keep.append(view)
                offset_ptrs[c] = &view[0]
                for row in range(num_docs + 1):
                    if not 0 <= _offset(offset_ptrs[c], row) <= n or (
                        row and _offset(offset_ptrs[c], row) < _offset(offset_ptrs[c], row - 1)
                    ):
                        raise SegmentWriteError(f"store_blocks: column {c}: offsets out of order")
            else:
                offset_ptrs[c] = NULL
                if view.shape[0] != width * num_docs:
                    raise SegmentWriteError(f"store_blocks: column {c}: {view.shape[0]} data bytes")
        with nogil:
            for row in range(num_docs):
                if _u32(&starts, <uint32_t>block.size):
                    failed = 1
                    break
                present = 0
                for c in range(ncols):
                    present += valid_ptrs[c][row] != 0
                if _vint(&block, <uint64_t>present):
                    failed = 1
                    break
                for c in range(ncols):
                    if not valid_ptrs[c][row]:
                        continue
                    if _put(&block, hd + 5 * c, 5):
                        failed = 1
                        break
                    width = wd[c]
                    if width == 0:
                        begin = _offset(offset_ptrs[c], row)
                        end = _offset(offset_ptrs[c], row + 1)
                        if _vint(&block, <uint64_t>(end - begin)) or _put(
                            &block, data_ptrs[c] + begin, end - begin
                        ):
                            failed = 1
                            break
                    elif width == _RAW:
                        begin = _offset(offset_ptrs[c], row)
                        end = _offset(offset_ptrs[c], row + 1)
                        if _put(&block, data_ptrs[c] + begin, end - begin):
                            failed = 1
                            break
                    elif _put(&block, data_ptrs[c] + width * row, width):
                        failed = 1
                        break
                if failed:
                    break
                if block.size >= (<Py_ssize_t>1) << 32:
                    failed = 2
                    break
                if block.size + 8 * (starts.size // 4) > block_size:
                    if _close_block(&block, &starts, &out, &ends, &scratch, lz4):
                        failed = 1
                        break
            if not failed and _close_block(&block, &starts, &out, &ends, &scratch, lz4):
                failed = 1
        if failed == 1:
            raise MemoryError("store_blocks: no memory for the doc store")
        if failed == 2:
            raise SegmentWriteError("a document of 4 GiB or more does not fit a store block")
        return _take(&out), _take(&ends)
    finally:
        free(data_ptrs)
        free(offset_ptrs)
        free(valid_ptrs)
        free(block.data)
        free(starts.data)
        free(out.data)
        free(ends.data)
        free(scratch.data)
