# cython: boundscheck=False, wraparound=False, cdivision=True
"""Cython doc-store kernels; the pure twin ``_kernels_py`` is the specification.

Both must agree exactly (same values, same errors). Scalar decoding runs on a
C pointer; arrays, objects and legacy JSON fall back to the twin's decoder.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcpy

from indextables.search.read.docstore import _kernels_py as _py
from indextables.search.read.docstore.errors import DocStoreError

__all__ = ["decode_block", "lz4_decompress", "read_vint"]

read_vint = _py.read_vint

cdef uint64_t HIGHEST_BIT = (<uint64_t>1) << 63


cdef inline uint32_t _u32(const uint8_t* p) noexcept nogil:
    return p[0] | (<uint32_t>p[1] << 8) | (<uint32_t>p[2] << 16) | (<uint32_t>p[3] << 24)


cdef inline uint64_t _u64(const uint8_t* p) noexcept nogil:
    cdef uint64_t v = 0
    cdef int i
    for i in range(7, -1, -1):
        v = (v << 8) | p[i]
    return v


def lz4_decompress(bytes src, Py_ssize_t size):
    """Decompress one raw LZ4 block that must expand to exactly ``size`` bytes."""
    cdef bytes out = PyBytes_FromStringAndSize(NULL, size)
    cdef uint8_t* dst = <uint8_t*>PyBytes_AS_STRING(out)
    cdef const uint8_t* s = <const uint8_t*>PyBytes_AS_STRING(src)
    cdef Py_ssize_t pos = 0, end = len(src), op = 0, lit, mlen, offset, i, start
    cdef uint8_t token, b
    while pos < end:
        token = s[pos]
        pos += 1
        lit = token >> 4
        if lit == 15:
            while True:
                if pos >= end:
                    raise DocStoreError("doc store: truncated LZ4 literal length")
                b = s[pos]
                pos += 1
                lit += b
                if b != 255:
                    break
        if pos + lit > end:
            raise DocStoreError("doc store: LZ4 literals run past the block")
        if op + lit > size:
            raise DocStoreError("doc store: LZ4 block expands past its declared size")
        memcpy(dst + op, s + pos, lit)
        op += lit
        pos += lit
        if pos >= end:
            break
        if pos + 2 > end:
            raise DocStoreError("doc store: truncated LZ4 match offset")
        offset = s[pos] | (<Py_ssize_t>s[pos + 1] << 8)
        pos += 2
        mlen = token & 15
        if mlen == 15:
            while True:
                if pos >= end:
                    raise DocStoreError("doc store: truncated LZ4 match length")
                b = s[pos]
                pos += 1
                mlen += b
                if b != 255:
                    break
        mlen += 4
        start = op - offset
        if offset == 0 or start < 0:
            raise DocStoreError("doc store: LZ4 match offset outside the output")
        if op + mlen > size:
            raise DocStoreError("doc store: LZ4 block expands past its declared size")
        if offset >= mlen:
            memcpy(dst + op, dst + start, mlen)
        else:
            for i in range(mlen):
                dst[op + i] = dst[start + i]
        op += mlen
    if op != size:
        raise DocStoreError(
            f"doc store: LZ4 block expanded to {op} bytes, its header says {size}"
        )
    return out


cdef inline Py_ssize_t _vint(const uint8_t* p, Py_ssize_t pos, Py_ssize_t end, uint64_t* out) except -1:
    cdef uint64_t result = 0
    cdef int shift = 0
    cdef uint8_t byte
    while True:
        if pos >= end:
            raise DocStoreError("doc store: truncated VInt")
        byte = p[pos]
        pos += 1
        result |= (<uint64_t>(byte & 0x7F)) << shift
        if byte & 0x80:
            out[0] = result
            return pos
        shift += 7
        if shift > 63:
            raise DocStoreError("doc store: VInt longer than 10 bytes")


cdef inline int _need(Py_ssize_t pos, Py_ssize_t n, Py_ssize_t end) except -1:
    if pos + n > end:
        raise DocStoreError("doc store: value runs past the end of its document")
    return 0


cdef double _u64_to_f64(uint64_t bits) noexcept nogil:
    cdef double d
    if bits & HIGHEST_BIT:
        bits = bits ^ HIGHEST_BIT
    else:
        bits = ~bits
    memcpy(&d, &bits, 8)
    return d


def decode_block(bytes block, list doc_positions, dict slots, Py_ssize_t num_slots, int version):
    """Same contract as ``_kernels_py.decode_block``."""
    cdef const uint8_t* p = <const uint8_t*>PyBytes_AS_STRING(block)
    cdef Py_ssize_t size = len(block), index_start, start, end, pos, n, i, k
    cdef uint32_t count, field
    cdef uint64_t nvals, ln
    cdef uint8_t code, bb
    cdef int64_t iv
    cdef list rows = [], row
    cdef object slot, value
    if size < 4:
        raise DocStoreError("doc store: block shorter than its doc count")
    count = _u32(p + size - 4)
    index_start = size - 4 * (<Py_ssize_t>count + 1)
    if index_start < 0:
        raise DocStoreError("doc store: block doc count larger than the block")
    for obj in doc_positions:
        k = obj
        if k < 0 or k >= count:
            raise DocStoreError(f"doc store: doc position {k} outside its block of {count}")
        start = _u32(p + index_start + 4 * k)
        end = _u32(p + index_start + 4 * (k + 1)) if k + 1 < count else index_start
        if start > end or end > index_start:
            raise DocStoreError("doc store: document offsets out of order")
        row = [[] for _ in range(num_slots)]
        pos = _vint(p, start, end, &nvals)
        for i in range(<Py_ssize_t>nvals):
            _need(pos, 4, end)
            field = _u32(p + pos)
            pos += 4
            _need(pos, 1, end)
            code = p[pos]
            if code == 0 or code == 3 or code == 4:
                pos = _vint(p, pos + 1, end, &ln)
                n = <Py_ssize_t>ln
                _need(pos, n, end)
                if code == 4:
                    value = PyBytes_FromStringAndSize(<const char*>(p + pos), n)
                else:
                    try:
                        value = (<const char*>(p + pos))[:n].decode("utf-8")
                    except UnicodeDecodeError as exc:
                        raise DocStoreError(
                            f"doc store: invalid UTF-8 in a stored string ({exc})"
                        ) from exc
                pos += n
            elif code == 1:
                _need(pos + 1, 8, end)
                value = _u64(p + pos + 1)
                pos += 9
            elif code == 2 or code == 5:
                _need(pos + 1, 8, end)
                iv = <int64_t>_u64(p + pos + 1)
                if code == 5 and version < 2:
                    value = iv * 1000
                else:
                    value = iv
                pos += 9
            elif code == 6:
                _need(pos + 1, 8, end)
                value = _u64_to_f64(_u64(p + pos + 1))
                pos += 9
            elif code == 9:
                _need(pos + 1, 1, end)
                bb = p[pos + 1]
                if bb > 1:
                    raise DocStoreError(f"doc store: invalid bool byte {bb}")
                value = bb == 1
                pos += 2
            elif code == 10:
                _need(pos + 1, 16, end)
                value = int.from_bytes((<const char*>(p + pos + 1))[:16], "little")
                pos += 17
            elif code == 11:
                value = None
                pos += 1
            else:
                # Arrays, objects, legacy JSON and unknown codes: the twin decides.
                code, value, pos = _py._read_value(block, pos, end, version)
            slot = slots.get(field)
            if slot is not None:
                (<list>row[slot]).append((code, value))
        if pos != end:
            raise DocStoreError("doc store: document length does not match its values")
        rows.append(row)
    return rows
