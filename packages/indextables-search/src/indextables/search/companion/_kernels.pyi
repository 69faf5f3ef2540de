from collections.abc import Sequence

def byte_array_starts(data: bytes | memoryview, count: int) -> bytes: ...
def hybrid_at(data: bytes | bytearray | memoryview, width: int, wanted: Sequence[int]) -> bytes: ...
def cut_page(
    levels: bytes | bytearray | memoryview,
    values: bytes | bytearray | memoryview,
    rows: Sequence[int],
    count: int,
    *,
    optional: bool,
    dictionary_encoded: bool,
    width: int,
    dictionary: bytes | bytearray | memoryview | None = None,
    starts: Sequence[int] | None = None,
    dictionary_count: int = 0,
) -> tuple[bytes, bytes, int]: ...
def page_header(
    data: bytes | bytearray | memoryview,
) -> tuple[
    int,
    int,
    int | None,
    int | None,
    int | None,
    int | None,
    int | None,
    int | None,
    int | None,
    bool,
]: ...

SNAPPY_BLOCK: int

def snappy_blocks(data: bytes | bytearray | memoryview) -> tuple[int, bytes] | None: ...
def snappy_inflate(data: bytes | bytearray | memoryview, size: int) -> memoryview: ...
def block_value_starts(values: bytes | bytearray | memoryview, at: int, blocks: int) -> bytes: ...
def mapped_cut(
    compressed: bytes | bytearray | memoryview,
    offsets: Sequence[int],
    first_value: Sequence[int],
    first_offset: Sequence[int],
    total: int,
    levels: bytes | bytearray | memoryview,
    rows: Sequence[int],
    count: int,
    optional: bool,
) -> tuple[bytes, bytes, int] | None: ...

CutParts = tuple[int, int, bytes | bytearray | memoryview, bytes | bytearray | memoryview]

def arrow_parts(
    pages: list[CutParts], optional: bool, width: int, large: bool
) -> tuple[bytes | None, bytes, bytes | None, int]: ...
