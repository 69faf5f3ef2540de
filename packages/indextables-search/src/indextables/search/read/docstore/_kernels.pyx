# cython: boundscheck=False, wraparound=False, cdivision=True
"""Cython doc-store kernels; the pure twin ``_kernels_py`` is the specification.

Both must agree exactly (same buffers, same errors). Values are copied from
the decompressed block straight into C buffers: no Python object per value,
except for JSON objects (and legacy JSON text), which the twin's decoder reads.
"""

from cpython.buffer cimport PyBuffer_FillInfo
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, realloc
from libc.string cimport memcpy, memset

from array import array

from indextables.search.read.docstore import _kernels_py as _py
from indextables.search.read.docstore.errors import DocStoreError

__all__ = [
    "KIND_CODES",
    "NOGIL",
    "Checkpoints",
    "ColumnBuilder",
    "OwnedBuffer",
    "lz4_decompress",
    "read_vint",
]

#: The kernels decompress without the GIL (the decoder may run chunks on threads).
NOGIL = True

read_vint = _py.read_vint
KIND_CODES = _py.KIND_CODES

cdef uint64_t HIGHEST_BIT = (<uint64_t>1) << 63
cdef int64_t MAX_OFFSET = (<int64_t>1 << 31) - 1

cdef enum:
    K_TEXT = 0
    K_U64 = 1
    K_I64 = 2
    K_F64 = 3
    K_BOOL = 4
    K_DATE = 5
    K_BYTES = 6
    K_IP = 7
    K_JSON = 8
    SLACK = 32  # spare bytes past an LZ4 output buffer (16-byte copies)

cdef uint8_t[9] KIND_CODE
KIND_CODE[:] = [0, 1, 2, 6, 9, 5, 4, 10, 13]


cdef void* _grown(void* buffer, Py_ssize_t* capacity, Py_ssize_t wanted) except NULL:
    """``buffer`` of at least ``wanted`` bytes (reallocated, ``capacity`` updated, when short)."""
    cdef void* bigger
    if wanted <= capacity[0] and buffer != NULL:
        return buffer
    bigger = PyMem_Realloc(buffer, wanted if wanted > 0 else 1)
    if bigger == NULL:
        raise MemoryError()
    capacity[0] = wanted
    return bigger


cdef inline uint32_t _u32(const uint8_t* p) noexcept nogil:
    return p[0] | (<uint32_t>p[1] << 8) | (<uint32_t>p[2] << 16) | (<uint32_t>p[3] << 24)


cdef inline uint64_t _u64(const uint8_t* p) noexcept nogil:
    cdef uint64_t v = 0
    cdef int i
    for i in range(7, -1, -1):
        v = (v << 8) | p[i]
    return v


_LZ4_ERRORS = {
    1: "truncated LZ4 literal length",
    2: "LZ4 literals run past the block",
    3: "LZ4 block expands past its declared size",
    4: "truncated LZ4 match offset",
    5: "truncated LZ4 match length",
    6: "LZ4 match offset outside the output",
}


def lz4_decompress(src, Py_ssize_t size):
    """Decompress one raw LZ4 block that must expand to exactly ``size`` bytes.

    The decoding runs without the GIL, so several threads decompress at once.
    """
    cdef const uint8_t[::1] view = src
    cdef const uint8_t* source
    cdef Py_ssize_t length = view.shape[0]
    cdef Py_ssize_t written = 0
    cdef uint8_t* dst
    cdef bytes out
    cdef int code
    if size < 0:
        raise DocStoreError("doc store: negative LZ4 block size")
    dst = <uint8_t*>PyMem_Malloc(size + SLACK)
    if dst == NULL:
        raise MemoryError()
    source = &view[0] if length else <const uint8_t*>dst
    try:
        with nogil:
            code = _lz4(source, length, dst, size, &written)
        if code:
            raise DocStoreError(f"doc store: {_LZ4_ERRORS[code]}")
        if written != size:
            raise DocStoreError(
                f"doc store: LZ4 block expanded to {written} bytes, its header says {size}"
            )
        out = PyBytes_FromStringAndSize(<const char*>dst, size)
    finally:
        PyMem_Free(dst)
    return out


cdef struct _Lz4:
    const uint8_t* s    # the compressed bytes
    Py_ssize_t end      # their length
    Py_ssize_t pos      # next compressed byte
    uint8_t* dst        # the output, SLACK spare bytes past size
    Py_ssize_t size     # the declared uncompressed size
    Py_ssize_t op       # bytes written so far


cdef int _lz4(
    const uint8_t* s, Py_ssize_t end, uint8_t* dst, Py_ssize_t size, Py_ssize_t* written
) noexcept nogil:
    # 0, with the bytes written in *written, or a code of _LZ4_ERRORS.
    cdef _Lz4 st
    cdef int code
    st.s = s
    st.end = end
    st.pos = 0
    st.dst = dst
    st.size = size
    st.op = 0
    code = _lz4_step(&st, size + 1)
    written[0] = st.op
    return code


cdef int _lz4_step(_Lz4* st, Py_ssize_t target) noexcept nogil:
    # Decode whole sequences until st.op >= target or the input ends: 0 or an _LZ4_ERRORS code.
    # LZ4 is sequential, so a block decoded this far holds its first st.op bytes exactly.
    # Short copies write 16 bytes at a time (dst has SLACK spare bytes past size).
    cdef const uint8_t* s = st.s
    cdef uint8_t* dst = st.dst
    cdef Py_ssize_t end = st.end, size = st.size
    cdef Py_ssize_t pos = st.pos, op = st.op, lit, mlen, offset, i, start
    cdef uint8_t token, b
    cdef int code = 0
    while pos < end and op < target:
        token = s[pos]
        pos += 1
        lit = token >> 4
        if lit == 15:
            while True:
                if pos >= end:
                    code = 1
                    break
                b = s[pos]
                pos += 1
                lit += b
                if b != 255:
                    break
            if code:
                break
        if pos + lit > end:
            code = 2
            break
        if op + lit > size:
            code = 3
            break
        if lit <= 16 and pos + 16 <= end:
            memcpy(dst + op, s + pos, 16)
        elif lit <= 32 and pos + 32 <= end:
            memcpy(dst + op, s + pos, 16)
            memcpy(dst + op + 16, s + pos + 16, 16)
        else:
            memcpy(dst + op, s + pos, lit)
        op += lit
        pos += lit
        if pos >= end:
            break
        if pos + 2 > end:
            code = 4
            break
        offset = s[pos] | (<Py_ssize_t>s[pos + 1] << 8)
        pos += 2
        mlen = token & 15
        if mlen == 15:
            while True:
                if pos >= end:
                    code = 5
                    break
                b = s[pos]
                pos += 1
                mlen += b
                if b != 255:
                    break
            if code:
                break
        mlen += 4
        start = op - offset
        if offset == 0 or start < 0:
            code = 6
            break
        if op + mlen > size:
            code = 3
            break
        if offset >= 16:
            i = 0
            while i < mlen:
                memcpy(dst + op + i, dst + start + i, 16)
                i += 16
        elif offset >= 8:
            i = 0
            while i < mlen:
                memcpy(dst + op + i, dst + start + i, 8)
                i += 8
        elif offset == 1:
            memset(dst + op, dst[start], mlen)
        else:
            for i in range(mlen):
                dst[op + i] = dst[start + i]
        op += mlen
    st.pos = pos
    st.op = op
    return code


cdef inline Py_ssize_t _vint_at(
    const uint8_t* p, Py_ssize_t pos, Py_ssize_t avail, uint64_t* out
) noexcept nogil:
    # One VInt of p[:avail] into *out: the next position, -1 when it runs past avail
    # (truncated, or more bytes are needed), -2 when longer than 10 bytes.
    cdef uint64_t result = 0
    cdef int shift = 0
    cdef uint8_t byte
    while True:
        if pos >= avail:
            return -1
        byte = p[pos]
        pos += 1
        result |= (<uint64_t>(byte & 0x7F)) << shift
        if byte & 0x80:
            out[0] = result
            return pos
        shift += 7
        if shift > 63:
            return -2


cdef inline Py_ssize_t _vint(const uint8_t* p, Py_ssize_t pos, Py_ssize_t end, uint64_t* out) except -1:
    # _vint_at, with its failures raised.
    pos = _vint_at(p, pos, end, out)
    if pos == -1:
        raise DocStoreError("doc store: truncated VInt")
    if pos == -2:
        raise DocStoreError("doc store: VInt longer than 10 bytes")
    return pos


cdef inline int _need(Py_ssize_t pos, Py_ssize_t n, Py_ssize_t end) except -1:
    if n < 0 or pos + n > end:
        raise DocStoreError("doc store: value runs past the end of its document")
    return 0


cdef inline uint64_t _f64_bits(uint64_t bits) noexcept nogil:
    if bits & HIGHEST_BIT:
        return bits ^ HIGHEST_BIT
    return ~bits


cdef Py_ssize_t _skip(bytes block, const uint8_t* p, Py_ssize_t pos, Py_ssize_t end, int version) except -1:
    """Same contract as the twin's ``_skip_value``."""
    cdef uint8_t code
    cdef uint64_t n, k
    _need(pos, 1, end)
    code = p[pos]
    pos += 1
    if code == 0 or code == 3 or code == 4:
        pos = _vint(p, pos, end, &n)
        if n > <uint64_t>(end - pos):
            raise DocStoreError("doc store: value runs past the end of its document")
        return pos + <Py_ssize_t>n
    if code == 1 or code == 2 or code == 6 or code == 5:
        _need(pos, 8, end)
        return pos + 8
    if code == 9:
        _need(pos, 1, end)
        return pos + 1
    if code == 10:
        _need(pos, 16, end)
        return pos + 16
    if code == 11:
        return pos
    if code == 12 or code == 13:
        pos = _vint(p, pos, end, &n)
        if code == 13 and n % 2:
            raise DocStoreError("doc store: object with an odd number of keys and values")
        k = 0
        while k < n:
            pos = _skip(block, p, pos, end, version)
            k += 1
        return pos
    return _py._read_value(block, pos - 1, end, version)[2]


cdef Py_ssize_t _value_end(
    const uint8_t* p, Py_ssize_t pos, Py_ssize_t avail, int depth
) noexcept nogil:
    # The end of the value ``[type code][value]`` at pos within p[:avail]: -1 when more
    # bytes are needed, -2 for a code left to the whole-block path (rare kinds, malformed).
    cdef uint8_t code
    cdef uint64_t n, k
    if pos >= avail:
        return -1
    code = p[pos]
    pos += 1
    if code == 0 or code == 3 or code == 4:
        pos = _vint_at(p, pos, avail, &n)
        if pos < 0:
            return pos
        if n > <uint64_t>(avail - pos):
            return -1
        return pos + <Py_ssize_t>n
    if code == 1 or code == 2 or code == 5 or code == 6:
        return pos + 8 if pos + 8 <= avail else -1
    if code == 9:
        return pos + 1 if pos + 1 <= avail else -1
    if code == 10:
        return pos + 16 if pos + 16 <= avail else -1
    if code == 11:
        return pos
    if (code == 12 or code == 13) and depth < 64:
        pos = _vint_at(p, pos, avail, &n)
        if pos < 0:
            return pos
        if code == 13 and n % 2:
            return -2
        k = 0
        while k < n:
            pos = _value_end(p, pos, avail, depth + 1)
            if pos < 0:
                return pos
            k += 1
        return pos
    return -2


cdef Py_ssize_t _doc_end(const uint8_t* p, Py_ssize_t pos, Py_ssize_t avail) noexcept nogil:
    # The end of the document starting at pos, found by skipping its values (the
    # block's doc offsets sit at its end, past what a partial decode has written).
    cdef uint64_t nvals, j = 0
    pos = _vint_at(p, pos, avail, &nvals)
    if pos < 0:
        return pos
    while j < nvals:
        if pos + 5 > avail:
            return -1
        pos = _value_end(p, pos + 4, avail, 0)
        if pos < 0:
            return pos
        j += 1
    return pos


cdef Py_ssize_t _locate(
    const uint8_t* src, Py_ssize_t length, Py_ssize_t size, uint8_t* p,
    Py_ssize_t* bounds, Py_ssize_t m
) noexcept nogil:
    # Decompress one LZ4 block into p only as far as its wanted documents need:
    # bounds[2 * i] holds the i-th wanted document's position in the block (sorted),
    # replaced by its [start, end) in p. The bytes decompressed, or -1 (whole-block path).
    cdef _Lz4 st
    cdef Py_ssize_t i, want, prev = -1, k = 0, pos = 0, start = 0, e
    st.s = src
    st.end = length
    st.pos = 0
    st.dst = p
    st.size = size
    st.op = 0
    for i in range(m):
        want = bounds[2 * i]
        if want != prev:
            while k <= want:
                e = _doc_end(p, pos, st.op)
                if e == -1:
                    if st.op >= size or st.pos >= st.end or _lz4_step(&st, st.op + 2048) != 0:
                        return -1
                    continue
                if e < 0:
                    return -1
                start = pos
                pos = e
                k += 1
            prev = want
        bounds[2 * i] = start
        bounds[2 * i + 1] = pos
    return st.op


cdef Py_ssize_t _locate_whole(
    const uint8_t* src, Py_ssize_t length, Py_ssize_t size, uint8_t* p,
    Py_ssize_t* bounds, Py_ssize_t m
) noexcept nogil:
    # _locate of a block whose last document is wanted (every byte is needed): the block
    # decompressed in one pass, each wanted document found by the doc offsets at its end
    # (no walk over the documents before it), checked as the twin's ``add`` checks them.
    # The bytes decompressed, or -1: the whole-block path with the GIL raises the twin's
    # error then.
    cdef Py_ssize_t written = 0, i, k, index_start, s, e
    cdef uint32_t count
    if size < 4 or _lz4(src, length, p, size, &written) != 0 or written != size:
        return -1
    count = _u32(p + size - 4)
    index_start = size - 4 * (<Py_ssize_t>count + 1)
    if index_start < 0:
        return -1
    for i in range(m):
        k = bounds[2 * i]
        if k < 0 or k >= <Py_ssize_t>count:
            return -1
        s = _u32(p + index_start + 4 * k)
        e = _u32(p + index_start + 4 * (k + 1)) if k + 1 < <Py_ssize_t>count else index_start
        if s > e or e > index_start:
            return -1
        bounds[2 * i] = s
        bounds[2 * i + 1] = e
    return size


cdef struct _Job:
    # One touched block of an add_lz4_parts call, in the order its rows come out.
    const uint8_t* src  # JOB_PARTIAL: the LZ4 body (past its size header); JOB_CACHED: the block
    Py_ssize_t length   # its bytes
    Py_ssize_t size     # JOB_PARTIAL: the declared uncompressed size
    Py_ssize_t hit0     # its first hit's index in the hit bounds
    Py_ssize_t m        # its hits
    int kind            # JOB_PARTIAL, JOB_CACHED or JOB_WHOLE
    bint last           # JOB_PARTIAL: its hits reach the block's last document
    Py_ssize_t group    # its group (part, block, hits) of pass 1


cdef enum:
    JOB_PARTIAL = 0  # decompressed only as far as its last wanted document, without the GIL
    JOB_CACHED = 1   # a cached block's bytes, decoded without the GIL
    JOB_WHOLE = 2    # decompressed whole with the GIL held (cache admission, partial path gave up)
    # Why a run without the GIL stopped (ColumnBuilder._run).
    STOP_DONE = 0
    STOP_SLOW = 1    # a document the GIL path decodes (a rare value, or one to raise about)
    STOP_WHOLE = 2   # a block the GIL path decompresses whole
    STOP_MEMORY = 3
    STOP_OVERFLOW = 4  # a column past 2 GiB
    # _doc_c's answers besides 0.
    DOC_SLOW = 1
    DOC_MEMORY = -1
    DOC_OVERFLOW = -2


cdef struct _CBuf:
    # A growing C buffer (malloc'd: grown without the GIL).
    uint8_t* ptr
    Py_ssize_t size
    Py_ssize_t cap


cdef inline int _cgrow(_CBuf* b, Py_ssize_t extra) noexcept nogil:
    cdef Py_ssize_t need = b.size + extra, cap
    cdef uint8_t* p
    if need <= b.cap:
        return 0
    cap = b.cap * 2
    if cap < need:
        cap = need
    if cap < 256:
        cap = 256
    p = <uint8_t*>realloc(b.ptr, cap)
    if p == NULL:
        return -1
    b.ptr = p
    b.cap = cap
    return 0


cdef inline void _creserve(_CBuf* b, Py_ssize_t extra) noexcept nogil:
    # Room for ``extra`` more bytes, exactly (a reservation: growing by doubling later
    # copied a large buffer several times). Out of memory: nothing reserved (_cgrow reports).
    cdef Py_ssize_t need = b.size + extra
    cdef uint8_t* p
    if extra <= 0 or need <= b.cap:
        return
    p = <uint8_t*>realloc(b.ptr, need)
    if p != NULL:
        b.ptr = p
        b.cap = need


cdef inline int _cput(_CBuf* b, const uint8_t* src, Py_ssize_t n) noexcept nogil:
    if _cgrow(b, n):
        return -1
    memcpy(b.ptr + b.size, src, n)
    b.size += n
    return 0


cdef inline int _cput_value(_CBuf* b, const uint8_t* src, Py_ssize_t n) noexcept nogil:
    # _cput of a string or bytes value of a document (_doc_c's): short ones in 8-byte
    # words, not a memcpy call each (the calls were ~13% of a whole-store read). Reads up
    # to 7 bytes past the value, which a document always has: a block's doc offsets
    # (8 bytes at least) follow its documents, and the partial path's scratch has SLACK.
    cdef uint8_t* dst
    cdef Py_ssize_t i = 0
    cdef uint64_t word
    if n > 64:
        return _cput(b, src, n)
    if _cgrow(b, n + 8):
        return -1
    dst = b.ptr + b.size
    while i < n:
        memcpy(&word, src + i, 8)
        memcpy(dst + i, &word, 8)
        i += 8
    b.size += n
    return 0


cdef inline int _czeros(_CBuf* b, Py_ssize_t n) noexcept nogil:
    if _cgrow(b, n):
        return -1
    memset(b.ptr + b.size, 0, n)
    b.size += n
    return 0


cdef inline int _cput_i32(_CBuf* b, int32_t v) noexcept nogil:
    return _cput(b, <const uint8_t*>&v, 4)


cdef inline int _cput_u64(_CBuf* b, uint64_t v) noexcept nogil:
    return _cput(b, <const uint8_t*>&v, 8)


cdef inline int _cbit(_CBuf* b, Py_ssize_t* count, bint bit) noexcept nogil:
    if count[0] & 7 == 0:
        if _czeros(b, 1):
            return -1
    if bit:
        b.ptr[count[0] >> 3] |= <uint8_t>(1 << (count[0] & 7))
    count[0] += 1
    return 0


cdef bytes _ctake(_CBuf* b):
    if b.ptr == NULL:
        return b""
    return PyBytes_FromStringAndSize(<const char*>b.ptr, b.size)


cdef uint8_t _EMPTY[1]


cdef class OwnedBuffer:
    """A column buffer the kernel built, handed over without a copy (``finish(owned=True)``):
    read-only bytes through the buffer protocol (``pa.py_buffer`` wraps it in place), freed
    with the object."""

    cdef uint8_t* ptr
    cdef Py_ssize_t size

    def __dealloc__(self):
        free(self.ptr)

    def __getbuffer__(self, Py_buffer* view, int flags):
        PyBuffer_FillInfo(view, self, <void*>(self.ptr if self.ptr != NULL else _EMPTY), self.size, 1, flags)

    def __releasebuffer__(self, Py_buffer* view):
        pass

    def __len__(self):
        return self.size

    def isascii(self):
        """Whether every byte is below 0x80 (``bytes.isascii``), eight bytes a step."""
        cdef Py_ssize_t i = 0, n = self.size
        cdef uint64_t word, seen = 0
        cdef uint8_t tail = 0
        with nogil:
            while i + 8 <= n:
                memcpy(&word, self.ptr + i, 8)
                seen |= word
                i += 8
            while i < n:
                tail |= self.ptr[i]
                i += 1
        return (seen & <uint64_t>0x8080808080808080) == 0 and tail < 0x80


cdef object _cown(_CBuf* b):
    # The buffer's bytes as an OwnedBuffer (no copy; trimmed to its size): b is left empty.
    cdef OwnedBuffer out = OwnedBuffer.__new__(OwnedBuffer)
    cdef uint8_t* trimmed
    if b.ptr != NULL and b.cap > b.size + (b.size >> 3) + 4096:
        trimmed = <uint8_t*>realloc(b.ptr, b.size if b.size else 1)
        if trimmed != NULL:
            b.ptr = trimmed
    out.ptr = b.ptr
    out.size = b.size
    b.ptr = NULL
    b.size = 0
    b.cap = 0
    return out


cdef object _cfinal(_CBuf* b, bint owned):
    return _cown(b) if owned else _ctake(b)


cdef struct _CCol:
    # One output column's Arrow buffers and counts (readable and written without the GIL).
    int kind
    bint multi
    bint var
    _CBuf validity
    Py_ssize_t nvalid  # validity bits written
    _CBuf bits
    Py_ssize_t nbits   # bool value bits written
    _CBuf list_offsets
    _CBuf offsets
    _CBuf data
    Py_ssize_t nulls, rows, values


cdef inline int _cend_var(_CCol* c) noexcept nogil:
    # 0, -1 (no memory) or -2 (past 2 GiB of values in one batch).
    if c.data.size > MAX_OFFSET:
        return -2
    return _cput_i32(&c.offsets, <int32_t>c.data.size)


cdef int _cvalid_from_ones(_CCol* c) noexcept nogil:
    # The validity bitmap of a column's first null: every row before it valid. Until then
    # no bitmap is written (most columns never have a null; finish omits it then).
    cdef Py_ssize_t n = c.nvalid, whole = n >> 3
    if _cgrow(&c.validity, whole + 2):
        return -1
    memset(c.validity.ptr, 0xFF, whole)
    if n & 7:
        c.validity.ptr[whole] = <uint8_t>((1 << (n & 7)) - 1)
        whole += 1
    c.validity.size = whole
    return 0


cdef int _cend_row(_CCol* c, Py_ssize_t count) noexcept nogil:
    c.rows += 1
    if count == 0:
        if c.nulls == 0 and _cvalid_from_ones(c):
            return -1
        if _cbit(&c.validity, &c.nvalid, False):
            return -1
        c.nulls += 1
    elif c.nulls == 0:
        c.nvalid += 1
    elif _cbit(&c.validity, &c.nvalid, True):
        return -1
    if c.multi:
        return _cput_i32(&c.list_offsets, <int32_t>c.values)
    if count == 0:
        c.values += 1
        if c.var:
            return _cput_i32(&c.offsets, <int32_t>c.data.size)
        if c.kind == K_BOOL:
            return _cbit(&c.bits, &c.nbits, False)
        if c.kind == K_IP:
            return _czeros(&c.data, 16)
        return _czeros(&c.data, 8)
    return 0


cdef int _cappend(
    _CCol* c, const uint8_t* p, Py_ssize_t pos, Py_ssize_t end, int version
) noexcept nogil:
    # Append the value at p[pos:end] (already checked to fit its document; a string's or
    # bytes' past its length VInt): 0, -1 or -2.
    cdef uint64_t v
    cdef int kind = c.kind
    c.values += 1
    if kind == K_TEXT or kind == K_BYTES:
        if _cput_value(&c.data, p + pos, end - pos):
            return -1
        return _cend_var(c)
    if kind == K_BOOL:
        return _cbit(&c.bits, &c.nbits, p[pos] == 1)
    if kind == K_IP:
        return _cput(&c.data, p + pos, 16)
    v = _u64(p + pos)
    if kind == K_F64:
        v = _f64_bits(v)
    elif kind == K_DATE and version < 2:
        v = v * 1000
    return _cput_u64(&c.data, v)


cdef class _Column:
    cdef _CCol c
    cdef object name
    cdef Py_ssize_t field_id

    def __cinit__(self, int kind, bint multi, object name, Py_ssize_t field_id):
        memset(&self.c, 0, sizeof(_CCol))
        self.c.kind = kind
        self.c.multi = multi
        self.c.var = kind == K_TEXT or kind == K_BYTES or kind == K_JSON
        self.name = name
        self.field_id = field_id
        if multi and _cput_i32(&self.c.list_offsets, 0):
            raise MemoryError()
        if self.c.var and _cput_i32(&self.c.offsets, 0):
            raise MemoryError()

    def __dealloc__(self):
        free(self.c.validity.ptr)
        free(self.c.bits.ptr)
        free(self.c.list_offsets.ptr)
        free(self.c.offsets.ptr)
        free(self.c.data.ptr)

    cdef int _end_var(self) except -1:
        cdef int code = _cend_var(&self.c)
        if code == -2:
            raise self.overflow()
        if code:
            raise MemoryError()
        return 0

    cdef object overflow(self):
        return DocStoreError(
            f"fields: column {self.name!r} holds more than 2 GiB in one batch; "
            "decode fewer documents at a time"
        )

    cdef Py_ssize_t append(self, bytes block, const uint8_t* p, Py_ssize_t pos, Py_ssize_t end, int version) except -1:
        # The GIL path's append: every check raised, JSON values read by the twin's reader.
        cdef uint64_t n, v
        cdef uint8_t b
        cdef int kind = self.c.kind
        cdef bytes text
        cdef int failed = 0
        self.c.values += 1
        if kind == K_TEXT or kind == K_BYTES:
            pos = _vint(p, pos, end, &n)
            if n > <uint64_t>(end - pos):
                raise DocStoreError("doc store: value runs past the end of its document")
            if _cput(&self.c.data, p + pos, <Py_ssize_t>n):
                raise MemoryError()
            self._end_var()
            return pos + <Py_ssize_t>n
        if kind == K_JSON:
            _, value, pos = _py._read_value(block, pos - 1, end, version)
            text = _py.json_text(value)
            if _cput(&self.c.data, <const uint8_t*>PyBytes_AS_STRING(text), PyBytes_GET_SIZE(text)):
                raise MemoryError()
            self._end_var()
            return pos
        if kind == K_BOOL:
            _need(pos, 1, end)
            b = p[pos]
            if b > 1:
                raise DocStoreError(f"doc store: invalid bool byte {b}")
            failed = _cbit(&self.c.bits, &self.c.nbits, b == 1)
            pos += 1
        elif kind == K_IP:
            _need(pos, 16, end)
            failed = _cput(&self.c.data, p + pos, 16)
            pos += 16
        else:
            _need(pos, 8, end)
            v = _u64(p + pos)
            if kind == K_F64:
                v = _f64_bits(v)
            elif kind == K_DATE and version < 2:
                v = v * 1000
            failed = _cput_u64(&self.c.data, v)
            pos += 8
        if failed:
            raise MemoryError()
        return pos

    cdef int end_row(self, Py_ssize_t count) except -1:
        if _cend_row(&self.c, count):
            raise MemoryError()
        return 0

    cdef tuple finish(self, bint owned):
        return (
            self.c.rows,
            self.c.nulls,
            _cfinal(&self.c.validity, owned) if self.c.nulls else None,
            _cfinal(&self.c.list_offsets, owned) if self.c.multi else None,
            _cfinal(&self.c.offsets, owned) if self.c.var else None,
            _cfinal(&self.c.bits if self.c.kind == K_BOOL else &self.c.data, owned),
            self.c.values,
        )


def _int64s(values):
    # A C-contiguous int64 buffer of ``values``: the buffer itself when it is one.
    try:
        return memoryview(values).cast("B").cast("q") if _is_int64s(values) else array("q", values)
    except (TypeError, OverflowError) as exc:
        raise DocStoreError(f"checkpoints: not 64-bit integers ({exc})") from exc


def _is_int64s(values):
    if isinstance(values, memoryview):
        return values.format in ("q", "l") and values.itemsize == 8 and values.ndim == 1 and values.c_contiguous
    return isinstance(values, array) and values.typecode == "q"


cdef class Checkpoints:
    """Same contract as ``_kernels_py.Checkpoints``: one LZ4 store's blocks, read in place.

    The checkpoints are read where they are when they are C ``int64`` buffers (a
    ``StoreIndex``'s are, see ``store.int64s``), else copied into such arrays once.
    """

    cdef const int64_t* doc_starts
    cdef const int64_t* doc_ends
    cdef const int64_t* byte_starts
    cdef const int64_t* byte_ends
    cdef Py_ssize_t n
    cdef int64_t total  # one past the last document (the search's bound)
    cdef const uint8_t[::1] view
    cdef const int64_t[::1] _ds, _de, _bs, _be  # hold the buffers the pointers read
    cdef bint contiguous  # each block starts where the one before ends
    cdef bint blocks_ok  # every block's byte range is inside the data and holds its header

    def __cinit__(self, data, doc_starts, doc_ends, byte_starts, byte_ends):
        cdef Py_ssize_t i, n
        self._ds = _int64s(doc_starts)
        self._de = _int64s(doc_ends)
        self._bs = _int64s(byte_starts)
        self._be = _int64s(byte_ends)
        n = self._ds.shape[0]
        if not (self._de.shape[0] == self._bs.shape[0] == self._be.shape[0] == n):
            raise ValueError("doc_starts, doc_ends, byte_starts and byte_ends differ in length")
        self.view = data
        self.n = n
        if n:
            self.doc_starts = &self._ds[0]
            self.doc_ends = &self._de[0]
            self.byte_starts = &self._bs[0]
            self.byte_ends = &self._be[0]
        self.contiguous = True
        self.blocks_ok = True
        for i in range(n):
            if self.doc_ends[i] <= self.doc_starts[i] or (
                i and self.doc_starts[i] != self.doc_ends[i - 1]
            ):
                self.contiguous = False
            if (self.byte_starts[i] < 0 or self.byte_ends[i] > self.view.shape[0]
                    or self.byte_ends[i] - self.byte_starts[i] < 4):
                self.blocks_ok = False
        self.total = self.doc_ends[n - 1] if n else 0

    cdef inline Py_ssize_t find(self, Py_ssize_t d, Py_ssize_t lo) noexcept nogil:
        # The block holding document d (or the last one starting at or before it), from
        # block lo on. Contiguous blocks of similar document counts: a guess from d's
        # share of the documents, then steps doubling away from it, then a binary
        # search between the last two steps. A plain binary search over a store of
        # ~7,000 blocks missed the CPU cache at most of its 13 probes (~75% of a warm
        # read's kernel time); the guess is usually the block or its neighbour.
        cdef const int64_t* starts = self.doc_starts
        cdef Py_ssize_t n = self.n, hi, g, step
        cdef int64_t total = self.total
        if lo >= n or d < starts[lo]:
            return lo
        hi = n
        if self.contiguous and total > 0 and d < total:
            g = <Py_ssize_t>((<double>d / <double>total) * n)
            if g < lo:
                g = lo
            elif g >= n:
                g = n - 1
            step = 1
            if starts[g] <= d:
                lo = g
                while lo + step < n and starts[lo + step] <= d:
                    lo += step
                    step <<= 1
                hi = lo + step if lo + step < n else n
            else:
                hi = g
                while hi - step > lo and starts[hi - step] > d:
                    hi -= step
                    step <<= 1
                if hi - step > lo:
                    lo = hi - step
        while hi - lo > 1:
            g = (lo + hi) >> 1
            if starts[g] <= d:
                lo = g
            else:
                hi = g
        return lo

    def __len__(self):
        return self.n

    def block_of(self, Py_ssize_t doc, Py_ssize_t lo=0):
        """Same contract as ``_kernels_py.Checkpoints.block_of``."""
        if lo < 0 or lo > self.n:
            raise ValueError("lo outside the blocks")
        return self.find(doc, lo) if self.n else lo


cdef Py_ssize_t _block_index(bytes block, uint32_t* count) except -1:
    # Where a decompressed block's doc offsets start (its doc count in ``count``), checked.
    cdef const uint8_t* p = <const uint8_t*>PyBytes_AS_STRING(block)
    cdef Py_ssize_t size = PyBytes_GET_SIZE(block), index_start
    if size < 4:
        raise DocStoreError("doc store: block shorter than its doc count")
    count[0] = _u32(p + size - 4)
    index_start = size - 4 * (<Py_ssize_t>count[0] + 1)
    if index_start < 0:
        raise DocStoreError("doc store: block doc count larger than the block")
    return index_start


cdef class ColumnBuilder:
    """Same contract as ``_kernels_py.ColumnBuilder``."""

    cdef list _cols
    cdef int _version
    cdef Py_ssize_t _nslots
    cdef Py_ssize_t _nmap
    cdef int* _slot_of
    cdef Py_ssize_t* _counts
    cdef _CCol** _ccols
    cdef Py_ssize_t* _vals  # a document's wanted values: (slot, start, end) triples
    cdef Py_ssize_t _vals_cap
    cdef bint _whole_only
    cdef uint8_t* _scratch
    cdef Py_ssize_t _scratch_cap
    cdef Py_ssize_t* _bounds
    cdef Py_ssize_t _bounds_cap
    cdef Py_ssize_t* _groups
    cdef Py_ssize_t _groups_cap
    cdef _Job* _jobs
    cdef Py_ssize_t _jobs_cap
    cdef Py_ssize_t* _ids  # an add_lz4_parts call's doc ids, every part's one after the other
    cdef Py_ssize_t _ids_cap
    cdef Py_ssize_t* _part_base  # each part's first doc id in _ids (one past the last at the end)
    cdef Py_ssize_t _part_base_cap
    # Where the last run without the GIL stopped: job, hit within it, why, the slot past 2 GiB.
    cdef Py_ssize_t _stop_job
    cdef Py_ssize_t _stop_hit
    cdef int _stop_slot
    cdef readonly Py_ssize_t decompressed
    cdef readonly Py_ssize_t whole_blocks
    # Rows of the running add_lz4_parts call, and whether its strings' room is still to
    # reserve (once its first job shows their bytes a row).
    cdef Py_ssize_t _call_rows
    cdef bint _reserve_pending

    def __cinit__(self, kinds, multi, field_ids, names, int version):
        cdef Py_ssize_t i, f
        kinds, multi, field_ids, names = list(kinds), list(multi), list(field_ids), list(names)
        if not (len(kinds) == len(multi) == len(field_ids) == len(names)):
            raise ValueError("kinds, multi, field_ids and names differ in length")
        self._version = version
        self._nslots = len(kinds)
        self._cols = [
            _Column(kinds[i], bool(multi[i]), names[i], field_ids[i]) for i in range(self._nslots)
        ]
        for f in field_ids:
            if f < 0 or f > 0x7FFFFFFF:
                raise DocStoreError(f"fields: field id {f} is not a stored field id")
        self._nmap = (max(field_ids) + 1) if field_ids else 0
        self._slot_of = <int*>PyMem_Malloc(sizeof(int) * (self._nmap + 1))
        self._counts = <Py_ssize_t*>PyMem_Malloc(sizeof(Py_ssize_t) * (self._nslots + 1))
        self._ccols = <_CCol**>PyMem_Malloc(sizeof(_CCol*) * (self._nslots + 1))
        if self._slot_of == NULL or self._counts == NULL or self._ccols == NULL:
            raise MemoryError()
        for i in range(self._nmap):
            self._slot_of[i] = -1
        for i in range(self._nslots):
            f = field_ids[i]
            self._slot_of[f] = <int>i
            # The columns live as long as self._cols holds them: their structs stay put.
            self._ccols[i] = &(<_Column>self._cols[i]).c
        # JSON values are read by the twin's reader, which wants the block's bytes object.
        self._whole_only = any(k == K_JSON for k in kinds)

    def __dealloc__(self):
        PyMem_Free(self._slot_of)
        PyMem_Free(self._counts)
        PyMem_Free(self._ccols)
        free(self._vals)
        PyMem_Free(self._scratch)
        PyMem_Free(self._bounds)
        PyMem_Free(self._groups)
        PyMem_Free(self._jobs)
        PyMem_Free(self._ids)
        PyMem_Free(self._part_base)

    def add(self, bytes block, list doc_ids, Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t first_doc):
        """Append one row per ``doc_ids[lo:hi]``: documents ``doc - first_doc`` of ``block``."""
        self._add_block(block, doc_ids, lo, hi, first_doc)

    cdef int _add_block(
        self, bytes block, list doc_ids, Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t first_doc
    ) except -1:
        cdef Py_ssize_t index_start, i, k
        cdef uint32_t count
        index_start = _block_index(block, &count)
        if lo < 0 or hi > PyList_GET_SIZE(doc_ids):
            raise ValueError("lo/hi outside doc_ids")
        for i in range(lo, hi):
            k = <Py_ssize_t>(<object>PyList_GET_ITEM(doc_ids, i)) - first_doc
            self._add_at(block, index_start, count, k)
        return 0

    cdef int _add_ids(
        self, bytes block, const Py_ssize_t* ids, Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t first_doc
    ) except -1:
        # _add_block of doc ids held in a C array (add_lz4_parts' own, checked in range).
        cdef Py_ssize_t index_start, i
        cdef uint32_t count
        index_start = _block_index(block, &count)
        for i in range(lo, hi):
            self._add_at(block, index_start, count, ids[i] - first_doc)
        return 0

    cdef int _add_at(
        self, bytes block, Py_ssize_t index_start, uint32_t count, Py_ssize_t k
    ) except -1:
        # Append document ``k`` of ``block`` (its doc offsets at ``index_start``) as one row.
        cdef const uint8_t* p = <const uint8_t*>PyBytes_AS_STRING(block)
        cdef Py_ssize_t start, end
        if k < 0 or k >= count:
            raise DocStoreError(f"doc store: doc position {k} outside its block of {count}")
        start = _u32(p + index_start + 4 * k)
        end = _u32(p + index_start + 4 * (k + 1)) if k + 1 < count else index_start
        if start > end or end > index_start:
            raise DocStoreError("doc store: document offsets out of order")
        return self._doc(block, p, start, end)

    cdef int _doc(self, bytes block, const uint8_t* p, Py_ssize_t start, Py_ssize_t end) except -1:
        # Append the document at p[start:end] as one row: by _doc_c when it can, else by
        # _doc_slow. ``block`` is the block's bytes object for the twin's reader of rare
        # values (None when decoded into scratch).
        cdef int code
        if not self._whole_only:
            code = self._doc_c(p, start, end)
            if code == 0:
                return 0
            if code != DOC_SLOW:
                self._raise_stop(STOP_MEMORY if code == DOC_MEMORY else STOP_OVERFLOW)
        return self._doc_slow(block, p, start, end)

    cdef int _raise_stop(self, int why) except -1:
        if why == STOP_OVERFLOW:
            raise (<_Column>self._cols[self._stop_slot]).overflow()
        raise MemoryError()

    cdef int _doc_c(self, const uint8_t* p, Py_ssize_t start, Py_ssize_t end) noexcept nogil:
        # The document at p[start:end] as one row, without the GIL: 0; DOC_SLOW, having
        # written nothing, when it holds anything but well-formed values of the columns'
        # kinds (a rare value, or one to raise about: _doc_slow then decodes it); or
        # DOC_MEMORY / DOC_OVERFLOW (the column in _stop_slot) once writing.
        # Two passes: the first checks every value and notes the wanted ones, the second
        # writes them, so nothing is half-written when the slow path takes over.
        cdef Py_ssize_t pos, s, e, v, nwanted = 0, need
        cdef uint32_t field
        cdef uint64_t nvals, n, j = 0
        cdef uint8_t code
        cdef int slot, kind, failed
        cdef _CCol* c
        cdef Py_ssize_t* grown
        for s in range(self._nslots):
            self._counts[s] = 0
        pos = _vint_at(p, start, end, &nvals)
        if pos < 0:
            return DOC_SLOW
        if nvals > <uint64_t>(end - pos):
            return DOC_SLOW  # every value takes 5 bytes at least
        need = 3 * <Py_ssize_t>nvals
        if need > self._vals_cap:
            grown = <Py_ssize_t*>realloc(self._vals, sizeof(Py_ssize_t) * (need + 16))
            if grown == NULL:
                return DOC_MEMORY
            self._vals = grown
            self._vals_cap = need + 16
        while j < nvals:
            j += 1
            if pos + 5 > end:
                return DOC_SLOW
            field = _u32(p + pos)
            code = p[pos + 4]
            # The common codes inline (strings, bytes, 8-byte values); the rest by _value_end.
            if code == 0 or code == 3 or code == 4:
                v = _vint_at(p, pos + 5, end, &n)
                if v < 0 or n > <uint64_t>(end - v):
                    return DOC_SLOW
                e = v + <Py_ssize_t>n
            elif code == 1 or code == 2 or code == 5 or code == 6:
                v = pos + 5
                e = v + 8
                if e > end:
                    return DOC_SLOW
            else:
                v = pos + 5
                e = _value_end(p, pos + 4, end, 0)
                if e < 0:
                    return DOC_SLOW
            slot = self._slot_of[field] if field < self._nmap else -1
            if slot >= 0 and code != 11:
                c = self._ccols[slot]
                kind = c.kind
                if code != KIND_CODE[kind]:
                    return DOC_SLOW
                self._counts[slot] += 1
                if not c.multi and self._counts[slot] > 1:
                    return DOC_SLOW
                if kind == K_BOOL and p[pos + 5] > 1:
                    return DOC_SLOW
                self._vals[3 * nwanted] = slot
                self._vals[3 * nwanted + 1] = v
                self._vals[3 * nwanted + 2] = e
                nwanted += 1
            pos = e
        if pos != end:
            return DOC_SLOW
        for s in range(nwanted):
            slot = <int>self._vals[3 * s]
            failed = _cappend(
                self._ccols[slot], p, self._vals[3 * s + 1], self._vals[3 * s + 2], self._version
            )
            if failed:
                self._stop_slot = slot
                return DOC_MEMORY if failed == -1 else DOC_OVERFLOW
        for s in range(self._nslots):
            c = self._ccols[s]
            if self._counts[s] == 1 and c.nulls == 0 and not c.multi:
                c.rows += 1  # _cend_row of a single value while the column has no null
                c.nvalid += 1
            elif _cend_row(c, self._counts[s]):
                return DOC_MEMORY
        return 0

    cdef int _doc_slow(self, bytes block, const uint8_t* p, Py_ssize_t start, Py_ssize_t end) except -1:
        # The document at p[start:end] as one row, every check raised (see _doc).
        cdef Py_ssize_t pos, s
        cdef uint32_t field
        cdef uint64_t nvals, j
        cdef uint8_t code
        cdef int slot
        cdef _Column col
        cdef int version = self._version
        for s in range(self._nslots):
            self._counts[s] = 0
        pos = _vint(p, start, end, &nvals)
        j = 0
        while j < nvals:
            j += 1
            _need(pos, 5, end)
            field = _u32(p + pos)
            code = p[pos + 4]
            slot = self._slot_of[field] if field < self._nmap else -1
            if slot < 0 or code == 11:
                pos = _skip(block, p, pos + 4, end, version)
                continue
            col = <_Column>self._cols[slot]
            if code != KIND_CODE[col.c.kind] and not (col.c.kind == K_JSON and code == 8):
                if code > 13:
                    raise DocStoreError(f"doc store: unknown value type code {code}")
                raise DocStoreError(
                    f"fields: field {col.field_id} ({col.name!r}) holds a value of "
                    f"type code {code}, not {_py.KIND_NAMES[col.c.kind]}"
                )
            self._counts[slot] += 1
            if not col.c.multi and self._counts[slot] > 1:
                pos = _skip(block, p, pos + 4, end, version)
            else:
                pos = col.append(block, p, pos + 5, end, version)
        if pos != end:
            raise DocStoreError("doc store: document length does not match its values")
        for s in range(self._nslots):
            col = <_Column>self._cols[s]
            if not col.c.multi and self._counts[s] > 1:
                raise DocStoreError(
                    f"fields: field {col.field_id} ({col.name!r}) has "
                    f"{self._counts[s]} values; declare it multi=True"
                )
        for s in range(self._nslots):
            (<_Column>self._cols[s]).end_row(self._counts[s])
        return 0

    cdef int _run(self, Py_ssize_t j, Py_ssize_t k, Py_ssize_t njobs, bint located) noexcept nogil:
        # Rows of jobs j.. (from hit k of job j; ``located``: job j's block is in scratch
        # already), without the GIL, until done or a job or document the GIL path takes:
        # STOP_* (where in _stop_job and _stop_hit).
        cdef _Job* job
        cdef Py_ssize_t decoded, h, s, e, count, index_start, pos
        cdef const uint8_t* p
        cdef int code
        while j < njobs:
            job = &self._jobs[j]
            if job.kind == JOB_WHOLE:
                self._stop_job = j
                self._stop_hit = 0
                return STOP_WHOLE
            if job.kind == JOB_PARTIAL:
                if not located:
                    if job.last:
                        decoded = _locate_whole(
                            job.src, job.length, job.size, self._scratch,
                            &self._bounds[2 * job.hit0], job.m
                        )
                    else:
                        decoded = _locate(
                            job.src, job.length, job.size, self._scratch,
                            &self._bounds[2 * job.hit0], job.m
                        )
                    if decoded < 0:
                        job.kind = JOB_WHOLE
                        self._stop_job = j
                        self._stop_hit = 0
                        return STOP_WHOLE
                    self.decompressed += decoded
                p = self._scratch
                while k < job.m:
                    h = 2 * (job.hit0 + k)
                    code = self._doc_c(p, self._bounds[h], self._bounds[h + 1])
                    if code:
                        self._stop_job = j
                        self._stop_hit = k
                        if code == DOC_SLOW:
                            return STOP_SLOW
                        return STOP_MEMORY if code == DOC_MEMORY else STOP_OVERFLOW
                    k += 1
            else:  # JOB_CACHED: a block's bytes, its doc offsets at its end
                p = job.src
                index_start = -1
                if job.length < 4:
                    count = -1
                else:
                    count = _u32(p + job.length - 4)
                    index_start = job.length - 4 * (count + 1)
                while k < job.m:
                    self._stop_job = j
                    self._stop_hit = k
                    if count < 0 or index_start < 0:
                        return STOP_SLOW  # the GIL path raises
                    pos = self._bounds[2 * (job.hit0 + k)]
                    if pos < 0 or pos >= count:
                        return STOP_SLOW
                    s = _u32(p + index_start + 4 * pos)
                    e = _u32(p + index_start + 4 * (pos + 1)) if pos + 1 < count else index_start
                    if s > e or e > index_start:
                        return STOP_SLOW
                    code = self._doc_c(p, s, e)
                    if code:
                        if code == DOC_SLOW:
                            return STOP_SLOW
                        return STOP_MEMORY if code == DOC_MEMORY else STOP_OVERFLOW
                    k += 1
            if self._reserve_pending:
                self._reserve_pending = False
                self._reserve_strings(self._call_rows - (job.hit0 + job.m))
            j += 1
            k = 0
            located = False
        return STOP_DONE

    cdef void _reserve_fixed(self, Py_ssize_t rows) noexcept nogil:
        # Room for ``rows`` more rows of every buffer whose bytes a row are known.
        cdef Py_ssize_t s
        cdef _CCol* c
        for s in range(self._nslots):
            c = self._ccols[s]
            if c.nulls:
                _creserve(&c.validity, (rows >> 3) + 2)
            if c.multi:
                _creserve(&c.list_offsets, 4 * rows)
                continue
            if c.var:
                _creserve(&c.offsets, 4 * rows)
            elif c.kind == K_BOOL:
                _creserve(&c.bits, (rows >> 3) + 2)
            else:
                _creserve(&c.data, (16 if c.kind == K_IP else 8) * rows)

    cdef void _reserve_strings(self, Py_ssize_t rows) noexcept nogil:
        # Room for ``rows`` more rows of each string column at its bytes a row so far (+1/8).
        cdef Py_ssize_t s, each
        cdef _CCol* c
        for s in range(self._nslots):
            c = self._ccols[s]
            if c.var and not c.multi and c.rows > 0 and rows > 0:
                each = c.data.size // c.rows + 1
                _creserve(&c.data, rows * each + ((rows * each) >> 3))

    def add_lz4(
        self, data, doc_starts, doc_ends, byte_starts, byte_ends,
        list doc_ids, cache=None, cache_key=None,
    ):
        """Same contract as ``_kernels_py.ColumnBuilder.add_lz4``."""
        self.add_lz4_parts(
            [(Checkpoints(data, doc_starts, doc_ends, byte_starts, byte_ends), doc_ids, cache_key)],
            cache,
        )

    def add_lz4_parts(self, list parts, cache=None):
        """Same contract as ``_kernels_py.ColumnBuilder.add_lz4_parts``.

        Each block is decompressed into one reused buffer and only as far as its
        last wanted document: LZ4 is sequential, and the documents before a
        wanted one are skipped by their values' lengths. The cache is asked
        once for every touched block of every part, not once per block or part.
        The blocks are found by binary search over the checkpoints' C arrays (a
        tuple of Python ints cost a cache miss per probe: ~80% of a warm read).
        The blocks decompressed partly and the cached ones are decoded, rows and
        all, in stretches without the GIL (chunks of one decode on threads run at
        once); only a block decompressed whole for the cache (or given up by the
        partial path) and a document holding a rare or malformed value take the
        GIL, in their place in the row order.

        A part's doc ids are a list or a ``range`` (a run of a whole-store read:
        no Python int per document).
        """
        cdef Py_ssize_t nparts = PyList_GET_SIZE(parts), total = 0, p, n, i, hi, block
        cdef Py_ssize_t d, last_doc, bs, be, first, g, ngroups = 0, start, base
        cdef Py_ssize_t j, k, njobs, nhits, largest, h, r0, rstep
        cdef Py_ssize_t* groups
        cdef Py_ssize_t* hits
        cdef Py_ssize_t* ids
        cdef Py_ssize_t* part_base
        cdef _Job* jobs
        cdef _Job* job
        cdef const int64_t* starts
        cdef Checkpoints cp
        cdef list listed, answers = None, asks
        cdef object found, part, cache_key, doc_ids
        cdef uint32_t size
        cdef bytes whole
        cdef int why
        cdef bint located
        # Pass 0: every part's doc ids into one C array (each list item read once).
        for p in range(nparts):
            doc_ids = (<tuple>PyList_GET_ITEM(parts, p))[1]
            if type(doc_ids) is range:
                total += len(doc_ids)
            else:
                total += PyList_GET_SIZE(<list?>doc_ids)
        self._ids = <Py_ssize_t*>_grown(
            self._ids, &self._ids_cap, <Py_ssize_t>sizeof(Py_ssize_t) * total
        )
        self._part_base = <Py_ssize_t*>_grown(
            self._part_base, &self._part_base_cap, <Py_ssize_t>sizeof(Py_ssize_t) * (nparts + 1)
        )
        ids = self._ids
        part_base = self._part_base
        base = 0
        for p in range(nparts):
            doc_ids = (<tuple>PyList_GET_ITEM(parts, p))[1]
            part_base[p] = base
            if type(doc_ids) is range:
                n = len(doc_ids)
                if n:
                    r0 = doc_ids.start
                    rstep = doc_ids.step
                    for i in range(n):
                        ids[base + i] = r0 + i * rstep
            else:
                listed = <list>doc_ids
                n = PyList_GET_SIZE(listed)
                for i in range(n):
                    ids[base + i] = <Py_ssize_t>(<object>PyList_GET_ITEM(listed, i))
            base += n
        part_base[nparts] = base
        self._groups = <Py_ssize_t*>_grown(
            self._groups, &self._groups_cap, <Py_ssize_t>sizeof(Py_ssize_t) * 4 * total
        )
        groups = self._groups
        asks = []
        # Pass 1: each part's touched blocks and each one's hits doc_ids[lo:hi], checked.
        for p in range(nparts):
            part = <object>PyList_GET_ITEM(parts, p)
            cp = <Checkpoints?>part[0]
            cache_key = part[2]
            base = part_base[p]
            n = part_base[p + 1] - base
            starts = cp.doc_starts
            start = ngroups
            i = 0
            block = 0
            while i < n:
                d = ids[base + i]
                if cp.n == 0:
                    raise DocStoreError(f"doc_ids: {d} outside the store's blocks")
                block = cp.find(d, block)
                # A StoreIndex's doc_ends are its doc_starts one on: the same cache line.
                last_doc = cp.doc_ends[block]
                if d < starts[block] or d >= last_doc:
                    raise DocStoreError(f"doc_ids: {d} outside the store's blocks")
                hi = i + 1
                while hi < n and ids[base + hi] < last_doc:
                    hi += 1
                if not cp.blocks_ok:
                    bs = cp.byte_starts[block]
                    be = cp.byte_ends[block]
                    if bs < 0 or be > cp.view.shape[0] or be - bs < 4:
                        raise DocStoreError(
                            f"doc store: block {block} shorter than its size header"
                        )
                groups[4 * ngroups] = p
                groups[4 * ngroups + 1] = block
                groups[4 * ngroups + 2] = i
                groups[4 * ngroups + 3] = hi
                ngroups += 1
                i = hi
            if cache is not None and ngroups > start:
                asks.append((cache_key, [groups[4 * g + 1] for g in range(start, ngroups)]))
        if asks:
            if len(asks) == 1:
                answers = cache.lookup_many(asks[0][0], asks[0][1])
            else:
                answers = cache.lookup_parts(asks)
        # Pass 2 (GIL held): one job per group, in row order, with its hits' positions in
        # its block (``answers`` keeps the cached blocks' bytes alive meanwhile).
        self._jobs = <_Job*>_grown(self._jobs, &self._jobs_cap, <Py_ssize_t>sizeof(_Job) * ngroups)
        jobs = self._jobs
        self._bounds = <Py_ssize_t*>_grown(
            self._bounds, &self._bounds_cap, <Py_ssize_t>sizeof(Py_ssize_t) * 2 * total
        )
        hits = self._bounds
        nhits = 0
        largest = 0
        for g in range(ngroups):
            found = answers[g] if answers is not None else False
            part = <object>PyList_GET_ITEM(parts, groups[4 * g])
            cp = <Checkpoints>part[0]
            base = part_base[groups[4 * g]]
            block = groups[4 * g + 1]
            i = groups[4 * g + 2]
            hi = groups[4 * g + 3]
            first = cp.doc_starts[block]
            job = &jobs[g]
            job.group = g
            job.hit0 = nhits
            job.m = hi - i
            if type(found) is bytes:
                job.kind = JOB_WHOLE if self._whole_only else JOB_CACHED
                job.src = <const uint8_t*>PyBytes_AS_STRING(<bytes>found)
                job.length = PyBytes_GET_SIZE(<bytes>found)
                job.size = job.length
            elif self._whole_only or found:
                job.kind = JOB_WHOLE
            else:
                bs = cp.byte_starts[block]
                be = cp.byte_ends[block]
                size = _u32(&cp.view[bs])
                job.kind = JOB_PARTIAL
                job.src = &cp.view[bs + 4]
                job.length = be - bs - 4
                job.size = size
                if size > largest:
                    largest = size
            while i < hi:
                hits[2 * nhits] = ids[base + i] - first
                nhits += 1
                i += 1
            job.last = job.kind == JOB_PARTIAL and (
                hits[2 * (nhits - 1)] == cp.doc_ends[block] - first - 1
            )
        njobs = ngroups
        if largest:
            self._scratch = <uint8_t*>_grown(self._scratch, &self._scratch_cap, largest + SLACK)
        # Pass 3: the rows, job by job, in stretches without the GIL; the GIL path takes the
        # jobs and documents those stretches stop at, then the next stretch goes on.
        self._call_rows = nhits
        self._reserve_pending = nhits >= 4096
        if self._reserve_pending:
            with nogil:
                self._reserve_fixed(nhits)
        j = 0
        k = 0
        located = False
        while j < njobs:
            with nogil:
                why = self._run(j, k, njobs, located)
            if why == STOP_DONE:
                break
            if why == STOP_MEMORY or why == STOP_OVERFLOW:
                self._raise_stop(why)
            j = self._stop_job
            k = self._stop_hit
            job = &jobs[j]
            g = job.group
            part = <object>PyList_GET_ITEM(parts, groups[4 * g])
            cp = <Checkpoints>part[0]
            base = part_base[groups[4 * g]]
            block = groups[4 * g + 1]
            i = groups[4 * g + 2]
            hi = groups[4 * g + 3]
            first = cp.doc_starts[block]
            if why == STOP_SLOW:
                if job.kind == JOB_PARTIAL:
                    h = 2 * (job.hit0 + k)
                    self._doc_slow(None, self._scratch, hits[h], hits[h + 1])
                    located = True
                else:
                    self._add_ids(<bytes>answers[g], ids + base, i + k, i + k + 1, first)
                    located = False
                k += 1
                continue
            # STOP_WHOLE: decompressed whole with the GIL (and kept when the cache admits it).
            found = answers[g] if answers is not None else False
            if type(found) is bytes:
                self._add_ids(<bytes>found, ids + base, i, hi, first)
            else:
                bs = cp.byte_starts[block]
                be = cp.byte_ends[block]
                size = _u32(&cp.view[bs])
                whole = lz4_decompress(cp.view[bs + 4 : be], size)
                if found:
                    cache.put((part[2], block), whole)
                self._add_ids(whole, ids + base, i, hi, first)
                self.decompressed += size
                self.whole_blocks += 1
            j += 1
            k = 0
            located = False

    def finish(self, *, bint owned=False):
        """The buffers of every column, in slot order.

        ``owned``: the buffers are handed over as :class:`OwnedBuffer` objects instead of
        copied into bytes (the builder is spent then: call it last).
        """
        return [(<_Column>c).finish(owned) for c in self._cols]
