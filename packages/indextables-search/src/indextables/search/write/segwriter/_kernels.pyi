MODE_SIMPLE: int
MODE_WHITESPACE: int
MODE_RAW: int
NOGIL: bool

def tokenize(
    data: bytes | memoryview,
    offsets: bytes | memoryview,
    valid: bytes | memoryview,
    mode: int,
    limit: int,
) -> tuple[bytes, bytes, bytes, bytes]: ...
def lz4_block(src: bytes | memoryview) -> bytes: ...
