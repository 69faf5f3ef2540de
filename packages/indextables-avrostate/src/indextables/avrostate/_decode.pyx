# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled FileEntry decoder: the fast twin of ``_decode_py`` (same functions, same behaviour).

Every read is bounds-checked against the block's length: hostile bytes raise
``DecodeError``, never crash. See ``_decode_py`` for the readable reference.
"""

from cpython cimport array
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.object cimport Py_SIZE, Py_TYPE, PyObject, PyTypeObject
from cpython.unicode cimport PyUnicode_Compare, PyUnicode_DecodeUTF8
from libc.stdint cimport int32_t, int64_t, uint64_t, INT32_MAX, INT64_MIN
from libc.string cimport memchr, memcmp

import array

from indextables.avrostate._decode_common import DEFAULTS, MAX_FIELDS, DecodeError, as_number as _as_number
from indextables.avrostate._decode_common import PATH_PROBLEMS, UnsafePathDecodeError

cdef extern from "Python.h":
    void PyObject_GC_UnTrack(void* op)
    bint PyType_IS_GC(PyTypeObject* tp)

DEF K_NULL = 0
DEF K_BOOL = 1
DEF K_LONG = 2
DEF K_FLOAT = 3
DEF K_DOUBLE = 4
DEF K_STR = 5
DEF K_MAP = 6
DEF K_ARR = 7
DEF K_FIXED = 8
DEF K_ENUM = 9
DEF K_UNION = 10
DEF K_RECORD = 11
DEF K_GMAP = 12
DEF K_GARR = 13
DEF NFIELDS = 512

DEF SLOT_PATH = 0
DEF SLOT_PV = 1
DEF SLOT_SIZE = 2
DEF SLOT_ADDED = 5
DEF SLOT_NUMREC = 10
DEF SLOT_FSTART = 11
DEF SLOT_FEND = 12
DEF SLOT_MINV = 8
DEF SLOT_MAXV = 9

__all__ = [
    "decode_entries",
    "decode_record",
    "map_column",
    "scan_block",
    "stat_codes",
    "stat_spans",
]

cdef dict _EMPTY = {}


cdef struct COp:
    int slot
    int kind
    int null_branch
    int value_branch
    int n_branches
    int eager


cdef int _load_plan(object plan, COp* ops) except -1:
    cdef Py_ssize_t i
    if len(plan) > NFIELDS:
        raise DecodeError("plan has too many fields")
    for i, op in enumerate(plan):
        ops[i].slot = op.slot
        ops[i].kind = op.kind
        ops[i].null_branch = op.null_branch
        ops[i].value_branch = op.value_branch
        ops[i].n_branches = op.n_branches
        ops[i].eager = 1 if op.eager else 0
    return 0


include "_decode_primitives.pxi"


cdef int _skip_tree(const unsigned char* p, Py_ssize_t n, Py_ssize_t* pos, tuple tree) except -1:
    cdef int kind = tree[0]
    cdef int64_t branch, count, j
    cdef int arity
    if kind == K_NULL:
        return 0
    if kind == K_LONG or kind == K_ENUM:
        _long(p, n, pos)
        return 0
    if kind == K_STR:
        _span(p, n, pos)
        return 0
    if kind == K_BOOL:
        return _fixed(n, pos, 1)
    if kind == K_FLOAT:
        return _fixed(n, pos, 4)
    if kind == K_DOUBLE:
        return _fixed(n, pos, 8)
    if kind == K_FIXED:
        return _fixed(n, pos, <Py_ssize_t>tree[1])
    if kind == K_UNION:
        branches = tree[1]
        branch = _long(p, n, pos)
        if branch < 0 or branch >= len(branches):
            raise DecodeError(f"union branch {branch} out of range at {pos[0]}")
        return _skip_tree(p, n, pos, branches[branch])
    if kind == K_RECORD:
        for field in tree[1]:
            _skip_tree(p, n, pos, field)
        return 0
    arity = 2 if kind == K_GMAP else 1
    item = tree[1]
    while True:
        count = _block_count(p, n, pos)
        if count == 0:
            return 0
        for j in range(count):
            if arity == 2:
                _span(p, n, pos)
            _skip_tree(p, n, pos, item)


cdef int _skip_strings(const unsigned char* p, Py_ssize_t n, Py_ssize_t* pos, int per_item) except -1:
    """Skip a map<string> (per_item 2) or array<string> (per_item 1)."""
    cdef int64_t count, j
    while True:
        count = _block_count(p, n, pos)
        if count == 0:
            return 0
        for j in range(count * per_item):
            _span(p, n, pos)


cdef int _skip_kind(const unsigned char* p, Py_ssize_t n, Py_ssize_t* pos, int kind) except -1:
    if kind == K_STR:
        _span(p, n, pos)
    elif kind == K_LONG:
        _long(p, n, pos)
    elif kind == K_BOOL:
        _fixed(n, pos, 1)
    elif kind == K_MAP:
        _skip_strings(p, n, pos, 2)
    else:
        _skip_strings(p, n, pos, 1)
    return 0


cdef dict _map(const unsigned char* p, Py_ssize_t n, Py_ssize_t* pos):
    cdef dict out = {}
    cdef int64_t count, j
    while True:
        count = _block_count(p, n, pos)
        if count == 0:
            return out
        for j in range(count):
            key = _str(p, n, pos)
            out[key] = _str(p, n, pos)


cdef tuple _array(const unsigned char* p, Py_ssize_t n, Py_ssize_t* pos):
    cdef list out = []
    cdef int64_t count, j
    while True:
        count = _block_count(p, n, pos)
        if count == 0:
            return tuple(out)
        for j in range(count):
            out.append(_str(p, n, pos))


cdef object _value(const unsigned char* p, Py_ssize_t n, Py_ssize_t* pos, int kind):
    cdef Py_ssize_t at
    if kind == K_STR:
        return _str(p, n, pos)
    if kind == K_LONG:
        return _long(p, n, pos)
    if kind == K_BOOL:
        at = pos[0]
        _fixed(n, pos, 1)
        return p[at] != 0
    if kind == K_MAP:
        return _map(p, n, pos)
    return _array(p, n, pos)


cdef inline int _branch(const unsigned char* p, Py_ssize_t n, Py_ssize_t* pos, COp* op) except -1:
    """Read a union index: 1 when it holds the value, 0 for null."""
    cdef int64_t branch = _long(p, n, pos)
    if branch < 0 or branch >= op.n_branches:
        return _bad_branch(branch, pos[0])
    return 1 if branch == op.value_branch else 0


cdef int _bad_branch(int64_t branch, Py_ssize_t pos) except -1:
    # out of line, so that _branch stays small enough to inline
    raise DecodeError(f"union branch {branch} out of range at {pos}")


cdef array.array _int_column(object column):
    """A Columns int64 column (``array('q')``), checked once per block."""
    if not isinstance(column, array.array) or (<array.array>column).ob_descr.itemsize != 8 \
            or column.typecode != "q":
        raise TypeError("Columns int columns must be array('q')")
    return <array.array>column


cdef inline int _push(array.array column, int64_t value) except -1:
    cdef Py_ssize_t size = Py_SIZE(column)
    array.resize_smart(column, size + 1)
    column.data.as_longlongs[size] = value
    return 0


cdef array.array _offsets(object starts):
    """Record offsets as an int64 array (FileEntries passes slices of one)."""
    if isinstance(starts, array.array) and starts.typecode == "q":
        return <array.array>starts
    return array.array("q", starts)


cdef int _null(object out, str column, Py_ssize_t row) except -1:
    """Note a null in an int column (stored as 0 there): rare, older writers."""
    nulls = out.nulls.get(column)
    if nulls is None:
        nulls = out.nulls[column] = []
    nulls.append(row)
    return 0


def scan_block(bytes data, Py_ssize_t count, tuple plan, dict pv_cache, object pv_filter,
               object tombstones, object out):
    """Decode the planning slots of ``count`` records; return how many were kept."""
    cdef COp ops[NFIELDS]
    cdef const unsigned char* p = <const unsigned char*>PyBytes_AS_STRING(data)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(data)
    cdef Py_ssize_t pos = 0, start, pv_start, r, f, row
    cdef Py_ssize_t nf = len(plan)
    cdef Py_ssize_t kept = 0
    cdef bint keep, present
    cdef COp* op
    cdef list paths = out.paths, pvs = out.partition_values
    cdef array.array sizes = _int_column(out.sizes), nrecs = _int_column(out.num_records)
    cdef array.array fstarts = _int_column(out.footer_starts)
    cdef array.array fends = _int_column(out.footer_ends)
    cdef array.array added = _int_column(out.added_at_versions)
    cdef array.array starts = _int_column(out.starts), ends = _int_column(out.ends)
    cdef bint has_tombstones = bool(tombstones)
    cdef Py_ssize_t prev_pv_start = -1, prev_pv_len = -1, pv_len
    cdef Py_ssize_t path_start, path_end
    cdef int64_t size, nrec, fstart, fend, added_version
    cdef int problem
    cdef bint has_size, has_nrec, has_fstart, has_fend
    cdef object prev_hit = None
    _load_plan(plan, ops)
    for r in range(count):
        start = pos
        keep = True
        path = None
        path_start = -1
        path_end = -1
        pv = _EMPTY
        size = nrec = fstart = fend = added_version = 0
        has_size = has_nrec = has_fstart = has_fend = False
        for f in range(nf):
            op = &ops[f]
            if op.slot < 0:
                _skip_tree(p, n, &pos, plan[f].skip)
                continue
            if op.n_branches:
                if not _branch(p, n, &pos, op):
                    continue
            if not op.eager or not keep:
                _skip_kind(p, n, &pos, op.kind)
                continue
            if op.slot == SLOT_PV:
                pv_start = pos
                _skip_strings(p, n, &pos, 2)
                pv_len = pos - pv_start
                if pv_len == prev_pv_len and memcmp(p + pv_start, p + prev_pv_start, <size_t>pv_len) == 0:
                    hit = prev_hit  # same map as the previous record: no key, no lookup
                else:
                    raw = PyBytes_FromStringAndSize(<const char*>p + pv_start, pv_len)
                    hit = pv_cache.get(raw)
                    if hit is None:
                        values = _map(p, n, &pv_start)
                        hit = (values, True if pv_filter is None else bool(pv_filter(values)))
                        pv_cache[raw] = hit
                    prev_hit = hit
                    prev_pv_start = pos - pv_len
                    prev_pv_len = pv_len
                pv = (<tuple>hit)[0]
                if not (<tuple>hit)[1]:
                    keep = False
                continue
            if op.slot == SLOT_PATH:
                # decoded after the record, only if the partition filter keeps it
                path_start = _span(p, n, &pos)
                path_end = pos
                continue
            if op.kind != K_LONG:  # compile_plan gives the other eager slots long values
                raise DecodeError(f"slot {op.slot} is not a long")
            if op.slot == SLOT_SIZE:
                size = _long(p, n, &pos)
                has_size = True
            elif op.slot == SLOT_NUMREC:
                nrec = _long(p, n, &pos)
                has_nrec = True
            elif op.slot == SLOT_FSTART:
                fstart = _long(p, n, &pos)
                has_fstart = True
            elif op.slot == SLOT_FEND:
                fend = _long(p, n, &pos)
                has_fend = True
            elif op.slot == SLOT_ADDED:
                added_version = _long(p, n, &pos)
            else:
                _long(p, n, &pos)
        if keep and path_start >= 0:
            try:
                path = PyUnicode_DecodeUTF8(<const char*>p + path_start, path_end - path_start, NULL)
            except UnicodeDecodeError as exc:
                raise DecodeError(f"invalid UTF-8 at {path_start}") from exc
            problem = _path_problem(p + path_start, path_end - path_start)
            if problem >= 0:
                raise UnsafePathDecodeError(path, PATH_PROBLEMS[problem])
            if has_tombstones and path in tombstones:
                keep = False
        if keep:
            row = len(paths)
            paths.append(path)
            pvs.append(pv)
            _push(sizes, size)
            _push(nrecs, nrec)
            _push(fstarts, fstart)
            _push(fends, fend)
            _push(added, added_version)
            _push(starts, start)
            _push(ends, pos)
            if not (has_size and has_nrec and has_fstart and has_fend):
                if not has_size:
                    _null(out, "sizes", row)
                if not has_nrec:
                    _null(out, "num_records", row)
                if not has_fstart:
                    _null(out, "footer_starts", row)
                if not has_fend:
                    _null(out, "footer_ends", row)
            kept += 1
    if pos != n:
        raise DecodeError(f"block has {n - pos} trailing bytes")
    return kept


cdef inline bint _is_sep(unsigned char c):
    return c == 47 or c == 92  # '/' or '\\'


cdef int _path_problem(const unsigned char* s, Py_ssize_t n):
    """The index in PATH_PROBLEMS of what makes a UTF-8 path unsafe, or -1.

    The same checks, in the same order, as ``protocol.pathsafety.path_problem``:
    empty, absolute, a scheme or drive (a letter, then letters, digits, '+',
    '.' or '-', then ':'), a '..' segment between '/' or '\\' separators.
    Every byte tested is ASCII, which UTF-8 never uses inside a multi-byte
    character, so testing bytes equals testing characters.
    """
    cdef Py_ssize_t i
    cdef unsigned char c
    cdef const unsigned char* q = s
    cdef const unsigned char* end = s + n
    if n == 0:
        return 0
    if _is_sep(s[0]):
        return 1
    c = s[0] | 32
    if 97 <= c <= 122:  # an ASCII letter
        for i in range(1, n):
            c = s[i]
            if c == 58:  # ':'
                return 2
            if not ((97 <= (c | 32) <= 122) or (48 <= c <= 57) or c == 43 or c == 46 or c == 45):
                break
    # A '..' segment: jump from dot to dot (memchr), most paths have one or two.
    while q < end:
        q = <const unsigned char*>memchr(q, 46, <size_t>(end - q))
        if q == NULL:
            break
        if q + 1 < end and q[1] == 46 and (q == s or _is_sep(q[-1])) \
                and (q + 2 == end or _is_sep(q[2])):
            return 3
        q += 1
    return -1


cdef list _decode_values(const unsigned char* p, Py_ssize_t n, Py_ssize_t start, tuple plan,
                         COp* ops, Py_ssize_t nf, bint keep_eager_path):
    """Decode one record's slots; with ``keep_eager_path``, path and partition values
    are skipped (the caller already holds them)."""
    cdef Py_ssize_t pos = start, f
    cdef COp* op
    cdef list values = list(DEFAULTS)
    if start < 0 or start > n:
        raise DecodeError(f"record start {start} out of range")
    for f in range(nf):
        op = &ops[f]
        if op.slot < 0:
            _skip_tree(p, n, &pos, plan[f].skip)
            continue
        if op.n_branches:
            if not _branch(p, n, &pos, op):
                values[op.slot] = None
                continue
        if keep_eager_path and op.slot <= SLOT_PV:
            _skip_kind(p, n, &pos, op.kind)
            continue
        values[op.slot] = _value(p, n, &pos, op.kind)
    return values


def decode_record(bytes data, Py_ssize_t start, tuple plan):
    """Decode every FileEntry slot of the record at ``start`` (defaults for missing ones)."""
    cdef COp ops[NFIELDS]
    _load_plan(plan, ops)
    return _decode_values(<const unsigned char*>PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data),
                          start, plan, ops, len(plan), False)


cdef object _map_lookup(const unsigned char* p, Py_ssize_t n, Py_ssize_t* pos,
                        const unsigned char* key, Py_ssize_t key_len):
    cdef object found = None
    cdef int64_t count, j
    cdef Py_ssize_t kstart, klen
    while True:
        count = _block_count(p, n, pos)
        if count == 0:
            return found
        for j in range(count):
            kstart = _span(p, n, pos)
            klen = pos[0] - kstart
            if klen == key_len and memcmp(p + kstart, key, <size_t>klen) == 0:
                found = _str(p, n, pos)
            else:
                _span(p, n, pos)


def map_column(bytes data, object starts, tuple plan, int slot, str key):
    """Return ``values[slot][key]`` (``None`` when absent) for the records at ``starts``."""
    cdef COp ops[NFIELDS]
    cdef const unsigned char* p = <const unsigned char*>PyBytes_AS_STRING(data)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(data)
    cdef Py_ssize_t pos, f
    cdef Py_ssize_t nf = len(plan)
    cdef bytes raw_key = key.encode("utf-8")
    cdef const unsigned char* k = <const unsigned char*>PyBytes_AS_STRING(raw_key)
    cdef Py_ssize_t klen = PyBytes_GET_SIZE(raw_key)
    cdef COp* op
    cdef list out = []
    cdef array.array offsets = _offsets(starts)
    cdef Py_ssize_t i
    _load_plan(plan, ops)
    for i in range(Py_SIZE(offsets)):
        pos = offsets.data.as_longlongs[i]
        if pos < 0 or pos > n:
            raise DecodeError(f"record start {pos} out of range")
        found = None
        for f in range(nf):
            op = &ops[f]
            if op.slot != slot:
                if op.slot < 0:
                    _skip_tree(p, n, &pos, plan[f].skip)
                else:
                    if op.n_branches and not _branch(p, n, &pos, op):
                        continue
                    _skip_kind(p, n, &pos, op.kind)
                continue
            if op.n_branches and not _branch(p, n, &pos, op):
                break
            found = _map_lookup(p, n, &pos, k, klen)
            break
        out.append(found)
    return out


cdef int64_t TWO53 = 9007199254740992  # doubles hold every integer below 2**53 exactly
cdef dict _DESCRIPTORS = {}
cdef tuple _NOARGS = ()


cdef list _descriptors(type entry_type):
    found = _DESCRIPTORS.get(entry_type)
    if found is None:
        import dataclasses
        found = [entry_type.__dict__[f.name] for f in dataclasses.fields(entry_type)]
        if len(found) != len(DEFAULTS):
            raise TypeError(f"{entry_type.__name__} does not have the FileEntry slots")
        _DESCRIPTORS[entry_type] = found
    return <list>found


def decode_entries(bytes data, object starts, list paths, list partition_values, tuple plan,
                   type entry_type):
    """Decode the records at ``starts`` into ``entry_type`` objects (slotted FileEntry).

    ``paths`` and ``partition_values`` come from the planning scan and are
    reused, not decoded again. Slots are set through their member descriptors'
    C setter: a frozen dataclass's ``__init__`` goes through
    ``object.__setattr__`` per field.
    """
    cdef COp ops[NFIELDS]
    cdef const unsigned char* p = <const unsigned char*>PyBytes_AS_STRING(data)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(data)
    cdef Py_ssize_t nf = len(plan)
    cdef list descrs = _descriptors(entry_type)
    cdef Py_ssize_t i, s, nslots = len(descrs)
    cdef list out = []
    cdef list values
    cdef PyTypeObject* tp = <PyTypeObject*>entry_type
    cdef bint untrack = PyType_IS_GC(tp)
    cdef array.array offsets = _offsets(starts)
    if len(partition_values) != len(offsets) or len(paths) != len(offsets):
        raise ValueError("one path and one partition map per start are required")
    _load_plan(plan, ops)
    for i in range(Py_SIZE(offsets)):
        values = _decode_values(p, n, offsets.data.as_longlongs[i], plan, ops, nf, True)
        values[0] = paths[i]
        values[1] = partition_values[i]
        obj = tp.tp_new(entry_type, <PyObject*>_NOARGS, NULL)
        for s in range(nslots):
            d = descrs[s]
            (<PyTypeObject*>Py_TYPE(d)).tp_descr_set(d, obj, values[s])
        if untrack:
            # A frozen entry holding only strings, numbers, string maps and string
            # tuples cannot be part of a reference cycle: keeping 70k of them out
            # of the cyclic GC's lists (as CPython does for such tuples and dicts)
            # saves a quarter of the materialization time.
            PyObject_GC_UnTrack(<void*>obj)
        out.append(obj)
    return out


include "_decode_stats.pxi"
