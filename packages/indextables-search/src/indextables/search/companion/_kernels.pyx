# cython: language_level=3, boundscheck=False, wraparound=False
"""Compiled twin of ``_kernels_py``: where Parquet PLAIN byte-array values start."""

from cpython.bytes cimport PyBytes_FromStringAndSize


def byte_array_starts(const unsigned char[:] data, Py_ssize_t count):
    """``count + 1`` little-endian int64 positions: where each of the first ``count``
    PLAIN BYTE_ARRAY values (4-byte length, bytes) starts, then where the last ends.
    Raises ValueError when the values run past ``data``."""
    cdef Py_ssize_t size = data.shape[0]
    cdef Py_ssize_t position = 0
    cdef Py_ssize_t index
    cdef unsigned long long length
    out = PyBytes_FromStringAndSize(NULL, (count + 1) * 8)
    cdef char *target = out
    cdef long long *starts = <long long *> target
    cdef bint short = False
    with nogil:
        for index in range(count):
            if position + 4 > size:
                short = True
                break
            length = (<unsigned long long> data[position]
                      | (<unsigned long long> data[position + 1] << 8)
                      | (<unsigned long long> data[position + 2] << 16)
                      | (<unsigned long long> data[position + 3] << 24))
            starts[index] = position
            position += 4 + <Py_ssize_t> length
            if position > size:
                short = True
                break
        starts[count] = position
    if short:
        raise ValueError("PLAIN byte-array values run past their page")
    return out


# ---------------------------------------------------------------------------
# Cutting a data page down to a few rows (see ``_kernels_py.cut_page``).

from libc.stdlib cimport malloc, free
from libc.string cimport memcpy, memset

cdef extern from *:
    int __builtin_popcount(unsigned int) nogil

# a run longer than this is damage (a page holds at most 2**31 values)
cdef unsigned long long _MAX_RUN = 1ULL << 31

cdef enum:
    _OK = 0
    _DAMAGED = 1
    _TOO_WIDE = 2
    _ROWS = 3
    _INDEX = 4

_MESSAGES = {
    _DAMAGED: "a Parquet page's runs or values run past their page",
    _TOO_WIDE: "a Parquet page's bit width is over 32",
    _ROWS: "the page rows to cut are not sorted, unique and within the page",
    _INDEX: "a Parquet page's dictionary index is past its dictionary",
}


cdef inline int _varint(const unsigned char *data, Py_ssize_t size, Py_ssize_t *position,
                        unsigned long long *out) noexcept nogil:
    cdef unsigned long long value = 0
    cdef int shift = 0
    cdef unsigned char byte
    while True:
        if position[0] >= size or shift > 63:
            return _DAMAGED
        byte = data[position[0]]
        position[0] += 1
        value |= (<unsigned long long> (byte & 0x7F)) << shift
        if not byte & 0x80:
            out[0] = value
            return _OK
        shift += 7


cdef inline int _next_run(const unsigned char *data, Py_ssize_t size, int width,
                          int value_bytes, Py_ssize_t *position, bint *packed,
                          long long *rows, Py_ssize_t *payload,
                          unsigned long long *value) noexcept nogil:
    """One run of an RLE/bit-packed hybrid of bit width ``width`` at ``position``
    (moved past it): a bit-packed run (``packed``; its ``rows`` and where its bits
    start, ``payload``) or a repeated one (its ``rows`` and ``value``)."""
    cdef unsigned long long header, word = 0
    cdef Py_ssize_t span, k
    cdef int status = _varint(data, size, position, &header)
    if status:
        return status
    if header >> 1 >= _MAX_RUN:
        return _DAMAGED
    if header & 1:
        span = <Py_ssize_t> (header >> 1) * width
        if position[0] + span > size:
            return _DAMAGED
        packed[0] = True
        rows[0] = <long long> (header >> 1) * 8
        payload[0] = position[0]
        position[0] += span
        return _OK
    if position[0] + value_bytes > size:
        return _DAMAGED
    for k in range(value_bytes):
        word |= (<unsigned long long> data[position[0] + k]) << (8 * k)
    position[0] += value_bytes
    packed[0] = False
    rows[0] = <long long> (header >> 1)
    value[0] = word
    return _OK


cdef int _hybrid(const unsigned char *data, Py_ssize_t size, int width,
                 const long long *wanted, Py_ssize_t count, long long *out) noexcept nogil:
    """Values at the sorted positions ``wanted`` of an RLE/bit-packed hybrid."""
    cdef Py_ssize_t index = 0, position = 0, payload = 0, byte, last, k
    cdef long long start = 0, size_of_run, bit
    cdef unsigned long long word, mask, value = 0
    cdef int value_bytes = (width + 7) // 8
    cdef int status
    cdef bint packed = False
    if count == 0:
        return _OK
    if width > 32 or width < 0:
        return _TOO_WIDE
    mask = (1ULL << width) - 1
    while index < count:
        status = _next_run(data, size, width, value_bytes, &position, &packed,
                           &size_of_run, &payload, &value)
        if status:
            return status
        if packed:
            while index < count and wanted[index] < start + size_of_run:
                if width:
                    bit = (wanted[index] - start) * width
                    byte = <Py_ssize_t> (bit >> 3)
                    last = <Py_ssize_t> ((bit + width - 1) >> 3)
                    word = 0
                    for k in range(last - byte + 1):
                        word |= (<unsigned long long> data[payload + byte + k]) << (8 * k)
                    out[index] = <long long> ((word >> (bit & 7)) & mask)
                else:
                    out[index] = 0
                index += 1
        else:
            while index < count and wanted[index] < start + size_of_run:
                out[index] = <long long> value
                index += 1
        start += size_of_run
    return _OK


cdef int _levels(const unsigned char *data, Py_ssize_t size, const long long *rows,
                 Py_ssize_t count, long long *picks) noexcept nogil:
    """Per row: -1 when null, else its index among the page's non-null values
    (definition levels of bit width 1)."""
    cdef Py_ssize_t index = 0, position = 0, payload = 0, groups, counted, byte
    cdef long long start = 0, before = 0, size_of_run, offset, ones
    cdef unsigned long long repeated = 0
    cdef unsigned char value
    cdef int status
    cdef bint packed = False
    while index < count:
        status = _next_run(data, size, 1, 1, &position, &packed, &size_of_run, &payload,
                           &repeated)
        if status:
            return status
        if packed:
            groups = <Py_ssize_t> (size_of_run >> 3)
            counted = 0
            ones = 0
            while index < count and rows[index] < start + size_of_run:
                offset = rows[index] - start
                byte = <Py_ssize_t> (offset >> 3)
                while counted < byte:
                    ones += __builtin_popcount(data[payload + counted])
                    counted += 1
                value = data[payload + byte]
                if (value >> (offset & 7)) & 1:
                    picks[index] = before + ones + __builtin_popcount(
                        value & ((1u << (offset & 7)) - 1))
                else:
                    picks[index] = -1
                index += 1
            while counted < groups:
                ones += __builtin_popcount(data[payload + counted])
                counted += 1
            before += ones
        else:
            while index < count and rows[index] < start + size_of_run:
                picks[index] = before + rows[index] - start if repeated else -1
                index += 1
            if repeated:
                before += size_of_run
        start += size_of_run
    return _OK


cdef int _plain_starts(const unsigned char *data, Py_ssize_t size, const long long *wanted,
                       Py_ssize_t count, long long *begin, long long *end) noexcept nogil:
    """Where each wanted PLAIN BYTE_ARRAY value (length prefix included) starts and ends."""
    cdef Py_ssize_t index = 0, position = 0
    cdef long long value = 0
    cdef unsigned long long length
    while index < count:
        if position + 4 > size:
            return _DAMAGED
        length = (<unsigned long long> data[position]
                  | (<unsigned long long> data[position + 1] << 8)
                  | (<unsigned long long> data[position + 2] << 16)
                  | (<unsigned long long> data[position + 3] << 24))
        if <unsigned long long> (size - position - 4) < length:
            return _DAMAGED
        while index < count and wanted[index] == value:
            begin[index] = position
            end[index] = position + 4 + <long long> length
            index += 1
        position += 4 + <Py_ssize_t> length
        value += 1
    return _OK


cdef int _cut(const unsigned char *levels, Py_ssize_t levels_size,
              const unsigned char *values, Py_ssize_t values_size,
              const long long *rows, Py_ssize_t count, long long page_count, bint optional,
              int dictionary_encoded, Py_ssize_t width,
              const unsigned char *dictionary, Py_ssize_t dictionary_size,
              const long long *starts, Py_ssize_t starts_count, Py_ssize_t dictionary_count,
              long long *picks, long long *wanted, long long *begin, long long *end,
              Py_ssize_t *chosen) noexcept nogil:
    cdef Py_ssize_t index, used = 0
    cdef long long previous = -1, item
    cdef int status
    for index in range(count):
        if rows[index] <= previous or rows[index] >= page_count:
            return _ROWS
        previous = rows[index]
    if optional:
        status = _levels(levels, levels_size, rows, count, picks)
        if status:
            return status
    else:
        for index in range(count):
            picks[index] = rows[index]
    for index in range(count):
        if picks[index] >= 0:
            wanted[used] = picks[index]
            used += 1
    chosen[0] = used
    if used == 0:
        return _OK
    if dictionary_encoded:
        if values_size < 1:
            return _DAMAGED
        status = _hybrid(values + 1, values_size - 1, values[0], wanted, used, wanted)
        if status:
            return status
        for index in range(used):
            item = wanted[index]
            if item < 0 or item >= dictionary_count:
                return _INDEX
            if width:
                begin[index] = item * width
                end[index] = begin[index] + width
                if end[index] > dictionary_size:
                    return _DAMAGED
            else:
                if item + 1 >= starts_count:
                    return _INDEX
                begin[index] = starts[item]
                end[index] = starts[item + 1]
                if begin[index] < 0 or end[index] > dictionary_size or end[index] < begin[index]:
                    return _DAMAGED
        return _OK
    if width:
        if (wanted[used - 1] + 1) * width > values_size:
            return _DAMAGED
        for index in range(used):
            begin[index] = wanted[index] * width
            end[index] = begin[index] + width
        return _OK
    return _plain_starts(values, values_size, wanted, used, begin, end)


cdef bytes _level_run(const long long *picks, Py_ssize_t n):
    """One bit-packed run of definition levels (bit width 1): 1 where ``picks`` names
    a value, 0 where it is -1."""
    cdef Py_ssize_t groups = (n + 7) // 8, index
    cdef unsigned long long header = (<unsigned long long> groups) << 1 | 1
    cdef char *target
    cdef unsigned char *bits
    prefix = bytearray()
    while header > 0x7F:
        prefix.append(<unsigned char> ((header & 0x7F) | 0x80))
        header >>= 7
    prefix.append(<unsigned char> header)
    out = PyBytes_FromStringAndSize(NULL, len(prefix) + groups)
    target = out
    for index in range(len(prefix)):
        target[index] = prefix[index]
    bits = <unsigned char *> target + len(prefix)
    with nogil:
        for index in range(groups):
            bits[index] = 0
        for index in range(n):
            if picks[index] >= 0:
                bits[index >> 3] |= <unsigned char> (1 << (index & 7))
    return out


_NO_STARTS = memoryview(b"").cast("q")

cdef enum:
    # Below this many bytes of work a kernel keeps the GIL (see cut_page).
    _RELEASE_BYTES = 65536


def cut_page(const unsigned char[:] levels, const unsigned char[:] values,
             const long long[:] rows, long long count, *, bint optional,
             bint dictionary_encoded, Py_ssize_t width,
             const unsigned char[:] dictionary=None, const long long[:] starts=None,
             Py_ssize_t dictionary_count=0):
    """See ``_kernels_py.cut_page``: ``(levels, values, nulls)`` of the cut page."""
    cdef Py_ssize_t n = rows.shape[0]
    cdef Py_ssize_t chosen = 0, index, total = 0, written = 0
    cdef int status
    cdef const unsigned char *dictionary_data = NULL
    cdef Py_ssize_t dictionary_size = 0, starts_count = 0
    cdef const long long *starts_data = NULL
    cdef const unsigned char *source
    cdef const unsigned char *levels_data = NULL
    cdef const unsigned char *values_data = NULL
    cdef Py_ssize_t levels_size = levels.shape[0], values_size = values.shape[0]
    cdef char *target
    if levels_size:
        levels_data = &levels[0]
    if values_size:
        values_data = &values[0]
    if dictionary is not None and dictionary.shape[0]:
        dictionary_data = &dictionary[0]
        dictionary_size = dictionary.shape[0]
    if starts is not None and starts.shape[0]:
        starts_data = &starts[0]
        starts_count = starts.shape[0]
    if dictionary_encoded and dictionary is None:
        raise ValueError("a dictionary-encoded page needs its dictionary")
    cdef long long *work = <long long *> malloc(sizeof(long long) * (4 * n + 1))
    if work == NULL:
        raise MemoryError()
    cdef long long *picks = work
    cdef long long *wanted = work + n
    cdef long long *begin = work + 2 * n
    cdef long long *end = work + 3 * n
    cdef const long long *wanted_rows = &rows[0] if n else NULL
    try:
        # a small page is cut holding the GIL: releasing it costs a hand-over to the
        # thread waiting for it (~5-10 us each way), more than the cut of a page of a few KB
        if values_size >= _RELEASE_BYTES:
            with nogil:
                status = _cut(levels_data, levels_size, values_data, values_size,
                              wanted_rows, n, count, optional, dictionary_encoded, width,
                              dictionary_data, dictionary_size, starts_data, starts_count,
                              dictionary_count, picks, wanted, begin, end, &chosen)
        else:
            status = _cut(levels_data, levels_size, values_data, values_size,
                          wanted_rows, n, count, optional, dictionary_encoded, width,
                          dictionary_data, dictionary_size, starts_data, starts_count,
                          dictionary_count, picks, wanted, begin, end, &chosen)
        if status:
            raise ValueError(_MESSAGES[status])
        for index in range(chosen):
            total += end[index] - begin[index]
        body = PyBytes_FromStringAndSize(NULL, total)
        target = body
        source = dictionary_data if dictionary_encoded else values_data
        for index in range(chosen):  # the hits' values only: a few bytes, the GIL held
            memcpy(target + written, source + begin[index],
                   <size_t> (end[index] - begin[index]))
            written += end[index] - begin[index]
        level_bytes = _level_run(picks, n) if optional else b""
        return level_bytes, body, n - chosen
    finally:
        free(work)


def hybrid_at(const unsigned char[:] data, int width, const long long[:] wanted):
    """See ``_kernels_py.hybrid_at``: little-endian int64 values at ``wanted``."""
    cdef Py_ssize_t n = wanted.shape[0]
    cdef int status
    out = PyBytes_FromStringAndSize(NULL, n * 8)
    cdef char *target = out
    with nogil:
        status = _hybrid(&data[0] if data.shape[0] else NULL, data.shape[0], width,
                         &wanted[0] if n else NULL, n, <long long *> target)
    if status:
        raise ValueError(_MESSAGES[status])
    return out


# ---------------------------------------------------------------------------
# Parquet page headers (thrift compact protocol; see ``_kernels_py.page_header``).

cdef enum:
    _NO_FIELDS = 10  # struct field ids 0..9 are kept
    _I16 = 4
    _I32 = 5
    _I64 = 6
    _STRUCT = 12

cdef long long _I32_MIN = -2147483648LL
cdef long long _I32_MAX = 2147483647LL


cdef inline int _tvarint(const unsigned char *data, Py_ssize_t size, Py_ssize_t *position,
                         unsigned long long *out, bint *huge) noexcept nogil:
    """An unsigned LEB128 of at most 10 bytes (Thrift's); ``huge``: over 64 bits."""
    cdef unsigned long long value = 0
    cdef int shift = 0, count = 0
    cdef unsigned char byte
    huge[0] = False
    while True:
        if position[0] >= size:
            return _DAMAGED
        byte = data[position[0]]
        position[0] += 1
        if shift < 64:
            value |= (<unsigned long long> (byte & 0x7F)) << shift
            if shift == 63 and byte & 0x7E:
                huge[0] = True
        elif byte & 0x7F:
            huge[0] = True
        if not byte & 0x80:
            out[0] = value
            return _OK
        count += 1
        if count == 10:
            return _DAMAGED
        shift += 7


cdef inline long long _unzigzag(unsigned long long value) noexcept nogil:
    return <long long> (value >> 1) ^ -(<long long> (value & 1))


cdef int _skip(const unsigned char *data, Py_ssize_t size, Py_ssize_t *position, int kind,
               int depth, bint element) noexcept nogil:
    """Move past one value of compact type ``kind`` (``element``: inside a list, where a
    boolean takes a byte)."""
    cdef unsigned long long length
    cdef bint huge
    cdef int status, inner, key_kind, value_kind
    cdef unsigned char header
    cdef unsigned long long index
    if depth > 1000:
        return _DAMAGED
    if kind == 1 or kind == 2:
        if element:
            if position[0] >= size:
                return _DAMAGED
            position[0] += 1
        return _OK
    if kind == 3:
        if position[0] + 1 > size:
            return _DAMAGED
        position[0] += 1
        return _OK
    if kind == _I16 or kind == _I32 or kind == _I64:
        return _tvarint(data, size, position, &length, &huge)
    if kind == 7:
        if position[0] + 8 > size:
            return _DAMAGED
        position[0] += 8
        return _OK
    if kind == 8:
        status = _tvarint(data, size, position, &length, &huge)
        if status:
            return status
        if huge or length > <unsigned long long> (size - position[0]):
            return _DAMAGED
        position[0] += <Py_ssize_t> length
        return _OK
    if kind == 9 or kind == 10:
        if position[0] >= size:
            return _DAMAGED
        header = data[position[0]]
        position[0] += 1
        length = header >> 4
        inner = header & 0x0F
        if length == 15:
            status = _tvarint(data, size, position, &length, &huge)
            if status:
                return status
            if huge:
                return _DAMAGED
        index = 0
        while index < length:
            status = _skip(data, size, position, inner, depth + 1, True)
            if status:
                return status
            index += 1
        return _OK
    if kind == 11:
        status = _tvarint(data, size, position, &length, &huge)
        if status:
            return status
        if huge:
            return _DAMAGED
        if length == 0:
            return _OK
        if position[0] >= size:
            return _DAMAGED
        header = data[position[0]]
        position[0] += 1
        key_kind = header >> 4
        value_kind = header & 0x0F
        index = 0
        while index < length:
            status = _skip(data, size, position, key_kind, depth + 1, True)
            if status:
                return status
            status = _skip(data, size, position, value_kind, depth + 1, True)
            if status:
                return status
            index += 1
        return _OK
    if kind == _STRUCT:
        return _struct_ints(data, size, position, depth + 1, NULL, NULL, NULL, NULL)
    return _DAMAGED


cdef int _struct_ints(const unsigned char *data, Py_ssize_t size, Py_ssize_t *position,
                      int depth, long long *values, char *present, int *kinds,
                      Py_ssize_t *nested_at) noexcept nogil:
    """Walk one struct: its integer and boolean fields 0..9 into ``values``/``present``
    (``kinds``: their compact type; the last occurrence wins); where each field 0..9
    that is a struct starts (``nested_at``: the struct is skipped here), else -1."""
    cdef unsigned char header
    cdef int kind, delta, status
    cdef long long fid = 0, last = 0
    cdef bint last_huge = False, huge
    cdef unsigned long long raw
    if depth > 64:
        return _DAMAGED
    while True:
        if position[0] >= size:
            return _DAMAGED
        header = data[position[0]]
        position[0] += 1
        if header == 0:
            return _OK
        kind = header & 0x0F
        delta = header >> 4
        if delta:
            fid = last + delta
        else:
            status = _tvarint(data, size, position, &raw, &huge)
            if status:
                return status
            last_huge = huge
            fid = _unzigzag(raw)
        if kind == 0 or kind > 12:
            return _DAMAGED
        if values != NULL and not last_huge and 0 <= fid < _NO_FIELDS:
            kinds[fid] = kind
            nested_at[fid] = -1
            if kind == 1 or kind == 2:
                values[fid] = kind == 1
                present[fid] = 1
            elif kind == _I16 or kind == _I32 or kind == _I64:
                status = _tvarint(data, size, position, &raw, &huge)
                if status:
                    return status
                values[fid] = _unzigzag(raw)
                present[fid] = 2 if huge else 1  # 2: over 64 bits
                last = fid
                continue
            elif kind == _STRUCT:
                nested_at[fid] = position[0]
                present[fid] = 0
            else:
                present[fid] = 0
        if kind != 1 and kind != 2:
            status = _skip(data, size, position, kind, depth, False)
            if status:
                return status
        last = fid


cdef class _Fields:
    cdef long long values[_NO_FIELDS]
    cdef char present[_NO_FIELDS]
    cdef int kinds[_NO_FIELDS]
    cdef Py_ssize_t nested_at[_NO_FIELDS]

    cdef int read(self, const unsigned char *data, Py_ssize_t size, Py_ssize_t *position,
                  int depth) noexcept nogil:
        cdef int index
        for index in range(_NO_FIELDS):
            self.present[index] = 0
            self.kinds[index] = 0
            self.nested_at[index] = -1
        return _struct_ints(data, size, position, depth, self.values, self.present,
                            self.kinds, self.nested_at)

    cdef object integer(self, int fid):
        """The field's value when it is an integer in the i32 range (None: absent);
        ValueError when it is out of that range."""
        if self.kinds[fid] != _I16 and self.kinds[fid] != _I32 and self.kinds[fid] != _I64:
            return None
        if not self.present[fid]:
            return None
        if self.present[fid] == 2 or not _I32_MIN <= self.values[fid] <= _I32_MAX:
            raise ValueError(_HEADER_DAMAGED)
        return self.values[fid]


_HEADER_DAMAGED = "a Parquet page header is damaged"


def page_header(const unsigned char[:] data):
    """See ``_kernels_py.page_header``."""
    cdef Py_ssize_t size = data.shape[0], position = 0, inner
    cdef const unsigned char *start = &data[0] if size else NULL
    cdef _Fields top = _Fields(), sub = _Fields()
    cdef int status, which
    status = top.read(start, size, &position, 0)  # a few bytes: the GIL stays held
    if status:
        raise ValueError(_HEADER_DAMAGED)
    kind = top.integer(1)
    if kind is None:
        raise ValueError(_HEADER_DAMAGED)
    uncompressed, compressed = top.integer(2), top.integer(3)
    which = {0: 5, 2: 7, 3: 8}.get(kind, 0)
    if not which:
        return position, kind, uncompressed, compressed, None, None, None, None, None, True
    if top.kinds[which] != _STRUCT:
        raise ValueError(_HEADER_DAMAGED)
    inner = top.nested_at[which]
    status = sub.read(start, size, &inner, 1)
    if status:
        raise ValueError(_HEADER_DAMAGED)
    if kind == 0:
        return (position, kind, uncompressed, compressed, sub.integer(1), sub.integer(2),
                sub.integer(3), None, None, True)
    if kind == 2:
        return (position, kind, uncompressed, compressed, sub.integer(1), sub.integer(2),
                None, None, None, True)
    flag = True
    if sub.kinds[7] == 1 or sub.kinds[7] == 2:
        flag = sub.values[7] != 0
    return (position, kind, uncompressed, compressed, sub.integer(1), sub.integer(4), None,
            sub.integer(5), sub.integer(6), flag)


# ---------------------------------------------------------------------------
# Snappy blocks and the values starting in them (see ``_kernels_py.snappy_blocks``
# and ``block_value_starts``).

SNAPPY_BLOCK = 1 << 16
cdef enum:
    _BLOCK = 65536
    _BLOCK_MASK = 65535
    _BLOCK_BITS = 16


cdef int _snappy_size(const unsigned char *data, Py_ssize_t size, Py_ssize_t *position,
                      unsigned long long *total) noexcept nogil:
    """The stream's preamble (its uncompressed size, a varint of at most 5 bytes)."""
    cdef int shift = 0
    cdef unsigned char byte
    total[0] = 0
    while True:
        if position[0] >= size or shift > 28:
            return 1
        byte = data[position[0]]
        position[0] += 1
        total[0] |= (<unsigned long long> (byte & 0x7F)) << shift
        shift += 7
        if not byte & 0x80:
            return 0


cdef inline long long _le32(const unsigned char *p) noexcept nogil:
    return <long long> (<unsigned long long> p[0] | (<unsigned long long> p[1] << 8)
                        | (<unsigned long long> p[2] << 16) | (<unsigned long long> p[3] << 24))


cdef inline bint _skip_value(const unsigned char *data, long long size,
                             long long *position) noexcept nogil:
    """Move past the PLAIN BYTE_ARRAY value at ``position``; True: its length runs out."""
    if position[0] + 4 > size:
        return True
    position[0] += 4 + _le32(data + position[0])
    return False


cdef inline int _element(const unsigned char *src, Py_ssize_t end, Py_ssize_t *pos,
                         Py_ssize_t *length, Py_ssize_t *back) noexcept nogil:
    """The Snappy element whose tag is at ``pos`` (below ``end``): 0 a literal of
    ``length`` bytes, which then start at ``pos``; 1 a copy of ``length`` bytes from
    ``back`` bytes before; -1 truncated. ``pos`` moves past the tag."""
    cdef unsigned char tag = src[pos[0]]
    cdef Py_ssize_t p = pos[0], extra, k
    cdef unsigned long long value
    if (tag & 3) == 0:
        length[0] = tag >> 2
        if length[0] < 60:
            p += 1
        else:
            extra = length[0] - 59
            if p + 1 + extra > end:
                return -1
            value = 0
            for k in range(extra):
                value |= (<unsigned long long> src[p + 1 + k]) << (8 * k)
            length[0] = <Py_ssize_t> value
            p += 1 + extra
        length[0] += 1
        back[0] = 0
        if length[0] > end - p:
            return -1
        pos[0] = p
        return 0
    if (tag & 3) == 1:
        if p + 2 > end:
            return -1
        length[0] = ((tag >> 2) & 7) + 4
        back[0] = ((<Py_ssize_t> (tag >> 5)) << 8) | src[p + 1]
        pos[0] = p + 2
        return 1
    length[0] = (tag >> 2) + 1
    if (tag & 3) == 2:
        if p + 3 > end:
            return -1
        back[0] = src[p + 1] | (<Py_ssize_t> src[p + 2] << 8)
        pos[0] = p + 3
        return 1
    if p + 5 > end:
        return -1
    back[0] = (src[p + 1] | (<Py_ssize_t> src[p + 2] << 8) | (<Py_ssize_t> src[p + 3] << 16)
               | (<Py_ssize_t> src[p + 4] << 24))
    pos[0] = p + 5
    return 1


cdef int _snappy_walk(const unsigned char *data, Py_ssize_t size, Py_ssize_t position,
                      unsigned long long total, long long *offsets, Py_ssize_t capacity,
                      Py_ssize_t *count) noexcept nogil:
    """0: independent blocks (``offsets`` filled, ``count`` of them); 1: not."""
    cdef Py_ssize_t length, back, found = 0
    cdef long long out = 0, block_start
    cdef int kind
    while position < size:
        if (out & _BLOCK_MASK) == 0 and (out >> _BLOCK_BITS) == found:
            if found >= capacity:
                return 1
            offsets[found] = position
            found += 1
        kind = _element(data, size, &position, &length, &back)
        if kind < 0:
            return 1
        if kind == 0:
            position += length
        block_start = out & ~(<long long> _BLOCK_MASK)
        if kind == 1 and (back == 0 or out - back < block_start):
            return 1
        out += length
        if <unsigned long long> out > total or out - block_start > _BLOCK:
            return 1
    if <unsigned long long> out != total:
        return 1
    count[0] = found
    return 0


def snappy_blocks(const unsigned char[:] data):
    """See ``_kernels_py.snappy_blocks``."""
    cdef Py_ssize_t size = data.shape[0], count = 0, capacity, position = 0
    cdef unsigned long long total = 0
    cdef int status
    cdef const unsigned char *source = &data[0] if size else NULL
    if _snappy_size(source, size, &position, &total):
        return None
    # an element of at most 5 bytes writes at most 64: a larger stated size is damage
    if total > <unsigned long long> size * 64:
        return None
    capacity = <Py_ssize_t> (total >> _BLOCK_BITS) + 1
    cdef long long *offsets = <long long *> malloc(sizeof(long long) * capacity)
    if offsets == NULL:
        raise MemoryError()
    try:
        with nogil:
            status = _snappy_walk(source, size, position, total, offsets, capacity, &count)
        if status:
            return None
        out = PyBytes_FromStringAndSize(<char *> offsets, count * 8)
        return total, out
    finally:
        free(offsets)


def block_value_starts(const unsigned char[:] values, long long at, Py_ssize_t blocks):
    """See ``_kernels_py.block_value_starts``."""
    cdef Py_ssize_t size = values.shape[0], block
    cdef long long position = 0, index = 0, boundary
    cdef bint damaged = False
    cdef const unsigned char *data = &values[0] if size else NULL
    out = PyBytes_FromStringAndSize(NULL, blocks * 16)
    cdef long long *pairs = <long long *> (<char *> out)
    with nogil:
        for block in range(blocks):
            boundary = (<long long> block << _BLOCK_BITS) - at
            if boundary < 0:
                boundary = 0
            while position < boundary and position < size:
                if _skip_value(data, size, &position):
                    damaged = True
                    break
                index += 1
            if damaged or position > size:
                damaged = True
                break
            pairs[2 * block] = index
            pairs[2 * block + 1] = position + at
        while not damaged and position < size:
            if _skip_value(data, size, &position):
                damaged = True
        if position != size:
            damaged = True
    if damaged:
        raise ValueError(_MESSAGES[_DAMAGED])
    return out


# ---------------------------------------------------------------------------
# A mapped page's hits read from the blocks holding them (see ``_kernels_py.mapped_cut``).

from libc.stdlib cimport realloc


cdef enum:
    _SLACK = 32  # bytes past an inflater's output that wide copies may write


cdef struct _Inflater:
    const unsigned char *src
    Py_ssize_t pos
    Py_ssize_t end
    unsigned char *dst
    Py_ssize_t out
    Py_ssize_t cap


cdef int _inflate(_Inflater *s, Py_ssize_t upto) noexcept nogil:
    """Decode Snappy elements until ``upto`` bytes are out; 1: the stream ends first,
    is damaged, or a copy reaches before the output's start."""
    cdef Py_ssize_t length, back, i
    cdef int kind
    if upto > s.cap:
        return 1
    while s.out < upto:
        if s.pos >= s.end:
            return 1
        kind = _element(s.src, s.end, &s.pos, &length, &back)
        if kind < 0 or length > s.cap - s.out:
            return 1
        if kind == 0:
            # a short literal moves as 16 bytes (the output has _SLACK bytes past its
            # end; the input must have them too)
            if length <= 16 and s.end - s.pos >= 16:
                memcpy(s.dst + s.out, s.src + s.pos, 16)
            else:
                memcpy(s.dst + s.out, s.src + s.pos, <size_t> length)
            s.pos += length
        elif back == 0 or back > s.out:
            return 1
        elif back >= 8:
            # 8 bytes at a time: each reads only bytes already written, so an
            # overlapping copy (a repeated pattern) comes out right
            for i in range(0, length, 8):
                memcpy(s.dst + s.out + i, s.dst + s.out - back + i, 8)
        else:
            for i in range(length):
                s.dst[s.out + i] = s.dst[s.out - back + i]
        s.out += length
    return 0


cdef int _mapped(const unsigned char *compressed, Py_ssize_t size, const long long *offsets,
                 Py_ssize_t blocks, const long long *first_value, const long long *first_offset,
                 long long total, const long long *wanted, Py_ssize_t used,
                 long long *homes, unsigned char **body, Py_ssize_t *body_size,
                 Py_ssize_t *body_cap) noexcept nogil:
    """The wanted values appended to ``body``: 0, 1 damage, 5 too many blocks, 6 memory."""
    cdef Py_ssize_t index, low, high, middle, distinct = 0, start, stop, first, last
    cdef long long position, value, length
    cdef _Inflater s
    cdef unsigned char *grown
    for index in range(used):
        low = 0
        high = blocks
        while low < high:  # the last block whose first value is at or before it
            middle = (low + high) >> 1
            if first_value[middle] <= wanted[index]:
                low = middle + 1
            else:
                high = middle
        if low == 0:
            return 1
        homes[index] = low - 1
        if index == 0 or homes[index] != homes[index - 1]:
            distinct += 1
    if 2 * distinct > blocks:
        return 5
    s.src = compressed
    s.end = size
    s.dst = <unsigned char *> malloc(<size_t> (total + _SLACK))
    if s.dst == NULL:
        return 6
    start = 0
    while start < used:
        first = last = homes[start]
        stop = start + 1
        while stop < used and homes[stop] <= last + 1:
            last = homes[stop]
            stop += 1
        if offsets[first] < 0 or offsets[first] > size:
            free(s.dst)
            return 1
        s.pos = <Py_ssize_t> offsets[first]
        s.out = 0
        s.cap = <Py_ssize_t> (total - (<long long> first << _BLOCK_BITS))
        position = first_offset[first] - (<long long> first << _BLOCK_BITS)
        value = first_value[first]
        if position < 0:
            free(s.dst)
            return 1
        for index in range(start, stop):
            while True:
                if _inflate(&s, <Py_ssize_t> (position + 4)):
                    free(s.dst)
                    return 1
                length = _le32(s.dst + position)
                if position + 4 + length > s.cap or _inflate(
                        &s, <Py_ssize_t> (position + 4 + length)):
                    free(s.dst)
                    return 1
                if value == wanted[index]:
                    break
                position += 4 + length
                value += 1
            if body_size[0] + 4 + length > body_cap[0]:
                body_cap[0] = 2 * (body_size[0] + 4 + length)
                grown = <unsigned char *> realloc(body[0], <size_t> body_cap[0])
                if grown == NULL:
                    free(s.dst)
                    return 6
                body[0] = grown
            memcpy(body[0] + body_size[0], s.dst + position, <size_t> (4 + length))
            body_size[0] += 4 + length
            position += 4 + length
            value += 1
        start = stop
    free(s.dst)
    return 0


def snappy_inflate(data, Py_ssize_t size):
    """See ``_kernels_py.snappy_inflate``."""
    cdef const unsigned char[::1] stream = data
    cdef Py_ssize_t length = stream.shape[0], position = 0, at, literal = 0, back = 0
    cdef unsigned long long total = 0
    cdef int status
    cdef _Inflater s
    # a Snappy element yields at most 64 bytes from 3: a larger stated size is damage
    # (refused before allocating it)
    if (length == 0 or _snappy_size(&stream[0], length, &position, &total)
            or total != <unsigned long long> size or size > 32 * length):
        raise ValueError(_SNAPPY_DAMAGED)
    # one literal making the whole output (an incompressible stream of up to 64 KiB, as
    # pages of bit-packed dictionary indices are) is its own output: a view, no copy
    at = position
    if (size and position < length
            and _element(&stream[0], length, &at, &literal, &back) == 0
            and literal == size and at + literal == length):
        return memoryview(data).cast("B")[at : at + size]
    found = bytearray(size + _SLACK)
    cdef unsigned char[::1] target = found
    s.src = &stream[0]
    s.pos = position
    s.end = length
    s.dst = &target[0]
    s.out = 0
    s.cap = size
    if size >= _RELEASE_BYTES:
        with nogil:
            status = _inflate(&s, size)
    else:  # a small page is decoded holding the GIL (see cut_page)
        status = _inflate(&s, size)
    if status or s.out != size or s.pos != length:
        raise ValueError(_SNAPPY_DAMAGED)
    return memoryview(found)[:size]


_SNAPPY_DAMAGED = "a Snappy stream is damaged or not of its stated size"


def mapped_cut(const unsigned char[::1] compressed, const long long[::1] offsets,
               const long long[::1] first_value, const long long[::1] first_offset,
               long long total, const unsigned char[::1] levels, const long long[::1] rows,
               long long count, bint optional):
    """See ``_kernels_py.mapped_cut``."""
    cdef Py_ssize_t n = rows.shape[0], blocks = offsets.shape[0], index, used = 0
    cdef Py_ssize_t body_size = 0, body_cap = 4096
    cdef long long previous = -1
    cdef int status = 0
    if first_value.shape[0] != blocks or first_offset.shape[0] != blocks:
        raise ValueError(_MESSAGES[_DAMAGED])
    for index in range(n):
        if rows[index] <= previous or rows[index] >= count:
            raise ValueError(_MESSAGES[_ROWS])
        previous = rows[index]
    cdef long long *work = <long long *> malloc(sizeof(long long) * (3 * n + 1))
    cdef unsigned char *body = <unsigned char *> malloc(<size_t> body_cap)
    if work == NULL or body == NULL:
        free(work)
        free(body)
        raise MemoryError()
    cdef long long *picks = work
    cdef long long *wanted = work + n
    cdef long long *homes = work + 2 * n
    try:
        with nogil:
            if optional:
                status = _levels(&levels[0] if levels.shape[0] else NULL, levels.shape[0],
                                 &rows[0] if n else NULL, n, picks)
            else:
                for index in range(n):
                    picks[index] = rows[index]
            if not status:
                for index in range(n):
                    if picks[index] >= 0:
                        wanted[used] = picks[index]
                        used += 1
                if used:
                    status = _mapped(&compressed[0] if compressed.shape[0] else NULL,
                                     compressed.shape[0], &offsets[0] if blocks else NULL,
                                     blocks, &first_value[0] if blocks else NULL,
                                     &first_offset[0] if blocks else NULL, total, wanted,
                                     used, homes, &body, &body_size, &body_cap)
        if status == 5:
            return None
        if status == 6:
            raise MemoryError()
        if status:
            raise ValueError(_MESSAGES.get(status, _MESSAGES[_DAMAGED]))
        body_bytes = PyBytes_FromStringAndSize(<char *> body, body_size)
        level_bytes = _level_run(picks, n) if optional else b""
        return level_bytes, body_bytes, n - used
    finally:
        free(work)
        free(body)


# ---------------------------------------------------------------------------
# Cut pages laid out as one Arrow array's buffers (see ``_kernels_py.arrow_parts``).

cdef enum:
    _OFFSETS = 7

_MESSAGES[_OFFSETS] = "cut values over 2 GiB do not fit int32 offsets"


cdef int _lay_out(const unsigned char *body, Py_ssize_t size, const long long *picks,
                  Py_ssize_t rows, Py_ssize_t width, bint large, Py_ssize_t first,
                  unsigned char *bitmap, unsigned char *fixed, unsigned char *data,
                  Py_ssize_t *data_at, void *offsets, Py_ssize_t *present) noexcept nogil:
    """One page's rows from ``first`` on (``picks[i]`` < 0: null): 0, or damage."""
    cdef Py_ssize_t index, position = 0, row
    cdef long long length
    for index in range(rows):
        row = first + index
        if picks[index] >= 0:
            present[0] += 1
            if bitmap != NULL:
                bitmap[row >> 3] |= <unsigned char> (1 << (row & 7))
            if width:
                if position + width > size:
                    return _DAMAGED
                memcpy(fixed + row * width, body + position, <size_t> width)
                position += width
            else:
                if position + 4 > size:
                    return _DAMAGED
                length = _le32(body + position)
                if length > size - position - 4:
                    return _DAMAGED
                memcpy(data + data_at[0], body + position + 4, <size_t> length)
                data_at[0] += length
                position += 4 + length
        elif width:
            memset(fixed + row * width, 0, <size_t> width)
        if not width:
            if large:
                (<long long *> offsets)[row + 1] = data_at[0]
            else:
                (<int *> offsets)[row + 1] = <int> data_at[0]
    if position != size:
        return _DAMAGED
    return _OK


def arrow_parts(list pages, bint optional, Py_ssize_t width, bint large):
    """See ``_kernels_py.arrow_parts``."""
    cdef Py_ssize_t total = 0, bytes_total = 0, rows, nulls, index, first = 0
    cdef Py_ssize_t present = 0, before, data_at = 0, most = 0
    cdef int status = _OK
    cdef const unsigned char[:] levels
    cdef const unsigned char[:] body
    for page in pages:
        rows, nulls = page[0], page[1]
        if rows < 0 or nulls < 0 or nulls > rows:
            raise ValueError(_MESSAGES[_DAMAGED])
        total += rows
        most = max(most, rows)
        bytes_total += len(page[3])
    if not width and not large and bytes_total > 0x7FFFFFFF:
        raise ValueError(_MESSAGES[_OFFSETS])
    bitmap_bytes = PyBytes_FromStringAndSize(NULL, (total + 7) // 8) if optional else None
    cdef unsigned char *bitmap = NULL
    if optional:
        bitmap = <unsigned char *> (<char *> bitmap_bytes)
        memset(bitmap, 0, <size_t> ((total + 7) // 8))
    cdef unsigned char *fixed = NULL
    cdef unsigned char *data = NULL
    cdef void *offsets = NULL
    if width:
        values_bytes = PyBytes_FromStringAndSize(NULL, total * width)
        fixed = <unsigned char *> (<char *> values_bytes)
        data_bytes = None
    else:
        # the data holds at most the values' bytes (less their length prefixes)
        values_bytes = PyBytes_FromStringAndSize(NULL, (total + 1) * (8 if large else 4))
        offsets = <void *> (<char *> values_bytes)
        if large:
            (<long long *> offsets)[0] = 0
        else:
            (<int *> offsets)[0] = 0
        data = <unsigned char *> malloc(<size_t> (bytes_total + 1))
        if data == NULL:
            raise MemoryError()
    cdef long long *work = <long long *> malloc(sizeof(long long) * (2 * most + 1))
    if work == NULL:
        free(data)
        raise MemoryError()
    cdef long long *iota = work
    cdef long long *picks = work + most
    try:
        for index in range(most):
            iota[index] = index
        for page in pages:
            rows, nulls = page[0], page[1]
            levels = page[2]
            body = page[3]
            before = present
            with nogil:
                if optional:
                    status = _levels(&levels[0] if levels.shape[0] else NULL, levels.shape[0],
                                     iota, rows, picks)
                else:
                    for index in range(rows):
                        picks[index] = index
                if not status:
                    status = _lay_out(&body[0] if body.shape[0] else NULL, body.shape[0],
                                      picks, rows, width, large, first, bitmap, fixed, data,
                                      &data_at, offsets, &present)
            if status:
                raise ValueError(_MESSAGES[status])
            if rows - (present - before) != nulls:
                raise ValueError(_MESSAGES[_DAMAGED])
            first += rows
        if width:
            data_out = None
        else:
            data_out = PyBytes_FromStringAndSize(<char *> data, data_at)
        return (bitmap_bytes if total - present else None), values_bytes, data_out, total - present
    finally:
        free(work)
        free(data)
