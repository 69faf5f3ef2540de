# Included by _decode.pyx (textually, where its ``include`` stands): the
# bounds-checked readers of Avro primitives (zig-zag longs, length-prefixed
# spans and strings, block counts, fixed sizes) that every decoder builds on.
# They use the cimports and ``DecodeError`` of _decode.pyx.


cdef inline int64_t _long(const unsigned char* p, Py_ssize_t n, Py_ssize_t* pos) except? -1:
    cdef Py_ssize_t at = pos[0]
    cdef unsigned char first, b
    cdef uint64_t acc
    cdef int shift
    if at < n:
        first = p[at]
        if not (first & 0x80):  # one-byte varints (short lengths, counts, nulls) dominate
            pos[0] = at + 1
            return <int64_t>((first >> 1) ^ (0 - (first & 1)))
        if n - at >= 10:  # room for the longest varint: no bounds checks
            acc = first & 0x7F
            shift = 7
            at += 1
            while shift <= 63:
                b = p[at]
                at += 1
                acc |= (<uint64_t>(b & 0x7F)) << shift
                if not (b & 0x80):
                    pos[0] = at
                    return <int64_t>((acc >> 1) ^ (<uint64_t>0 - (acc & 1)))
                shift += 7
    return _long_slow(p, n, pos)  # near the end of the block, or too long (it raises)


cdef int64_t _long_slow(const unsigned char* p, Py_ssize_t n, Py_ssize_t* pos) except? -1:
    cdef uint64_t acc = 0
    cdef int shift = 0
    cdef unsigned char b
    cdef Py_ssize_t i = pos[0]
    while True:
        if i >= n:
            raise DecodeError(f"truncated varint at {i}")
        b = p[i]
        i += 1
        acc |= (<uint64_t>(b & 0x7F)) << shift
        if not (b & 0x80):
            pos[0] = i
            return <int64_t>((acc >> 1) ^ (<uint64_t>0 - (acc & 1)))
        shift += 7
        if shift > 63:
            raise DecodeError(f"varint longer than 10 bytes at {i}")


cdef inline Py_ssize_t _span(const unsigned char* p, Py_ssize_t n, Py_ssize_t* pos) except -1:
    """Advance past a length-prefixed run; return its start (pos[0] becomes its end)."""
    cdef Py_ssize_t at = pos[0]
    cdef unsigned char b
    cdef Py_ssize_t size
    if at < n:
        b = p[at]
        if not (b & 0x81):  # a one-byte, non-negative length: most keys and values
            size = b >> 1
            if size <= n - at - 1:
                pos[0] = at + 1 + size
                return at + 1
    return _span_slow(p, n, pos)


cdef Py_ssize_t _span_slow(const unsigned char* p, Py_ssize_t n, Py_ssize_t* pos) except -1:
    cdef int64_t size = _long(p, n, pos)
    cdef Py_ssize_t start = pos[0]
    if size < 0 or size > n - start:
        raise DecodeError(f"bad length {size} at {start}")
    pos[0] = start + <Py_ssize_t>size
    return start


cdef inline str _str(const unsigned char* p, Py_ssize_t n, Py_ssize_t* pos):
    cdef Py_ssize_t start = _span(p, n, pos)
    try:
        return PyUnicode_DecodeUTF8(<const char*>p + start, pos[0] - start, NULL)
    except UnicodeDecodeError as exc:
        raise DecodeError(f"invalid UTF-8 at {start}") from exc


cdef inline int64_t _block_count(const unsigned char* p, Py_ssize_t n, Py_ssize_t* pos) except? -1:
    cdef Py_ssize_t at = pos[0]
    cdef unsigned char b
    if at < n:
        b = p[at]
        if not (b & 0x81) and (b >> 1) <= n:  # a one-byte, non-negative, plausible count
            pos[0] = at + 1
            return b >> 1
    return _block_count_slow(p, n, pos)


cdef int64_t _block_count_slow(const unsigned char* p, Py_ssize_t n, Py_ssize_t* pos) except? -1:
    cdef int64_t count = _long(p, n, pos)
    if count < 0:
        _long(p, n, pos)
        if count == INT64_MIN:
            raise DecodeError(f"implausible item count at {pos[0]}")
        count = -count
    if count > n:
        raise DecodeError(f"implausible item count {count} at {pos[0]}")
    return count


cdef inline int _fixed(Py_ssize_t n, Py_ssize_t* pos, Py_ssize_t size) except -1:
    if size > n - pos[0]:
        raise DecodeError(f"truncated at {pos[0]}")
    pos[0] += size
    return 0
