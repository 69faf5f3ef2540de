# Included by _decode.pyx (textually, where its ``include`` stands): min/max
# statistics comparison for data skipping (``compare_stats``), with literals
# pre-parsed once for the C fast paths. It uses the cimports, the primitive
# readers and ``TWO53`` of _decode.pyx.


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


cdef object _order(const unsigned char* p, Py_ssize_t vstart, Py_ssize_t vlen, _Literal lit,
                   object compare, Py_ssize_t max_len):
    """Order of the value at ``p[vstart:vstart+vlen]`` against ``lit`` (None: no usable value)."""
    cdef const unsigned char* v = p + vstart
    cdef Py_ssize_t i
    cdef int64_t number
    cdef unsigned char first
    if vstart < 0:
        return None
    for i in range(vlen):
        if v[i] >= 0x80:
            return _order_text(v, vlen, lit, compare, max_len)  # non-ASCII: the str path
    if max_len > 0 and vlen >= max_len:
        return None
    if compare is None or lit.kind == 0:
        return _bytes_order(v, vlen, lit.utf8)
    first = v[0] if vlen else 0
    if vlen == 0 or ((65 <= first <= 90 or 97 <= first <= 122)
                     and first != 105 and first != 73 and first != 110 and first != 78):
        return _bytes_order(v, vlen, lit.utf8)  # neither int() nor float() parses it
    if lit.kind == 1 and _ascii_simple_int(v, vlen, &number):
        return (number > lit.as_int) - (number < lit.as_int)
    if lit.kind == 2 and _ascii_simple_int(v, vlen, &number) and -TWO53 < number < TWO53:
        return _sign(<double>number - lit.as_double)
    return compare(PyUnicode_DecodeUTF8(<const char*>v, vlen, NULL), lit.text)


cdef object _order_text(const unsigned char* v, Py_ssize_t vlen, _Literal lit, object compare,
                        Py_ssize_t max_len):
    try:
        text = PyUnicode_DecodeUTF8(<const char*>v, vlen, NULL)
    except UnicodeDecodeError as exc:
        raise DecodeError("invalid UTF-8 in a statistic") from exc
    if max_len > 0 and len(text) >= max_len:
        return None
    if compare is None or lit.kind == 0 or _not_a_number(text):
        return PyUnicode_Compare(text, lit.text)
    return compare(text, lit.text)


cdef inline int _sign(double d):
    return (d > 0) - (d < 0)


cdef inline bint _not_a_number(str value):
    cdef Py_UCS4 c
    if len(value) == 0:
        return True
    c = value[0]
    if (u'a' <= c <= u'z') or (u'A' <= c <= u'Z'):
        return c not in u'iInN'
    return False


def compare_stats(bytes data, list starts, tuple plan, str key, list literals, object compare,
                  Py_ssize_t max_len):
    """Order each record's ``minValues[key]`` and ``maxValues[key]`` against each literal
    (see ``_decode_py``), in one walk per record, mostly without creating strings."""
    cdef COp ops[NFIELDS]
    cdef const unsigned char* p = <const unsigned char*>PyBytes_AS_STRING(data)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(data)
    cdef Py_ssize_t pos, f, j, nlit = len(literals), remaining
    cdef Py_ssize_t nf = len(plan)
    cdef bytes raw_key = key.encode("utf-8")
    cdef const unsigned char* k = <const unsigned char*>PyBytes_AS_STRING(raw_key)
    cdef Py_ssize_t klen = PyBytes_GET_SIZE(raw_key)
    cdef Py_ssize_t min_start, min_len, max_start, max_len_found
    cdef COp* op
    cdef list lits = [_Literal(text, compare is not None) for text in literals]
    cdef list lows = [[] for _ in range(nlit)]
    cdef list highs = [[] for _ in range(nlit)]
    _load_plan(plan, ops)
    cdef Py_ssize_t wanted = 0
    for f in range(nf):
        if ops[f].slot == SLOT_MINV or ops[f].slot == SLOT_MAXV:
            wanted += 1
    for start in starts:
        pos = start
        if pos < 0 or pos > n:
            raise DecodeError(f"record start {pos} out of range")
        min_start = max_start = -1
        min_len = max_len_found = 0
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
                    _map_find(p, n, &pos, k, klen, &max_start, &max_len_found)
            elif op.slot < 0:
                _skip_tree(p, n, &pos, plan[f].skip)
            else:
                if op.n_branches and not _branch(p, n, &pos, op):
                    continue
                _skip_kind(p, n, &pos, op.kind)
        for j in range(nlit):
            (<list>lows[j]).append(_order(p, min_start, min_len, lits[j], compare, 0))
            (<list>highs[j]).append(_order(p, max_start, max_len_found, lits[j], compare, max_len))
    return [(lows[j], highs[j]) for j in range(nlit)]
