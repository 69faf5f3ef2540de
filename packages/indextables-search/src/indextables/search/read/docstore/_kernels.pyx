# cython: boundscheck=False, wraparound=False, cdivision=True
"""Cython doc-store kernels; the pure twin ``_kernels_py`` is the specification.

Both must agree exactly (same buffers, same errors). Values are copied from
the decompressed block straight into C buffers: no Python object per value,
except for JSON objects (and legacy JSON text), which the twin's decoder reads.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, realloc
from libc.string cimport memcpy, memset

from array import array

from indextables.search.read.docstore import _kernels_py as _py
from indextables.search.read.docstore.errors import DocStoreError

__all__ = ["KIND_CODES", "NOGIL", "Checkpoints", "ColumnBuilder", "lz4_decompress", "read_vint"]

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


cdef struct _Job:
    # One block whose wanted documents are located without the GIL (add_lz4_parts).
    const uint8_t* src  # the LZ4 body (past its size header)
    Py_ssize_t length   # its bytes
    Py_ssize_t size     # the declared uncompressed size
    Py_ssize_t hit0     # its first hit's index in the hit bounds
    Py_ssize_t m        # its hits
    Py_ssize_t decoded  # bytes decompressed, or -1 (the whole-block path)


cdef Py_ssize_t _locate_jobs(
    _Job* jobs, Py_ssize_t njobs, uint8_t* scratch, Py_ssize_t* hits,
    uint8_t** arena, Py_ssize_t* arena_cap
) noexcept nogil:
    # Locate the wanted documents of every job's block (hits[2 * k] holds a hit's
    # position in its block), copying each one's bytes into the growing arena and
    # replacing its bound by its [start, end) there. The arena bytes used, or -1
    # when the arena cannot grow.
    cdef Py_ssize_t j, i, k, s, e, used = 0, cap
    cdef uint8_t* grown
    cdef _Job* job
    for j in range(njobs):
        job = &jobs[j]
        job.decoded = _locate(job.src, job.length, job.size, scratch, &hits[2 * job.hit0], job.m)
        if job.decoded < 0:
            continue
        for i in range(job.m):
            k = 2 * (job.hit0 + i)
            s = hits[k]
            e = hits[k + 1]
            if used + (e - s) + SLACK > arena_cap[0]:
                cap = 2 * arena_cap[0] + (e - s) + SLACK + 65536
                grown = <uint8_t*>realloc(arena[0], cap)
                if grown == NULL:
                    return -1
                arena[0] = grown
                arena_cap[0] = cap
            memcpy(arena[0] + used, scratch + s, e - s)
            hits[k] = used
            hits[k + 1] = used + (e - s)
            used += e - s
    return used


cdef class _Buf:
    cdef uint8_t* ptr
    cdef Py_ssize_t size
    cdef Py_ssize_t cap

    def __dealloc__(self):
        PyMem_Free(self.ptr)

    cdef inline int grow(self, Py_ssize_t extra) except -1:
        cdef Py_ssize_t need = self.size + extra, cap
        cdef uint8_t* p
        if need <= self.cap:
            return 0
        cap = self.cap * 2
        if cap < need:
            cap = need
        if cap < 256:
            cap = 256
        p = <uint8_t*>PyMem_Realloc(self.ptr, cap)
        if p == NULL:
            raise MemoryError()
        self.ptr = p
        self.cap = cap
        return 0

    cdef inline int put(self, const uint8_t* src, Py_ssize_t n) except -1:
        self.grow(n)
        memcpy(self.ptr + self.size, src, n)
        self.size += n
        return 0

    cdef inline int zeros(self, Py_ssize_t n) except -1:
        self.grow(n)
        memset(self.ptr + self.size, 0, n)
        self.size += n
        return 0

    cdef inline int put_i32(self, int32_t v) except -1:
        self.grow(4)
        memcpy(self.ptr + self.size, &v, 4)
        self.size += 4
        return 0

    cdef inline int put_u64(self, uint64_t v) except -1:
        self.grow(8)
        memcpy(self.ptr + self.size, &v, 8)
        self.size += 8
        return 0

    cdef bytes take(self):
        return PyBytes_FromStringAndSize(<const char*>self.ptr, self.size)


cdef class _Bits:
    cdef _Buf buf
    cdef Py_ssize_t count

    def __cinit__(self):
        self.buf = _Buf()
        self.count = 0

    cdef inline int append(self, bint bit) except -1:
        if self.count & 7 == 0:
            self.buf.zeros(1)
        if bit:
            self.buf.ptr[self.count >> 3] |= <uint8_t>(1 << (self.count & 7))
        self.count += 1
        return 0


cdef class _Column:
    cdef int kind
    cdef bint multi
    cdef object name
    cdef Py_ssize_t field_id
    cdef _Bits validity
    cdef _Bits bits
    cdef _Buf list_offsets
    cdef _Buf offsets
    cdef _Buf data
    cdef Py_ssize_t nulls, rows, values
    cdef bint var

    def __cinit__(self, int kind, bint multi, object name, Py_ssize_t field_id):
        self.kind = kind
        self.multi = multi
        self.name = name
        self.field_id = field_id
        self.validity = _Bits()
        self.bits = _Bits()
        self.list_offsets = _Buf()
        self.offsets = _Buf()
        self.data = _Buf()
        self.nulls = 0
        self.rows = 0
        self.values = 0
        self.var = kind == K_TEXT or kind == K_BYTES or kind == K_JSON
        if multi:
            self.list_offsets.put_i32(0)
        if self.var:
            self.offsets.put_i32(0)

    cdef inline int _end_var(self) except -1:
        if self.data.size > MAX_OFFSET:
            raise DocStoreError(
                f"fields: column {self.name!r} holds more than 2 GiB in one batch; "
                "decode fewer documents at a time"
            )
        self.offsets.put_i32(<int32_t>self.data.size)
        return 0

    cdef Py_ssize_t append(self, bytes block, const uint8_t* p, Py_ssize_t pos, Py_ssize_t end, int version) except -1:
        cdef uint64_t n, v
        cdef uint8_t b
        cdef int kind = self.kind
        cdef bytes text
        self.values += 1
        if kind == K_TEXT or kind == K_BYTES:
            pos = _vint(p, pos, end, &n)
            if n > <uint64_t>(end - pos):
                raise DocStoreError("doc store: value runs past the end of its document")
            self.data.put(p + pos, <Py_ssize_t>n)
            self._end_var()
            return pos + <Py_ssize_t>n
        if kind == K_JSON:
            _, value, pos = _py._read_value(block, pos - 1, end, version)
            text = _py.json_text(value)
            self.data.put(<const uint8_t*>PyBytes_AS_STRING(text), PyBytes_GET_SIZE(text))
            self._end_var()
            return pos
        if kind == K_BOOL:
            _need(pos, 1, end)
            b = p[pos]
            if b > 1:
                raise DocStoreError(f"doc store: invalid bool byte {b}")
            self.bits.append(b == 1)
            return pos + 1
        if kind == K_IP:
            _need(pos, 16, end)
            self.data.put(p + pos, 16)
            return pos + 16
        _need(pos, 8, end)
        v = _u64(p + pos)
        if kind == K_F64:
            v = _f64_bits(v)
        elif kind == K_DATE and version < 2:
            v = v * 1000
        self.data.put_u64(v)
        return pos + 8

    cdef int end_row(self, Py_ssize_t count) except -1:
        self.rows += 1
        self.validity.append(count > 0)
        if count == 0:
            self.nulls += 1
        if self.multi:
            self.list_offsets.put_i32(<int32_t>self.values)
            return 0
        if count == 0:
            self.values += 1
            if self.var:
                self.offsets.put_i32(<int32_t>self.data.size)
            elif self.kind == K_BOOL:
                self.bits.append(False)
            elif self.kind == K_IP:
                self.data.zeros(16)
            else:
                self.data.zeros(8)
        return 0

    cdef tuple finish(self):
        return (
            self.rows,
            self.nulls,
            self.validity.buf.take() if self.nulls else None,
            self.list_offsets.take() if self.multi else None,
            self.offsets.take() if self.var else None,
            self.bits.buf.take() if self.kind == K_BOOL else self.data.take(),
            self.values,
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


cdef class ColumnBuilder:
    """Same contract as ``_kernels_py.ColumnBuilder``."""

    cdef list _cols
    cdef int _version
    cdef Py_ssize_t _nslots
    cdef Py_ssize_t _nmap
    cdef int* _slot_of
    cdef Py_ssize_t* _counts
    cdef bint _whole_only
    cdef uint8_t* _scratch
    cdef Py_ssize_t _scratch_cap
    cdef Py_ssize_t* _bounds
    cdef Py_ssize_t _bounds_cap
    cdef Py_ssize_t* _groups
    cdef Py_ssize_t _groups_cap
    cdef _Job* _jobs
    cdef Py_ssize_t _jobs_cap
    cdef uint8_t* _arena
    cdef Py_ssize_t _arena_cap
    cdef readonly Py_ssize_t decompressed
    cdef readonly Py_ssize_t whole_blocks

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
        if self._slot_of == NULL or self._counts == NULL:
            raise MemoryError()
        for i in range(self._nmap):
            self._slot_of[i] = -1
        for i in range(self._nslots):
            f = field_ids[i]
            self._slot_of[f] = <int>i
        # JSON values are read by the twin's reader, which wants the block's bytes object.
        self._whole_only = any(k == K_JSON for k in kinds)

    def __dealloc__(self):
        PyMem_Free(self._slot_of)
        PyMem_Free(self._counts)
        PyMem_Free(self._scratch)
        PyMem_Free(self._bounds)
        PyMem_Free(self._groups)
        PyMem_Free(self._jobs)
        free(self._arena)

    def add(self, bytes block, list doc_ids, Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t first_doc):
        """Append one row per ``doc_ids[lo:hi]``: documents ``doc - first_doc`` of ``block``."""
        self._add_block(block, doc_ids, lo, hi, first_doc)

    cdef int _add_block(
        self, bytes block, list doc_ids, Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t first_doc
    ) except -1:
        cdef const uint8_t* p = <const uint8_t*>PyBytes_AS_STRING(block)
        cdef Py_ssize_t size = PyBytes_GET_SIZE(block), index_start, start, end, pos, k, i, s
        cdef uint32_t count, field
        cdef uint64_t nvals, j
        cdef uint8_t code
        cdef int slot
        cdef _Column col
        cdef int version = self._version
        if size < 4:
            raise DocStoreError("doc store: block shorter than its doc count")
        count = _u32(p + size - 4)
        index_start = size - 4 * (<Py_ssize_t>count + 1)
        if index_start < 0:
            raise DocStoreError("doc store: block doc count larger than the block")
        if lo < 0 or hi > PyList_GET_SIZE(doc_ids):
            raise ValueError("lo/hi outside doc_ids")
        for i in range(lo, hi):
            k = <Py_ssize_t>(<object>PyList_GET_ITEM(doc_ids, i)) - first_doc
            if k < 0 or k >= count:
                raise DocStoreError(f"doc store: doc position {k} outside its block of {count}")
            start = _u32(p + index_start + 4 * k)
            end = _u32(p + index_start + 4 * (k + 1)) if k + 1 < count else index_start
            if start > end or end > index_start:
                raise DocStoreError("doc store: document offsets out of order")
            self._doc(block, p, start, end)
        return 0

    cdef int _doc(self, bytes block, const uint8_t* p, Py_ssize_t start, Py_ssize_t end) except -1:
        # Append the document at p[start:end] as one row. ``block`` is the block's bytes
        # object for the twin's reader of rare values (None when decoded into scratch).
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
            if code != KIND_CODE[col.kind] and not (col.kind == K_JSON and code == 8):
                if code > 13:
                    raise DocStoreError(f"doc store: unknown value type code {code}")
                raise DocStoreError(
                    f"fields: field {col.field_id} ({col.name!r}) holds a value of "
                    f"type code {code}, not {_py.KIND_NAMES[col.kind]}"
                )
            self._counts[slot] += 1
            if not col.multi and self._counts[slot] > 1:
                pos = _skip(block, p, pos + 4, end, version)
            else:
                pos = col.append(block, p, pos + 5, end, version)
        if pos != end:
            raise DocStoreError("doc store: document length does not match its values")
        for s in range(self._nslots):
            col = <_Column>self._cols[s]
            if not col.multi and self._counts[s] > 1:
                raise DocStoreError(
                    f"fields: field {col.field_id} ({col.name!r}) has "
                    f"{self._counts[s]} values; declare it multi=True"
                )
        for s in range(self._nslots):
            (<_Column>self._cols[s]).end_row(self._counts[s])
        return 0

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
        Every block decompressed partly is decompressed, and its wanted documents
        copied out, in one stretch without the GIL; their rows are then built.
        """
        cdef Py_ssize_t nparts = PyList_GET_SIZE(parts), total = 0, p, n, i, hi, block
        cdef Py_ssize_t d, last_doc, bs, be, first, g, ngroups = 0, start
        cdef Py_ssize_t j, k, njobs, nhits, largest, used
        cdef Py_ssize_t* groups
        cdef Py_ssize_t* hits
        cdef _Job* jobs
        cdef _Job* job
        cdef uint8_t* scratch
        cdef const int64_t* starts
        cdef Checkpoints cp
        cdef list doc_ids, answers = None, asks, blocks
        cdef object found, part, cache_key
        cdef uint32_t size
        cdef bytes whole
        for p in range(nparts):
            total += PyList_GET_SIZE((<tuple>PyList_GET_ITEM(parts, p))[1])
        self._groups = <Py_ssize_t*>_grown(
            self._groups, &self._groups_cap, <Py_ssize_t>sizeof(Py_ssize_t) * 4 * total
        )
        groups = self._groups
        asks = []
        # Pass 1: each part's touched blocks and each one's hits doc_ids[lo:hi], checked.
        for p in range(nparts):
            part = <object>PyList_GET_ITEM(parts, p)
            cp = <Checkpoints?>part[0]
            doc_ids = <list?>part[1]
            cache_key = part[2]
            n = PyList_GET_SIZE(doc_ids)
            starts = cp.doc_starts
            start = ngroups
            i = 0
            block = 0
            while i < n:
                d = <Py_ssize_t>(<object>PyList_GET_ITEM(doc_ids, i))
                if cp.n == 0:
                    raise DocStoreError(f"doc_ids: {d} outside the store's blocks")
                block = cp.find(d, block)
                # A StoreIndex's doc_ends are its doc_starts one on: the same cache line.
                last_doc = cp.doc_ends[block]
                if d < starts[block] or d >= last_doc:
                    raise DocStoreError(f"doc_ids: {d} outside the store's blocks")
                hi = i + 1
                while hi < n and <Py_ssize_t>(<object>PyList_GET_ITEM(doc_ids, hi)) < last_doc:
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
        # Pass 2 (GIL held): the blocks to decompress partly, as jobs, their hits' positions.
        self._jobs = <_Job*>_grown(self._jobs, &self._jobs_cap, <Py_ssize_t>sizeof(_Job) * ngroups)
        jobs = self._jobs
        self._bounds = <Py_ssize_t*>_grown(
            self._bounds, &self._bounds_cap, <Py_ssize_t>sizeof(Py_ssize_t) * 2 * total
        )
        hits = self._bounds
        njobs = 0
        nhits = 0
        largest = 0
        for g in range(ngroups):
            found = answers[g] if answers is not None else False
            if self._whole_only or type(found) is bytes or found:
                continue
            part = <object>PyList_GET_ITEM(parts, groups[4 * g])
            cp = <Checkpoints>part[0]
            doc_ids = <list>part[1]
            block = groups[4 * g + 1]
            i = groups[4 * g + 2]
            hi = groups[4 * g + 3]
            first = cp.doc_starts[block]
            bs = cp.byte_starts[block]
            be = cp.byte_ends[block]
            size = _u32(&cp.view[bs])
            jobs[njobs].src = &cp.view[bs + 4]
            jobs[njobs].length = be - bs - 4
            jobs[njobs].size = size
            jobs[njobs].hit0 = nhits
            jobs[njobs].m = hi - i
            jobs[njobs].decoded = -1
            njobs += 1
            while i < hi:
                hits[2 * nhits] = <Py_ssize_t>(<object>PyList_GET_ITEM(doc_ids, i)) - first
                nhits += 1
                i += 1
            if size > largest:
                largest = size
        # Pass 3 (no GIL): every job's block decompressed only as far as its last wanted
        # document, the documents copied out; one GIL hand-over per call, not per block
        # (threads decoding splits at once ran one at a time, swapping the GIL per block).
        if njobs:
            self._scratch = <uint8_t*>_grown(self._scratch, &self._scratch_cap, largest + SLACK)
            scratch = self._scratch
            with nogil:
                used = _locate_jobs(jobs, njobs, scratch, hits, &self._arena, &self._arena_cap)
            if used < 0:
                raise MemoryError()
        # Pass 4 (GIL held): the rows, in order: from the cache, the located documents,
        # or whole blocks (a block admitted to the cache, or one the partial path gave up).
        j = 0
        for g in range(ngroups):
            part = <object>PyList_GET_ITEM(parts, groups[4 * g])
            cp = <Checkpoints>part[0]
            doc_ids = <list>part[1]
            block = groups[4 * g + 1]
            i = groups[4 * g + 2]
            hi = groups[4 * g + 3]
            first = cp.doc_starts[block]
            found = answers[g] if answers is not None else False
            if type(found) is bytes:
                self._add_block(<bytes>found, doc_ids, i, hi, first)
                continue
            if not (self._whole_only or found):
                job = &jobs[j]
                j += 1
                if job.decoded >= 0:
                    self.decompressed += job.decoded
                    for k in range(job.hit0, job.hit0 + job.m):
                        self._doc(None, self._arena, hits[2 * k], hits[2 * k + 1])
                    continue
            bs = cp.byte_starts[block]
            be = cp.byte_ends[block]
            size = _u32(&cp.view[bs])
            whole = lz4_decompress(cp.view[bs + 4 : be], size)
            if found:
                cache.put((part[2], block), whole)
            self._add_block(whole, doc_ids, i, hi, first)
            self.decompressed += size
            self.whole_blocks += 1

    def finish(self):
        """The buffers of every column, in slot order."""
        return [(<_Column>c).finish() for c in self._cols]
