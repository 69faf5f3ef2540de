# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled term-dictionary kernels: the fast twin of ``_kernels_py`` (same functions, same bytes).

Every read is bounds-checked against its buffer: hostile bytes raise
``KernelError``, never crash. See ``_kernels_py`` for the readable reference.
"""

cimport cpython.array
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.stdint cimport uint8_t, uint64_t, int64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcmp, memcpy, memset

from array import array

from indextables.search.splits.termdict._kernels_common import (
    COMMON_INPUTS,
    COMMON_INPUTS_INV,
    KernelError,
)

__all__ = ["fst_build", "fst_entries", "fst_near", "sst_decode", "sst_encode", "tis_decode", "tis_encode"]

DEF EMPTY_ADDRESS = 0
DEF NONE_ADDRESS = 1
DEF FST_VERSION = 2
DEF REGISTRY_ROWS = 10000
DEF REGISTRY_CELLS = 2
DEF TRANS_INDEX_THRESHOLD = 32
DEF TIS_BLOCK_LEN = 256
DEF SST_BLOCK_LEN = 4000
DEF SST_ZSTD_MIN = 2048

cdef uint64_t FNV_OFFSET = 14695981039346656037ULL
cdef uint64_t FNV_PRIME = 1099511628211ULL
cdef uint8_t _COMMON[256]
cdef uint8_t _COMMON_INV[256]
for _i in range(256):
    _COMMON[_i] = COMMON_INPUTS[_i]
    _COMMON_INV[_i] = COMMON_INPUTS_INV[_i]


# --------------------------------------------------------------------------- growable buffer


cdef struct Buf:
    uint8_t* data
    Py_ssize_t len
    Py_ssize_t cap


cdef int buf_init(Buf* b, Py_ssize_t cap) except -1:
    b.data = <uint8_t*>malloc(cap if cap > 16 else 16)
    if b.data == NULL:
        raise MemoryError()
    b.len = 0
    b.cap = cap if cap > 16 else 16
    return 0


cdef inline int buf_reserve(Buf* b, Py_ssize_t extra) except -1:
    cdef Py_ssize_t cap
    cdef uint8_t* grown
    if b.len + extra <= b.cap:
        return 0
    cap = b.cap * 2
    while cap < b.len + extra:
        cap *= 2
    grown = <uint8_t*>realloc(b.data, cap)
    if grown == NULL:
        raise MemoryError()
    b.data = grown
    b.cap = cap
    return 0


cdef inline int buf_byte(Buf* b, uint8_t v) except -1:
    buf_reserve(b, 1)
    b.data[b.len] = v
    b.len += 1
    return 0


cdef inline int buf_write(Buf* b, const uint8_t* src, Py_ssize_t n) except -1:
    buf_reserve(b, n)
    memcpy(b.data + b.len, src, n)
    b.len += n
    return 0


cdef inline int buf_uint(Buf* b, uint64_t v, int nbytes) except -1:
    cdef int i
    buf_reserve(b, nbytes)
    for i in range(nbytes):
        b.data[b.len + i] = <uint8_t>(v >> (8 * i))
    b.len += nbytes
    return 0


cdef inline int buf_vint(Buf* b, uint64_t v) except -1:
    buf_reserve(b, 10)
    while v >= 0x80:
        b.data[b.len] = <uint8_t>(v & 0x7F)
        b.len += 1
        v >>= 7
    b.data[b.len] = <uint8_t>(v | 0x80)
    b.len += 1
    return 0


cdef inline int buf_leb128(Buf* b, uint64_t v) except -1:
    buf_reserve(b, 10)
    while v >= 0x80:
        b.data[b.len] = <uint8_t>((v & 0x7F) | 0x80)
        b.len += 1
        v >>= 7
    b.data[b.len] = <uint8_t>v
    b.len += 1
    return 0


cdef inline bytes raw_bytes(const uint8_t* p, Py_ssize_t n):
    return PyBytes_FromStringAndSize(<const char*>p, n)


cdef bytes buf_bytes(Buf* b):
    return PyBytes_FromStringAndSize(<char*>b.data, b.len)


cdef cpython.array.array _U64_TEMPLATE = array("Q")


cdef object buf_u64_array(Buf* b):
    """An array('Q') holding the uint64 values written to ``b`` (one copy)."""
    cdef Py_ssize_t n = b.len // 8
    cdef cpython.array.array out = cpython.array.clone(_U64_TEMPLATE, n, False)
    if n:
        memcpy(out.data.as_voidptr, b.data, n * 8)
    return out


cdef inline int buf_u64(Buf* b, uint64_t v) except -1:
    buf_reserve(b, 8)
    memcpy(b.data + b.len, &v, 8)
    b.len += 8
    return 0


cdef inline int pack_size(uint64_t n) noexcept:
    cdef int size = 1
    while size < 8 and (n >> (8 * size)) != 0:
        size += 1
    return size


cdef inline int num_bits(uint64_t n) noexcept:
    cdef int bits = 0
    while bits < 64 and (n >> bits) != 0:
        bits += 1
    return bits if bits <= 56 else 64


cdef inline uint8_t common_idx(uint8_t inp) noexcept:
    cdef int idx = (_COMMON[inp] + 1) % 256
    return <uint8_t>idx if idx <= 63 else 0


# --------------------------------------------------------------------------- bit packer


cdef struct Bits:
    uint64_t mini
    int written


cdef inline int bits_write(Bits* bp, Buf* out, uint64_t v, int nbits) except -1:
    if nbits == 0:
        return 0
    if bp.written + nbits > 64:
        bp.mini |= v << bp.written
        buf_uint(out, bp.mini, 8)
        bp.mini = v >> (64 - bp.written)
        bp.written = bp.written + nbits - 64
    else:
        if bp.written < 64:
            bp.mini |= v << bp.written
        bp.written += nbits
        if bp.written == 64:
            buf_uint(out, bp.mini, 8)
            bp.written = 0
            bp.mini = 0
    return 0


cdef inline int bits_flush(Bits* bp, Buf* out) except -1:
    if bp.written > 0:
        buf_uint(out, bp.mini, (bp.written + 7) // 8)
        bp.written = 0
        bp.mini = 0
    return 0


cdef inline uint64_t bits_at(const uint8_t* data, Py_ssize_t size, Py_ssize_t addr, int nbits) noexcept:
    """tantivy's extract_bits with a 9-byte window, so widths up to 64 bits read whole."""
    cdef Py_ssize_t start = addr >> 3
    cdef int shift = addr & 7
    cdef uint64_t lo = 0
    cdef uint64_t hi = 0
    cdef int i
    if nbits == 0:
        return 0
    for i in range(8):
        if start + i < size:
            lo |= (<uint64_t>data[start + i]) << (8 * i)
    if start + 8 < size:
        hi = data[start + 8]
    lo = (lo >> shift) | ((hi << (64 - shift)) if shift else 0)
    if nbits >= 64:
        return lo
    return lo & (((<uint64_t>1) << nbits) - 1)


# --------------------------------------------------------------------------- fst build


cdef struct Trans:
    uint64_t out
    uint64_t addr
    uint8_t inp


cdef struct UNode:
    bint final
    uint64_t final_out
    Trans* trans
    Py_ssize_t ntrans
    Py_ssize_t cap
    bint has_last
    uint8_t last_inp
    uint64_t last_out


cdef struct Cell:
    uint64_t addr
    bint final
    uint64_t final_out
    Trans* trans
    Py_ssize_t ntrans
    Py_ssize_t cap


cdef int trans_reserve(Trans** trans, Py_ssize_t* cap, Py_ssize_t need) except -1:
    cdef Py_ssize_t grown_cap
    cdef Trans* grown
    if need <= cap[0]:
        return 0
    grown_cap = cap[0] * 2 if cap[0] else 4
    while grown_cap < need:
        grown_cap *= 2
    grown = <Trans*>realloc(trans[0], grown_cap * sizeof(Trans))
    if grown == NULL:
        raise MemoryError()
    trans[0] = grown
    cap[0] = grown_cap
    return 0


cdef inline uint64_t delta_of(uint64_t start, uint64_t target) noexcept:
    return 0 if target == EMPTY_ADDRESS else start - target


cdef class _FstBuilder:
    """tantivy-fst's Builder with its 10,000 x 2 LRU registry, in C structures."""

    cdef Buf out
    cdef UNode* stack
    cdef Py_ssize_t depth
    cdef Py_ssize_t stack_cap
    cdef Cell* registry
    cdef uint64_t last_addr
    cdef uint64_t count
    cdef const uint8_t* last_key
    cdef Py_ssize_t last_len
    cdef bint has_last_key

    def __cinit__(self):
        cdef Py_ssize_t i
        buf_init(&self.out, 1 << 16)
        self.stack_cap = 64
        self.stack = <UNode*>malloc(self.stack_cap * sizeof(UNode))
        self.registry = <Cell*>malloc(REGISTRY_ROWS * REGISTRY_CELLS * sizeof(Cell))
        if self.stack == NULL or self.registry == NULL:
            raise MemoryError()
        memset(self.stack, 0, self.stack_cap * sizeof(UNode))
        memset(self.registry, 0, REGISTRY_ROWS * REGISTRY_CELLS * sizeof(Cell))
        for i in range(REGISTRY_ROWS * REGISTRY_CELLS):
            self.registry[i].addr = NONE_ADDRESS
        buf_uint(&self.out, FST_VERSION, 8)
        buf_uint(&self.out, 0, 8)
        self.depth = 0
        self.push(False)
        self.last_addr = NONE_ADDRESS
        self.count = 0
        self.has_last_key = False

    def __dealloc__(self):
        cdef Py_ssize_t i
        if self.stack != NULL:
            for i in range(self.stack_cap):
                free(self.stack[i].trans)
            free(self.stack)
        if self.registry != NULL:
            for i in range(REGISTRY_ROWS * REGISTRY_CELLS):
                free(self.registry[i].trans)
            free(self.registry)
        free(self.out.data)

    cdef int push(self, bint final) except -1:
        cdef UNode* grown
        if self.depth == self.stack_cap:
            grown = <UNode*>realloc(self.stack, 2 * self.stack_cap * sizeof(UNode))
            if grown == NULL:
                raise MemoryError()
            memset(grown + self.stack_cap, 0, self.stack_cap * sizeof(UNode))
            self.stack = grown
            self.stack_cap *= 2
        cdef UNode* node = &self.stack[self.depth]
        node.final = final
        node.final_out = 0
        node.ntrans = 0
        node.has_last = False
        node.last_out = 0
        self.depth += 1
        return 0

    cdef int insert(self, const uint8_t* k, Py_ssize_t n, uint64_t value) except -1:
        cdef Py_ssize_t prefix_len
        if self.has_last_key and _compare_raw(self.last_key, self.last_len, k, n) >= 0:
            raise KernelError(
                f"fst keys must strictly increase: {raw_bytes(self.last_key, self.last_len)!r} "
                f"then {raw_bytes(k, n)!r}"
            )
        self.last_key = k
        self.last_len = n
        self.has_last_key = True
        if n == 0:
            self.count = 1
            self.stack[0].final = True
            self.stack[0].final_out = value
            return 0
        prefix_len = self.common_prefix_and_set_output(k, n, &value)
        self.count += 1
        self.compile_from(prefix_len)
        self.add_suffix(k, n, prefix_len, value)
        return 0

    cdef Py_ssize_t common_prefix_and_set_output(self, const uint8_t* k, Py_ssize_t n, uint64_t* value):
        cdef Py_ssize_t i = 0
        cdef uint64_t common, add_prefix
        cdef UNode* node
        while i < n and i < self.depth:
            node = &self.stack[i]
            if not node.has_last or node.last_inp != k[i]:
                break
            i += 1
            common = node.last_out if node.last_out < value[0] else value[0]
            add_prefix = node.last_out - common
            value[0] -= common
            node.last_out = common
            if add_prefix:
                add_output_prefix(&self.stack[i], add_prefix)
        return i

    cdef int compile_from(self, Py_ssize_t istate) except -1:
        cdef uint64_t addr = NONE_ADDRESS
        cdef UNode* node
        while istate + 1 < self.depth:
            self.depth -= 1
            node = &self.stack[self.depth]
            if addr != NONE_ADDRESS:
                freeze_last(node, addr)
            addr = self.compile(node)
        if addr != NONE_ADDRESS:
            freeze_last(&self.stack[self.depth - 1], addr)
        return 0

    cdef int add_suffix(self, const uint8_t* k, Py_ssize_t n, Py_ssize_t prefix, uint64_t value) except -1:
        cdef Py_ssize_t i
        cdef UNode* top
        if prefix >= n:
            return 0
        top = &self.stack[self.depth - 1]
        top.has_last = True
        top.last_inp = k[prefix]
        top.last_out = value
        for i in range(prefix + 1, n):
            self.push(False)
            top = &self.stack[self.depth - 1]
            top.has_last = True
            top.last_inp = k[i]
            top.last_out = 0
        self.push(True)
        return 0

    cdef uint64_t compile(self, UNode* node) except? 1:
        cdef uint64_t h = FNV_OFFSET
        cdef Py_ssize_t i, bucket
        cdef Cell* cells
        cdef Cell tmp
        cdef uint64_t addr
        cdef Py_ssize_t start
        if node.final and node.ntrans == 0 and node.final_out == 0:
            return EMPTY_ADDRESS
        h = (h ^ <uint64_t>node.final) * FNV_PRIME
        h = (h ^ node.final_out) * FNV_PRIME
        for i in range(node.ntrans):
            h = (h ^ <uint64_t>node.trans[i].inp) * FNV_PRIME
            h = (h ^ node.trans[i].out) * FNV_PRIME
            h = (h ^ node.trans[i].addr) * FNV_PRIME
        bucket = <Py_ssize_t>(h % REGISTRY_ROWS)
        cells = &self.registry[bucket * REGISTRY_CELLS]
        for i in range(REGISTRY_CELLS):
            if cells[i].addr != NONE_ADDRESS and cell_equals(&cells[i], node):
                addr = cells[i].addr
                while i > 0:
                    tmp = cells[i - 1]
                    cells[i - 1] = cells[i]
                    cells[i] = tmp
                    i -= 1
                return addr
        start = self.out.len
        self.emit(<uint64_t>start, node)
        self.last_addr = <uint64_t>(self.out.len - 1)
        i = REGISTRY_CELLS - 1
        cell_assign(&cells[i], node)
        while i > 0:
            tmp = cells[i - 1]
            cells[i - 1] = cells[i]
            cells[i] = tmp
            i -= 1
        cells[0].addr = self.last_addr
        return self.last_addr

    cdef int emit(self, uint64_t start, UNode* node) except -1:
        cdef Trans t
        cdef uint8_t idx
        if node.ntrans != 1 or node.final:
            return emit_any_trans(&self.out, start, node)
        t = node.trans[0]
        if t.addr != self.last_addr or t.out != 0:
            return emit_one_trans(&self.out, start, t)
        idx = common_idx(t.inp)
        if idx == 0:
            buf_byte(&self.out, t.inp)
        return buf_byte(&self.out, 0b11000000 | idx)

    cdef bytes finish(self):
        cdef uint64_t root_addr
        self.compile_from(0)
        self.depth -= 1
        root_addr = self.compile(&self.stack[0])
        buf_uint(&self.out, self.count, 8)
        buf_uint(&self.out, root_addr, 8)
        return buf_bytes(&self.out)


cdef inline int _compare_raw(const uint8_t* left, Py_ssize_t ln, const uint8_t* right, Py_ssize_t rn) noexcept:
    cdef int c = memcmp(left, right, ln if ln < rn else rn) if (ln and rn) else 0
    if c != 0:
        return c
    return (ln > rn) - (ln < rn)


cdef int check_keys(bytes key_data, const uint64_t[::1] key_ends) except -1:
    cdef Py_ssize_t i
    cdef uint64_t previous = 0
    cdef uint64_t size = <uint64_t>PyBytes_GET_SIZE(key_data)
    for i in range(key_ends.shape[0]):
        if key_ends[i] < previous or key_ends[i] > size:
            raise KernelError(f"key end {key_ends[i]} out of order or past the key data ({size} bytes)")
        previous = key_ends[i]
    return 0


cdef inline void add_output_prefix(UNode* node, uint64_t prefix) noexcept:
    cdef Py_ssize_t i
    if node.final:
        node.final_out += prefix
    for i in range(node.ntrans):
        node.trans[i].out += prefix
    if node.has_last:
        node.last_out += prefix


cdef inline int freeze_last(UNode* node, uint64_t addr) except -1:
    if node.has_last:
        trans_reserve(&node.trans, &node.cap, node.ntrans + 1)
        node.trans[node.ntrans].inp = node.last_inp
        node.trans[node.ntrans].out = node.last_out
        node.trans[node.ntrans].addr = addr
        node.ntrans += 1
        node.has_last = False
        node.last_out = 0
    return 0


cdef inline bint cell_equals(Cell* cell, UNode* node) noexcept:
    cdef Py_ssize_t i
    if cell.final != node.final or cell.final_out != node.final_out or cell.ntrans != node.ntrans:
        return False
    for i in range(node.ntrans):
        if (
            cell.trans[i].inp != node.trans[i].inp
            or cell.trans[i].out != node.trans[i].out
            or cell.trans[i].addr != node.trans[i].addr
        ):
            return False
    return True


cdef inline int cell_assign(Cell* cell, UNode* node) except -1:
    trans_reserve(&cell.trans, &cell.cap, node.ntrans)
    cell.final = node.final
    cell.final_out = node.final_out
    cell.ntrans = node.ntrans
    if node.ntrans:
        memcpy(cell.trans, node.trans, node.ntrans * sizeof(Trans))
    return 0


cdef int emit_one_trans(Buf* out, uint64_t start, Trans t) except -1:
    cdef int osize = 0
    cdef int tsize
    cdef uint64_t delta
    cdef uint8_t idx
    if t.out:
        osize = pack_size(t.out)
        buf_uint(out, t.out, osize)
    delta = delta_of(start, t.addr)
    tsize = pack_size(delta)
    buf_uint(out, delta, tsize)
    buf_byte(out, <uint8_t>((tsize << 4) | osize))
    idx = common_idx(t.inp)
    if idx == 0:
        buf_byte(out, t.inp)
    return buf_byte(out, 0b10000000 | idx)


cdef int emit_any_trans(Buf* out, uint64_t start, UNode* node) except -1:
    cdef Py_ssize_t n = node.ntrans
    cdef Py_ssize_t i
    cdef int tsize = 0
    cdef int osize = pack_size(node.final_out)
    cdef int size
    cdef bint any_outs = node.final_out != 0
    cdef uint8_t state
    cdef uint8_t index[256]
    for i in range(n):
        size = pack_size(delta_of(start, node.trans[i].addr))
        if size > tsize:
            tsize = size
        size = pack_size(node.trans[i].out)
        if size > osize:
            osize = size
        if node.trans[i].out != 0:
            any_outs = True
    if any_outs:
        if node.final:
            buf_uint(out, node.final_out, osize)
        for i in range(n - 1, -1, -1):
            buf_uint(out, node.trans[i].out, osize)
    for i in range(n - 1, -1, -1):
        buf_uint(out, delta_of(start, node.trans[i].addr), tsize)
    for i in range(n - 1, -1, -1):
        buf_byte(out, node.trans[i].inp)
    if n > TRANS_INDEX_THRESHOLD:
        memset(index, 255, 256)
        for i in range(n):
            index[node.trans[i].inp] = <uint8_t>(i & 0xFF)
        buf_write(out, index, 256)
    buf_byte(out, <uint8_t>((tsize << 4) | (osize if any_outs else 0)))
    state = 0b01000000 if node.final else 0
    if 0 < n <= 63:
        state |= <uint8_t>n
    else:
        buf_byte(out, 1 if n == 256 else <uint8_t>n)
    return buf_byte(out, state)


def fst_build(bytes key_data, const uint64_t[::1] key_ends, values=None):
    """A tantivy-fst map from strictly increasing keys to ``values`` (default: ordinals)."""
    cdef _FstBuilder builder = _FstBuilder()
    cdef const uint8_t* base = <const uint8_t*>PyBytes_AS_STRING(key_data)
    cdef Py_ssize_t i, n = key_ends.shape[0]
    cdef uint64_t start = 0
    cdef const uint64_t[::1] vals
    check_keys(key_data, key_ends)
    if values is None:
        for i in range(n):
            builder.insert(base + start, <Py_ssize_t>(key_ends[i] - start), <uint64_t>i)
            start = key_ends[i]
    else:
        vals = values
        if vals.shape[0] != n:
            raise KernelError("fst_build: keys and values differ in length")
        for i in range(n):
            builder.insert(base + start, <Py_ssize_t>(key_ends[i] - start), vals[i])
            start = key_ends[i]
    return builder.finish()


# --------------------------------------------------------------------------- fst walk


cdef struct Node:
    Py_ssize_t addr
    Py_ssize_t end
    int kind          # 3 one-trans-next, 2 one-trans, 0 any-trans, -1 empty final
    bint final
    uint64_t final_out
    Py_ssize_t ntrans
    int tsize
    int osize
    Py_ssize_t inputs_end
    Py_ssize_t deltas_end
    Py_ssize_t outputs_end
    uint8_t one_inp
    uint64_t one_out
    uint64_t one_target


cdef inline uint64_t read_uint(const uint8_t* data, Py_ssize_t at, int size) noexcept:
    cdef uint64_t v = 0
    cdef int i
    for i in range(size):
        v |= (<uint64_t>data[at + i]) << (8 * i)
    return v


cdef int target_of(Py_ssize_t end, uint64_t delta, uint64_t* target) except -1:
    if delta == 0:
        target[0] = EMPTY_ADDRESS
        return 0
    if delta > <uint64_t>end or end - <Py_ssize_t>delta < 16:
        raise KernelError(f"fst transition target before the node area (node at {end})")
    target[0] = <uint64_t>(end - <Py_ssize_t>delta)
    return 0


cdef int parse_node(const uint8_t* data, Py_ssize_t size, uint64_t uaddr, Node* node) except -1:
    cdef Py_ssize_t addr = <Py_ssize_t>uaddr
    cdef uint8_t state, sizes, idx
    cdef Py_ssize_t at, index_size
    node.addr = addr
    if uaddr == EMPTY_ADDRESS:
        node.kind = -1
        node.final = True
        node.final_out = 0
        node.ntrans = 0
        return 0
    if uaddr < 16 or uaddr >= <uint64_t>(size - 16):
        raise KernelError(f"fst node address {uaddr} outside the node area")
    state = data[addr]
    node.kind = state >> 6
    node.final = False
    node.final_out = 0
    if node.kind == 3:
        idx = state & 0x3F
        node.end = addr if idx else addr - 1
        node.one_inp = _COMMON_INV[idx - 1] if idx else data[addr - 1]
        node.one_out = 0
        node.ntrans = 1
        if node.end - 1 < 16:
            raise KernelError(f"fst node at {addr} runs before the node area")
        node.one_target = <uint64_t>(node.end - 1)
        return 0
    if node.kind == 2:
        idx = state & 0x3F
        at = addr if idx else addr - 1
        node.one_inp = _COMMON_INV[idx - 1] if idx else data[addr - 1]
        sizes = data[at - 1]
        node.tsize = sizes >> 4
        node.osize = sizes & 0x0F
        if node.tsize > 8 or node.osize > 8 or at - 1 - node.tsize - node.osize < 16:
            raise KernelError(f"fst node at {addr} is malformed")
        node.end = at - 1 - node.tsize - node.osize
        node.one_out = read_uint(data, node.end, node.osize) if node.osize else 0
        node.ntrans = 1
        target_of(node.end, read_uint(data, at - 1 - node.tsize, node.tsize), &node.one_target)
        return 0
    node.kind = 0
    node.final = (state & 0b01000000) != 0
    node.ntrans = state & 0x3F
    at = addr
    if node.ntrans == 0:
        at -= 1
        node.ntrans = data[at]
        if node.ntrans == 1:
            node.ntrans = 256
    sizes = data[at - 1]
    node.tsize = sizes >> 4
    node.osize = sizes & 0x0F
    if node.tsize > 8 or node.osize > 8:
        raise KernelError(f"fst node at {addr} has pack sizes over 8")
    index_size = 256 if node.ntrans > TRANS_INDEX_THRESHOLD else 0
    node.inputs_end = at - 1 - index_size
    node.deltas_end = node.inputs_end - node.ntrans
    node.outputs_end = node.deltas_end - node.ntrans * node.tsize
    node.end = node.outputs_end - node.ntrans * node.osize - (node.osize if node.final else 0)
    if node.end < 16:
        raise KernelError(f"fst node at {addr} runs before the node area")
    if node.final and node.osize:
        node.final_out = read_uint(data, node.end, node.osize)
    return 0


cdef int node_trans(const uint8_t* data, Node* node, Py_ssize_t i, uint8_t* inp, uint64_t* out, uint64_t* target) except -1:
    if node.kind != 0:
        inp[0] = node.one_inp
        out[0] = node.one_out
        target[0] = node.one_target
        return 0
    inp[0] = data[node.inputs_end - 1 - i]
    out[0] = read_uint(data, node.outputs_end - (i + 1) * node.osize, node.osize) if node.osize else 0
    return target_of(
        node.end,
        read_uint(data, node.deltas_end - (i + 1) * node.tsize, node.tsize) if node.tsize else 0,
        target,
    )


cdef struct Frame:
    Node node
    uint64_t acc
    Py_ssize_t next_trans


def fst_entries(bytes data):
    """Every (key, value) of a tantivy-fst map, in key order."""
    cdef const uint8_t* d = <const uint8_t*>PyBytes_AS_STRING(data)
    cdef Py_ssize_t size = PyBytes_GET_SIZE(data)
    cdef uint64_t version, count, root
    cdef Buf key_out, ends_out, values_out
    cdef Frame* frames = NULL
    cdef uint8_t* key = NULL
    cdef Py_ssize_t depth = 0
    cdef Py_ssize_t cap = 64
    cdef Py_ssize_t emitted = 0
    cdef Frame* top
    cdef uint8_t inp
    cdef uint64_t out, target
    if size < 32:
        raise KernelError(f"fst of {size} bytes is shorter than its 32-byte frame")
    version = read_uint(d, 0, 8)
    if version != FST_VERSION:
        # version 1 lays out nodes with over 32 transitions differently; tantivy-fst writes 2
        raise KernelError(f"fst format version {version} is not supported (only {FST_VERSION})")
    count = read_uint(d, size - 16, 8)
    root = read_uint(d, size - 8, 8)
    if not (root == EMPTY_ADDRESS and size == 32) and root + 17 != <uint64_t>size:
        raise KernelError(f"fst root address {root} does not end the node area")
    frames = <Frame*>malloc(cap * sizeof(Frame))
    key = <uint8_t*>malloc(cap)
    if frames == NULL or key == NULL:
        free(frames)
        free(key)
        raise MemoryError()
    buf_init(&key_out, 1 << 16)
    buf_init(&ends_out, 1 << 12)
    buf_init(&values_out, 1 << 12)
    try:
        parse_node(d, size, root, &frames[0].node)
        frames[0].acc = 0
        frames[0].next_trans = -1
        depth = 1
        while depth > 0:
            top = &frames[depth - 1]
            if top.next_trans < 0:
                top.next_trans = 0
                if top.node.final:
                    if <uint64_t>emitted >= count:
                        raise KernelError(f"fst holds more keys than its count {count}")
                    buf_write(&key_out, key, depth - 1)
                    buf_u64(&ends_out, <uint64_t>key_out.len)
                    buf_u64(&values_out, top.acc + top.node.final_out)
                    emitted += 1
            if top.next_trans >= top.node.ntrans:
                depth -= 1
                continue
            node_trans(d, &top.node, top.next_trans, &inp, &out, &target)
            top.next_trans += 1
            if target != EMPTY_ADDRESS and target >= <uint64_t>top.node.addr:
                raise KernelError(f"fst transition at {top.node.addr} points forward to {target}")
            if depth == cap:
                frames = <Frame*>_grow(frames, 2 * cap * sizeof(Frame))
                key = <uint8_t*>_grow(key, 2 * cap)
                cap *= 2
                top = &frames[depth - 1]
            key[depth - 1] = inp
            parse_node(d, size, target, &frames[depth].node)
            frames[depth].acc = top.acc + out
            frames[depth].next_trans = -1
            depth += 1
        if <uint64_t>emitted != count:
            raise KernelError(f"fst holds {emitted} keys, its footer says {count}")
        return buf_bytes(&key_out), buf_u64_array(&ends_out), buf_u64_array(&values_out)
    finally:
        free(frames)
        free(key)
        free(key_out.data)
        free(ends_out.data)
        free(values_out.data)


cdef struct NearFrame:
    Node node
    Py_ssize_t next_trans
    Py_ssize_t row          # the depth whose row slot holds this key's row
    Py_ssize_t before       # the depth of the row before it, -1 for none
    int64_t last            # the key's last character, -1 for none
    int need                # bytes of the unfinished character (0: none)
    int have
    int64_t partial         # its code point so far


cdef inline bint near_char(NearFrame* parent, uint8_t byte, NearFrame* child) noexcept:
    """Extend the parent's key by ``byte`` into ``child``'s character state; False when
    the bytes are no UTF-8. ``child.need == 0`` afterwards: a character completed."""
    cdef int64_t cp
    if parent.need == 0:
        if byte < 0x80:
            child.need, child.have, child.partial = 0, 0, byte
            return True
        if 0xC2 <= byte < 0xE0:
            child.need, child.have, child.partial = 2, 1, byte & 0x1F
        elif 0xE0 <= byte < 0xF0:
            child.need, child.have, child.partial = 3, 1, byte & 0x0F
        elif 0xF0 <= byte < 0xF5:
            child.need, child.have, child.partial = 4, 1, byte & 0x07
        else:
            return False
        return True
    if not 0x80 <= byte < 0xC0:
        return False
    cp = (parent.partial << 6) | (byte & 0x3F)
    child.have = parent.have + 1
    child.partial = cp
    child.need = parent.need
    if child.have < child.need:
        # reject overlong and out-of-range starts as soon as the second byte shows them
        if child.have == 2 and child.need == 3 and (cp < 0x20 or 0x360 <= cp < 0x380):
            return False
        if child.have == 2 and child.need == 4 and (cp < 0x10 or cp >= 0x110):
            return False
        return True
    if child.need == 3 and (cp < 0x800 or 0xD800 <= cp < 0xE000):
        return False
    if child.need == 4 and (cp < 0x10000 or cp > 0x10FFFF):
        return False
    child.need = 0
    return True


def fst_near(const uint8_t[::1] data, str term, int distance, Py_ssize_t most):
    """The keys of a tantivy-fst map within ``distance`` edits of ``term`` (see the
    pure twin), in key order, at most ``most + 1`` of them."""
    cdef Py_ssize_t size = data.shape[0]
    cdef const uint8_t* d
    cdef uint64_t version, root
    cdef Py_ssize_t n = len(term)
    cdef Py_ssize_t width = n + 1
    # Past n + distance characters every cell exceeds the distance: keys are shorter.
    cdef Py_ssize_t cap = 4 * (n + distance) + 2
    cdef int64_t* chars = NULL
    cdef int* rows = NULL
    cdef NearFrame* frames = NULL
    cdef uint8_t* key = NULL
    cdef Py_ssize_t depth, j
    cdef NearFrame* top
    cdef NearFrame* child
    cdef uint8_t inp
    cdef uint64_t out, target
    cdef int* row
    cdef int* prev
    cdef int* before
    cdef int best, low
    found = []
    if distance < 0:
        raise ValueError(f"distance={distance!r} must be >= 0")
    if size < 32:
        raise KernelError(f"fst of {size} bytes is shorter than its 32-byte frame")
    d = &data[0]
    version = read_uint(d, 0, 8)
    if version != FST_VERSION:
        raise KernelError(f"fst format version {version} is not supported (only {FST_VERSION})")
    root = read_uint(d, size - 8, 8)
    if not (root == EMPTY_ADDRESS and size == 32) and root + 17 != <uint64_t>size:
        raise KernelError(f"fst root address {root} does not end the node area")
    chars = <int64_t*>malloc((n + 1) * sizeof(int64_t))
    rows = <int*>malloc((cap + 1) * width * sizeof(int))
    frames = <NearFrame*>malloc((cap + 1) * sizeof(NearFrame))
    key = <uint8_t*>malloc(cap + 1)
    if chars == NULL or rows == NULL or frames == NULL or key == NULL:
        free(chars)
        free(rows)
        free(frames)
        free(key)
        raise MemoryError()
    try:
        for j in range(n):
            chars[j] = ord(term[j])
        for j in range(width):
            rows[j] = j
        parse_node(d, size, root, &frames[0].node)
        frames[0].next_trans = -1
        frames[0].row = 0
        frames[0].before = -1
        frames[0].last = -1
        frames[0].need = 0
        frames[0].have = 0
        frames[0].partial = 0
        depth = 1
        while depth > 0:
            top = &frames[depth - 1]
            if top.next_trans < 0:
                top.next_trans = 0
                if top.node.final and top.need == 0 and rows[top.row * width + n] <= distance:
                    found.append(PyBytes_FromStringAndSize(<char*>key, depth - 1))
                    if len(found) > most:
                        return found
            if top.next_trans >= top.node.ntrans:
                depth -= 1
                continue
            node_trans(d, &top.node, top.next_trans, &inp, &out, &target)
            top.next_trans += 1
            if target != EMPTY_ADDRESS and target >= <uint64_t>top.node.addr:
                raise KernelError(f"fst transition at {top.node.addr} points forward to {target}")
            if depth > cap:
                continue
            child = &frames[depth]
            if not near_char(top, inp, child):
                continue
            if child.need != 0:
                child.row, child.before, child.last = top.row, top.before, top.last
            else:
                prev = &rows[top.row * width]
                row = &rows[depth * width]
                before = &rows[top.before * width] if top.before >= 0 else NULL
                row[0] = prev[0] + 1
                low = row[0]
                for j in range(1, width):
                    best = prev[j] + 1
                    if row[j - 1] + 1 < best:
                        best = row[j - 1] + 1
                    if prev[j - 1] + (child.partial != chars[j - 1]) < best:
                        best = prev[j - 1] + (child.partial != chars[j - 1])
                    if (
                        before != NULL and j > 1 and child.partial == chars[j - 2]
                        and top.last == chars[j - 1] and before[j - 2] + 1 < best
                    ):
                        best = before[j - 2] + 1
                    row[j] = best
                    if best < low:
                        low = best
                if low > distance:
                    continue
                child.row, child.before, child.last = depth, top.row, child.partial
            key[depth - 1] = inp
            parse_node(d, size, target, &child.node)
            child.next_trans = -1
            depth += 1
        return found
    finally:
        free(chars)
        free(rows)
        free(frames)
        free(key)


cdef void* _grow(void* ptr, size_t size) except NULL:
    cdef void* grown = realloc(ptr, size)
    if grown == NULL:
        raise MemoryError()
    return grown


# --------------------------------------------------------------------------- TermInfoStore


ctypedef const uint64_t[::1] U64View


cdef int check_contiguous(
    U64View ps, U64View pl, U64View qs, U64View ql, Py_ssize_t start, Py_ssize_t stop, str what
) except -1:
    cdef Py_ssize_t i
    for i in range(start + 1, stop):
        if ps[i] != ps[i - 1] + pl[i - 1] or qs[i] != qs[i - 1] + ql[i - 1]:
            raise KernelError(f"term {i}: postings/positions are not contiguous, {what} cannot hold them")
    return 0


cdef int check_columns(tuple cols, Py_ssize_t n) except -1:
    if len(cols) != 5 or any(len(col) != n for col in cols):
        raise KernelError(f"expected five columns of {n} values")
    return 0


def tis_encode(tuple cols):
    """The FST form's TermInfoStore: blocks of 256, bit-packed relative to each first term."""
    cdef U64View df = cols[0]
    cdef U64View ps = cols[1]
    cdef U64View pl = cols[2]
    cdef U64View qs = cols[3]
    cdef U64View ql = cols[4]
    cdef Py_ssize_t count = df.shape[0]
    cdef Py_ssize_t first, stop, i
    cdef uint64_t ps0, qs0, postings_end, positions_end, max_df
    cdef int nb_df, nb_p, nb_q
    cdef Buf metas, bits
    cdef Bits bp
    check_columns(cols, count)
    buf_init(&metas, 64)
    buf_init(&bits, 1024)
    try:
        for first in range(0, count, TIS_BLOCK_LEN):
            stop = first + TIS_BLOCK_LEN if first + TIS_BLOCK_LEN < count else count
            check_contiguous(ps, pl, qs, ql, first, stop, "a TermInfoStore")
            ps0 = ps[first]
            qs0 = qs[first]
            postings_end = ps[stop - 1] + pl[stop - 1] - ps0
            positions_end = qs[stop - 1] + ql[stop - 1] - qs0
            max_df = 0
            for i in range(first + 1, stop):
                if df[i] > max_df:
                    max_df = df[i]
            nb_df = num_bits(max_df)
            nb_p = num_bits(postings_end)
            nb_q = num_bits(positions_end)
            buf_uint(&metas, <uint64_t>bits.len, 8)
            buf_uint(&metas, df[first], 4)
            buf_uint(&metas, ps0, 8)
            buf_uint(&metas, pl[first], 4)
            buf_uint(&metas, qs0, 8)
            buf_uint(&metas, ql[first], 4)
            buf_byte(&metas, <uint8_t>nb_df)
            buf_byte(&metas, <uint8_t>nb_p)
            buf_byte(&metas, <uint8_t>nb_q)
            bp.mini = 0
            bp.written = 0
            for i in range(first + 1, stop):
                bits_write(&bp, &bits, ps[i] - ps0, nb_p)
                bits_write(&bp, &bits, qs[i] - qs0, nb_q)
                bits_write(&bp, &bits, df[i], nb_df)
            bits_write(&bp, &bits, postings_end, nb_p)
            bits_write(&bp, &bits, positions_end, nb_q)
            bits_flush(&bp, &bits)
        head = (<uint64_t>metas.len).to_bytes(8, "little") + (<uint64_t>count).to_bytes(8, "little")
        return head + buf_bytes(&metas) + buf_bytes(&bits)
    finally:
        free(metas.data)
        free(bits.data)


cdef tuple columns_of(Buf* cols):
    return (
        buf_u64_array(&cols[0]),
        buf_u64_array(&cols[1]),
        buf_u64_array(&cols[2]),
        buf_u64_array(&cols[3]),
        buf_u64_array(&cols[4]),
    )



def tis_decode(bytes data):
    """Decode a whole TermInfoStore back to its five columns."""
    cdef const uint8_t* d = <const uint8_t*>PyBytes_AS_STRING(data)
    cdef Py_ssize_t size = PyBytes_GET_SIZE(data)
    cdef uint64_t metas_len, count, nblocks, block
    cdef Py_ssize_t m, bits_size, n, j, base, at, total, k
    cdef const uint8_t* bits
    cdef uint64_t offset, df0, ps0, pl0, qs0, ql0, start_p, start_q, next_p, next_q, freq
    cdef int nb_df, nb_p, nb_q
    cdef Buf cols[5]
    if size < 16:
        raise KernelError("TermInfoStore shorter than its 16-byte header")
    metas_len = read_uint(d, 0, 8)
    count = read_uint(d, 8, 8)
    nblocks = (count + TIS_BLOCK_LEN - 1) // TIS_BLOCK_LEN
    if metas_len != nblocks * 39 or 16 + metas_len > <uint64_t>size:
        raise KernelError(f"TermInfoStore: {metas_len} bytes of block metas for {count} terms")
    bits = d + 16 + metas_len
    bits_size = size - 16 - <Py_ssize_t>metas_len
    for k in range(5):
        buf_init(&cols[k], 8 * count + 8)
    try:
        for block in range(nblocks):
            m = 16 + <Py_ssize_t>block * 39
            offset = read_uint(d, m, 8)
            df0 = read_uint(d, m + 8, 4)
            ps0 = read_uint(d, m + 12, 8)
            pl0 = read_uint(d, m + 20, 4)
            qs0 = read_uint(d, m + 24, 8)
            ql0 = read_uint(d, m + 32, 4)
            nb_df = d[m + 36]
            nb_p = d[m + 37]
            nb_q = d[m + 38]
            if nb_df > 64 or nb_p > 64 or nb_q > 64:
                raise KernelError("TermInfoStore block with a bit width over 64")
            n = TIS_BLOCK_LEN if count - block * TIS_BLOCK_LEN > TIS_BLOCK_LEN else <Py_ssize_t>(count - block * TIS_BLOCK_LEN)
            total = nb_df + nb_p + nb_q
            if offset > <uint64_t>bits_size:
                raise KernelError("TermInfoStore bit-packed data is truncated")
            base = <Py_ssize_t>offset * 8
            if (base + (n - 1) * total + nb_p + nb_q + 7) // 8 > bits_size:
                raise KernelError("TermInfoStore bit-packed data is truncated")
            buf_u64(&cols[0], df0)
            buf_u64(&cols[1], ps0)
            buf_u64(&cols[2], pl0)
            buf_u64(&cols[3], qs0)
            buf_u64(&cols[4], ql0)
            at = base
            start_p = ps0 + bits_at(bits, bits_size, at, nb_p)
            start_q = qs0 + bits_at(bits, bits_size, at + nb_p, nb_q)
            for j in range(n - 1):
                freq = bits_at(bits, bits_size, at + nb_p + nb_q, nb_df)
                at += total
                next_p = ps0 + bits_at(bits, bits_size, at, nb_p)
                next_q = qs0 + bits_at(bits, bits_size, at + nb_p, nb_q)
                if next_p < start_p or next_q < start_q:
                    raise KernelError("TermInfoStore term ends before it starts")
                buf_u64(&cols[0], freq)
                buf_u64(&cols[1], start_p)
                buf_u64(&cols[2], next_p - start_p)
                buf_u64(&cols[3], start_q)
                buf_u64(&cols[4], next_q - start_q)
                start_p = next_p
                start_q = next_q
        return columns_of(cols)
    finally:
        for k in range(5):
            free(cols[k].data)


# --------------------------------------------------------------------------- SSTable blocks


cdef int write_block(Buf* out, Buf* payload, object compress) except -1:
    cdef bytes raw, packed
    cdef Py_ssize_t n
    if compress is not None and payload.len > SST_ZSTD_MIN:
        raw = buf_bytes(payload)
        packed = compress(raw)
        n = PyBytes_GET_SIZE(packed)
        if n < payload.len:
            buf_uint(out, <uint64_t>(n + 1), 4)
            buf_byte(out, 1)
            return buf_write(out, <const uint8_t*>PyBytes_AS_STRING(packed), n)
    buf_uint(out, <uint64_t>(payload.len + 1), 4)
    buf_byte(out, 0)
    return buf_write(out, payload.data, payload.len)


cdef int flush_block(
    Buf* out, Buf* payload, Buf* keybuf, list blocks, bytes last_key,
    U64View df, U64View ps, U64View pl, U64View qs, U64View ql,
    Py_ssize_t first, Py_ssize_t stop, object compress,
) except -1:
    cdef Py_ssize_t i, start
    check_contiguous(ps, pl, qs, ql, first, stop, "an SSTable block")
    payload.len = 0
    buf_vint(payload, <uint64_t>(stop - first))
    buf_vint(payload, ps[first])
    buf_vint(payload, qs[first])
    for i in range(first, stop):
        buf_vint(payload, df[i])
        buf_vint(payload, pl[i])
        buf_vint(payload, ql[i])
    buf_write(payload, keybuf.data, keybuf.len)
    start = out.len
    write_block(out, payload, compress)
    blocks.append((last_key, start, out.len, first))
    return 0


def sst_encode(bytes key_data, const uint64_t[::1] key_ends, tuple cols, compress):
    """SSTable blocks for sorted keys: (bytes, [(last_key, start, end, first_ordinal)])."""
    cdef U64View df = cols[0]
    cdef U64View ps = cols[1]
    cdef U64View pl = cols[2]
    cdef U64View qs = cols[3]
    cdef U64View ql = cols[4]
    cdef const uint8_t* base = <const uint8_t*>PyBytes_AS_STRING(key_data)
    cdef list blocks = []
    cdef Buf out, payload, keybuf
    cdef Py_ssize_t i, n = key_ends.shape[0], first = 0, keep, add, limit, prev_len = 0, klen
    cdef Py_ssize_t last_len = 0
    cdef uint64_t start = 0
    cdef const uint8_t* k
    cdef const uint8_t* prev = NULL
    cdef const uint8_t* last = NULL
    check_keys(key_data, key_ends)
    check_columns(cols, n)
    buf_init(&out, 1 << 16)
    buf_init(&payload, 8192)
    buf_init(&keybuf, 8192)
    try:
        for i in range(n):
            k = base + start
            klen = <Py_ssize_t>(key_ends[i] - start)
            start = key_ends[i]
            if i > 0 and _compare_raw(last, last_len, k, klen) >= 0:
                raise KernelError(
                    f"SSTable keys must strictly increase: {raw_bytes(last, last_len)!r} "
                    f"then {raw_bytes(k, klen)!r}"
                )
            last = k
            last_len = klen
            limit = klen if klen < prev_len else prev_len
            keep = 0
            while keep < limit and prev[keep] == k[keep]:
                keep += 1
            add = klen - keep
            if keep < 16 and add < 16:
                buf_byte(&keybuf, <uint8_t>(keep | (add << 4)))
            else:
                buf_byte(&keybuf, 1)
                buf_leb128(&keybuf, <uint64_t>keep)
                buf_leb128(&keybuf, <uint64_t>add)
            buf_write(&keybuf, k + keep, add)
            prev = k
            prev_len = klen
            if keybuf.len > SST_BLOCK_LEN:
                flush_block(&out, &payload, &keybuf, blocks, raw_bytes(k, klen), df, ps, pl, qs, ql, first, i + 1, compress)
                first = i + 1
                prev_len = 0
                keybuf.len = 0
        if keybuf.len:
            flush_block(&out, &payload, &keybuf, blocks, raw_bytes(last, last_len), df, ps, pl, qs, ql, first, n, compress)
        return buf_bytes(&out), blocks
    finally:
        free(out.data)
        free(payload.data)
        free(keybuf.data)


cdef inline uint64_t read_vint(const uint8_t* d, Py_ssize_t end, Py_ssize_t* pos) except? 0xFFFFFFFFFFFFFFFF:
    cdef uint64_t value = 0
    cdef int shift = 0
    cdef uint8_t byte
    while pos[0] < end and shift < 64:
        byte = d[pos[0]]
        pos[0] += 1
        value |= (<uint64_t>(byte & 0x7F)) << shift
        if byte & 0x80:
            return value
        shift += 7
    raise KernelError("truncated VInt in an SSTable block")


cdef inline uint64_t read_leb128(const uint8_t* d, Py_ssize_t end, Py_ssize_t* pos) except? 0xFFFFFFFFFFFFFFFF:
    cdef uint64_t value = 0
    cdef int shift = 0
    cdef uint8_t byte
    while pos[0] < end and shift < 64:
        byte = d[pos[0]]
        pos[0] += 1
        value |= (<uint64_t>(byte & 0x7F)) << shift
        if not byte & 0x80:
            return value
        shift += 7
    raise KernelError("truncated keep/add varint in an SSTable block")


cdef Py_ssize_t decode_block(const uint8_t* d, Py_ssize_t end, Buf* keys, Buf* ends, Buf* cols, Buf* key) except -1:
    cdef Py_ssize_t pos = 0
    cdef uint64_t count, j, postings, positions, plen, qlen, keep, add
    cdef uint8_t header
    count = read_vint(d, end, &pos)
    if count == 0:
        raise KernelError("SSTable block with no terms")
    if count > <uint64_t>end:
        raise KernelError(f"SSTable block claims {count} terms in {end} bytes")
    postings = read_vint(d, end, &pos)
    positions = read_vint(d, end, &pos)
    for j in range(count):
        buf_u64(&cols[0], read_vint(d, end, &pos))
        plen = read_vint(d, end, &pos)
        qlen = read_vint(d, end, &pos)
        buf_u64(&cols[1], postings)
        buf_u64(&cols[2], plen)
        buf_u64(&cols[3], positions)
        buf_u64(&cols[4], qlen)
        postings += plen
        positions += qlen
    key.len = 0
    for j in range(count):
        if pos >= end:
            raise KernelError("SSTable block keys are truncated")
        header = d[pos]
        pos += 1
        if header == 1:
            keep = read_leb128(d, end, &pos)
            add = read_leb128(d, end, &pos)
        else:
            keep = header & 0x0F
            add = header >> 4
        if keep > <uint64_t>key.len or add > <uint64_t>(end - pos):
            raise KernelError("SSTable key keeps more than the previous key or runs past its block")
        key.len = <Py_ssize_t>keep
        buf_write(key, d + pos, <Py_ssize_t>add)
        pos += <Py_ssize_t>add
        buf_write(keys, key.data, key.len)
        buf_u64(ends, <uint64_t>keys.len)
    if pos != end:
        raise KernelError(f"SSTable block payload has {end - pos} bytes after its last key")
    return <Py_ssize_t>count


def sst_decode(bytes data, Py_ssize_t end, decompress):
    """Decode every block in ``data[:end]`` (end marker included).

    Returns (key_data, key_ends, columns, [(start, stop, payload_len, compressed, terms)]).
    """
    cdef const uint8_t* d = <const uint8_t*>PyBytes_AS_STRING(data)
    cdef Py_ssize_t pos = 0, stop, count, k
    cdef uint64_t length
    cdef uint8_t flag
    cdef list blocks = []
    cdef bytes payload
    cdef Buf key, keys, ends
    cdef Buf cols[5]
    if end > PyBytes_GET_SIZE(data) or end < 0:
        raise KernelError(f"SSTable blocks end {end} outside the data")
    buf_init(&key, 256)
    buf_init(&keys, 1 << 16)
    buf_init(&ends, 1 << 12)
    for k in range(5):
        buf_init(&cols[k], 1 << 12)
    try:
        while True:
            if pos + 4 > end:
                raise KernelError(f"SSTable block header at {pos} runs past the blocks' end {end}")
            length = read_uint(d, pos, 4)
            if length <= 1:
                pos += 4
                break
            if <uint64_t>(end - pos - 4) < length:
                raise KernelError(f"SSTable block at {pos} ({length} bytes) runs past {end}")
            stop = pos + 4 + <Py_ssize_t>length
            flag = d[pos + 4]
            if flag == 1:
                payload = decompress(data[pos + 5 : stop])
                count = decode_block(
                    <const uint8_t*>PyBytes_AS_STRING(payload), PyBytes_GET_SIZE(payload),
                    &keys, &ends, cols, &key,
                )
                blocks.append((pos, stop, PyBytes_GET_SIZE(payload), True, count))
            elif flag == 0:
                count = decode_block(d + pos + 5, stop - pos - 5, &keys, &ends, cols, &key)
                blocks.append((pos, stop, stop - pos - 5, False, count))
            else:
                raise KernelError(f"SSTable block at {pos}: unknown compression flag {flag}")
            pos = stop
        if pos != end:
            raise KernelError(f"SSTable end marker at {pos - 4}, but the index starts at {end}")
        return buf_bytes(&keys), buf_u64_array(&ends), columns_of(cols), blocks
    finally:
        free(key.data)
        free(keys.data)
        free(ends.data)
        for k in range(5):
            free(cols[k].data)
