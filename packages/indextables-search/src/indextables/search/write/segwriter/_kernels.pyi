import numpy as np

MODE_SIMPLE: int
MODE_WHITESPACE: int
MODE_RAW: int
NOGIL: bool
BLOCK_LEN: int

def tokenize(
    data: bytes | memoryview,
    offsets: bytes | memoryview,
    valid: bytes | memoryview,
    mode: int,
    limit: int,
) -> tuple[bytes, bytes, bytes, bytes]: ...

# The inversion, postings and positions (numpy arrays of the dtypes the twin names).
def invert_tokens(
    ranks: np.ndarray, rows: np.ndarray, positions: np.ndarray, groups: int
) -> tuple[bytes, bytes, bytes, bytes] | None: ...
def postings(
    doc_starts: np.ndarray,
    docs: np.ndarray,
    term_freqs: np.ndarray,
    fieldnorms: np.ndarray,
    norms: np.ndarray,
    record: int,
) -> tuple[bytes, bytes]: ...
def positions(
    doc_starts: np.ndarray, term_freqs: np.ndarray, positions: np.ndarray
) -> tuple[bytes, bytes]: ...
def lz4_block(src: bytes | memoryview) -> bytes: ...

# The doc store's blocks, column-wise (see ``_kernels_py.store_blocks``).
def store_blocks(
    heads: bytes,
    widths: bytes,
    datas: list[bytes | memoryview],
    offsets: list[bytes | memoryview],
    valids: list[bytes | memoryview],
    num_docs: int,
    block_size: int,
    lz4: bool,
) -> tuple[bytes, bytes]: ...
