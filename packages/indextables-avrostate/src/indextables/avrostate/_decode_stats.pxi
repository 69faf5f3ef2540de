# Included by _decode.pyx (textually, where its ``include`` stands): min/max
# statistics for data skipping. ``stat_spans`` locates one column's min and max
# in every record of a block (one walk, no strings); ``stat_codes`` orders them
# against literals pre-parsed once for the C fast paths. It uses the cimports,
# the primitive readers and ``TWO53`` of _decode.pyx.


cdef int _map_find(const unsigned char* p, Py_ssize_t n, Py_ssize_t* pos,
                   const unsigned char* key, Py_ssize_t key_len,
                   Py_ssize_t* vstart, Py_ssize_t* vlen) except -1:
    """Skip a map<string>, noting the value span of ``key`` (the last duplicate wins)."""
    cdef int64_t count, j
    cdef Py_ssize_t kstart, klen, start
    while True:
        count = _block_count(p, n, pos)
        if count == 0:
            return 0
        for j in range(count):
            kstart = _span(p, n, pos)
            klen = pos[0] - kstart
            start = _span(p, n, pos)
            if klen == key_len and memcmp(p + kstart, key, <size_t>klen) == 0:
                vstart[0] = start
                vlen[0] = pos[0] - start


cdef class _Literal:
    """A comparison literal, pre-parsed once for the C fast paths."""
    cdef str text
    cdef bytes utf8
    cdef int kind  # 0: not a number, 1: int64, 2: float, 3: other number
    cdef int64_t as_int
    cdef double as_double

    def __init__(self, str text, bint numeric_aware):
        self.text = text
        self.utf8 = text.encode("utf-8")
        self.kind = 0
        if numeric_aware:
            number = _as_number(text)
            if number is None:
                self.kind = 0
            elif isinstance(number, int) and -(2**63) <= number < 2**63:
                self.kind = 1
                self.as_int = number
            elif isinstance(number, float):
                self.kind = 2
                self.as_double = number
            else:
                self.kind = 3


cdef inline int _bytes_order(const unsigned char* a, Py_ssize_t alen, bytes b):
    """Code-point order of two UTF-8 strings (equal to their byte order)."""
    cdef Py_ssize_t blen = PyBytes_GET_SIZE(b)
    cdef int c = memcmp(a, PyBytes_AS_STRING(b), <size_t>(alen if alen < blen else blen))
    if c != 0:
        return 1 if c > 0 else -1
    return (alen > blen) - (alen < blen)


cdef inline bint _ascii_simple_int(const unsigned char* v, Py_ssize_t n, int64_t* out):
    cdef Py_ssize_t i = 0
    cdef int64_t acc = 0
    cdef bint negative = False
    if n > 0 and v[0] == 45:  # '-'
        negative = True
        i = 1
    if n - i < 1 or n - i > 18:
        return False
    while i < n:
        if v[i] < 48 or v[i] > 57:
            return False
        acc = acc * 10 + (v[i] - 48)
        i += 1
    out[0] = -acc if negative else acc
    return True


cdef int _order_code(const unsigned char* p, Py_ssize_t n, int64_t vstart, int64_t vlen,
                     _Literal lit, object compare, Py_ssize_t max_len) except -1:
    """Order code of the value at ``p[vstart:vstart+vlen]`` against ``lit``: 0 below,
    1 equal, 2 above, 3 no usable value (absent, or ``max_len`` characters or more)."""
    cdef const unsigned char* v
    cdef int64_t i
    cdef int64_t number
    cdef unsigned char first
    if vstart < 0:
        return 3
    if vlen < 0 or vstart > n or vlen > n - vstart:
        raise DecodeError(f"statistic span {vstart}+{vlen} out of range")
    v = p + vstart
    for i in range(vlen):
        if v[i] >= 0x80:
            return _order_text(v, <Py_ssize_t>vlen, lit, compare, max_len)  # non-ASCII: the str path
    if max_len > 0 and vlen >= max_len:
        return 3
    if compare is None or lit.kind == 0:
        return 1 + _bytes_order(v, <Py_ssize_t>vlen, lit.utf8)
    first = v[0] if vlen else 0
    if vlen == 0 or ((65 <= first <= 90 or 97 <= first <= 122)
                     and first != 105 and first != 73 and first != 110 and first != 78):
        return 1 + _bytes_order(v, <Py_ssize_t>vlen, lit.utf8)  # neither int() nor float() parses it
    if lit.kind == 1 and _ascii_simple_int(v, <Py_ssize_t>vlen, &number):
        return 1 + (number > lit.as_int) - (number < lit.as_int)
    if lit.kind == 2 and _ascii_simple_int(v, <Py_ssize_t>vlen, &number) and -TWO53 < number < TWO53:
        return 1 + _sign(<double>number - lit.as_double)
    return 1 + _sign_of(compare(PyUnicode_DecodeUTF8(<const char*>v, <Py_ssize_t>vlen, NULL), lit.text))


cdef int _order_text(const unsigned char* v, Py_ssize_t vlen, _Literal lit, object compare,
                     Py_ssize_t max_len) except -1:
    try:
        text = PyUnicode_DecodeUTF8(<const char*>v, vlen, NULL)
    except UnicodeDecodeError as exc:
        raise DecodeError("invalid UTF-8 in a statistic") from exc
    if max_len > 0 and len(text) >= max_len:
        return 3
    if compare is None or lit.kind == 0 or _not_a_number(text):
        return 1 + PyUnicode_Compare(text, lit.text)
    return 1 + _sign_of(compare(text, lit.text))


cdef inline int _sign(double d):
    return (d > 0) - (d < 0)


cdef inline int _sign_of(object order) except -2:
    return (order > 0) - (order < 0)


cdef inline bint _not_a_number(str value):
    cdef Py_UCS4 c
    if len(value) == 0:
        return True
    c = value[0]
    if (u'a' <= c <= u'z') or (u'A' <= c <= u'Z'):
        return c not in u'iInN'
    return False


cdef struct StatSpan:
    # One record's statistic of a column, min and max; 40 bytes, no padding,
    # the same layout as _decode_py's SPAN struct format.
    int64_t min_int      # the value, when its kind is 1
    int64_t max_int
    int32_t min_start    # offset of the value bytes in the block, -1 when absent
    int32_t min_len
    int32_t max_start
    int32_t max_len
    int32_t min_kind     # 0 absent, 1 a plain ASCII integer of up to 18 digits, 2 other
    int32_t max_kind


cdef inline void _classify(const unsigned char* p, Py_ssize_t start, Py_ssize_t length,
                           int32_t* kind, int64_t* number):
    if start < 0:
        kind[0] = 0
    elif _ascii_simple_int(p + start, length, number):
        kind[0] = 1
    else:
        kind[0] = 2


def stat_spans(bytes data, object starts, tuple plan, str key):
    """Locate (and pre-parse) each record's ``minValues[key]`` and ``maxValues[key]``.

    Returns one 40-byte ``StatSpan`` per record, packed in bytes (see
    ``_decode_py.stat_spans``). One walk per record; integers are parsed
    while their bytes are in cache, so ordering them later touches only
    the spans.
    """
    cdef COp ops[NFIELDS]
    cdef const unsigned char* p = <const unsigned char*>PyBytes_AS_STRING(data)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(data)
    cdef Py_ssize_t pos, f, i, remaining, wanted = 0
    cdef array.array offsets = _offsets(starts)
    cdef Py_ssize_t nf = len(plan), count = Py_SIZE(offsets)
    cdef bytes raw_key = key.encode("utf-8")
    cdef const unsigned char* k = <const unsigned char*>PyBytes_AS_STRING(raw_key)
    cdef Py_ssize_t klen = PyBytes_GET_SIZE(raw_key)
    cdef Py_ssize_t min_start, min_len, max_start, max_len
    cdef COp* op
    cdef StatSpan* span
    if n > INT32_MAX:
        raise DecodeError(f"block of {n} bytes is too large for statistic spans")
    cdef bytes out = PyBytes_FromStringAndSize(NULL, count * sizeof(StatSpan))
    cdef StatSpan* spans = <StatSpan*>PyBytes_AS_STRING(out)
    _load_plan(plan, ops)
    for f in range(nf):
        if ops[f].slot == SLOT_MINV or ops[f].slot == SLOT_MAXV:
            wanted += 1
    for i in range(count):
        pos = offsets.data.as_longlongs[i]
        if pos < 0 or pos > n:
            raise DecodeError(f"record start {pos} out of range")
        min_start = max_start = -1
        min_len = max_len = 0
        remaining = wanted
        for f in range(nf):
            if remaining == 0:
                break
            op = &ops[f]
            if op.slot == SLOT_MINV or op.slot == SLOT_MAXV:
                remaining -= 1
                if op.n_branches and not _branch(p, n, &pos, op):
                    continue
                if op.slot == SLOT_MINV:
                    _map_find(p, n, &pos, k, klen, &min_start, &min_len)
                else:
                    _map_find(p, n, &pos, k, klen, &max_start, &max_len)
            elif op.slot < 0:
                _skip_tree(p, n, &pos, plan[f].skip)
            else:
                if op.n_branches and not _branch(p, n, &pos, op):
                    continue
                _skip_kind(p, n, &pos, op.kind)
        span = &spans[i]
        span.min_int = span.max_int = 0
        span.min_start = <int32_t>min_start
        span.min_len = <int32_t>min_len
        span.max_start = <int32_t>max_start
        span.max_len = <int32_t>max_len
        _classify(p, min_start, min_len, &span.min_kind, &span.min_int)
        _classify(p, max_start, max_len, &span.max_kind, &span.max_int)
    return out


cdef inline int _span_code(const unsigned char* p, Py_ssize_t n, int32_t kind, int32_t start,
                           int32_t length, int64_t number, _Literal lit, object compare,
                           Py_ssize_t max_len) except -1:
    """Order code of one located statistic against ``lit`` (see ``_order_code``)."""
    if kind == 0:
        return 3
    if kind == 1 and compare is not None and not (max_len > 0 and length >= max_len):
        # exactly what _order_code computes for these bytes, without touching them
        if lit.kind == 1:
            return 1 + (number > lit.as_int) - (number < lit.as_int)
        if lit.kind == 2 and -TWO53 < number < TWO53:
            return 1 + _sign(<double>number - lit.as_double)
    return _order_code(p, n, start, length, lit, compare, max_len)


def stat_codes(bytes data, bytes spans, list literals, object compare, Py_ssize_t max_len):
    """Per literal, one byte per record: ``4 * min code + max code`` (see ``_decode_py``)."""
    cdef const unsigned char* p = <const unsigned char*>PyBytes_AS_STRING(data)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(data)
    cdef Py_ssize_t size = PyBytes_GET_SIZE(spans), i, count
    cdef const StatSpan* q = <const StatSpan*>PyBytes_AS_STRING(spans)
    cdef const StatSpan* s
    cdef unsigned char* codes
    cdef _Literal lit
    cdef bytes buf
    cdef list out = []
    if size % sizeof(StatSpan):
        raise DecodeError(f"statistic spans of {size} bytes are not whole records")
    count = size // sizeof(StatSpan)
    for text in literals:
        lit = _Literal(text, compare is not None)
        buf = PyBytes_FromStringAndSize(NULL, count)
        codes = <unsigned char*>PyBytes_AS_STRING(buf)
        for i in range(count):
            s = &q[i]
            codes[i] = 4 * _span_code(p, n, s.min_kind, s.min_start, s.min_len, s.min_int,
                                      lit, compare, 0) + _span_code(
                p, n, s.max_kind, s.max_start, s.max_len, s.max_int, lit, compare, max_len
            )
        out.append(buf)
    return out
