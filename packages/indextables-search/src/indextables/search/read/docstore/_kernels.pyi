from collections.abc import Sequence
from typing import Any

from indextables.search.read.docstore._kernels_py import SlotBuffers

KIND_CODES: dict[int, tuple[int, ...]]
NOGIL: bool

def read_vint(data: bytes, pos: int) -> tuple[int, int]: ...
def lz4_decompress(src: bytes | memoryview, size: int) -> bytes: ...

class Checkpoints:
    def __init__(
        self,
        data: Any,
        doc_starts: Sequence[int],
        doc_ends: Sequence[int],
        byte_starts: Sequence[int],
        byte_ends: Sequence[int],
    ) -> None: ...
    def __len__(self) -> int: ...
    def block_of(self, doc: int, lo: int = 0) -> int: ...

class ColumnBuilder:
    decompressed: int
    whole_blocks: int
    def __init__(
        self,
        kinds: Sequence[int],
        multi: Sequence[bool],
        field_ids: Sequence[int],
        names: Sequence[str],
        version: int,
    ) -> None: ...
    def add(self, block: bytes, doc_ids: list[int], lo: int, hi: int, first_doc: int) -> None: ...
    def add_lz4(
        self,
        data: Any,
        doc_starts: Sequence[int],
        doc_ends: Sequence[int],
        byte_starts: Sequence[int],
        byte_ends: Sequence[int],
        doc_ids: list[int],
        cache: Any = None,
        cache_key: Any = None,
    ) -> None: ...
    def add_lz4_parts(
        self, parts: list[tuple[Checkpoints, list[int] | range, Any]], cache: Any = None
    ) -> None: ...
    def finish(self, *, owned: bool = False) -> list[SlotBuffers]: ...

class OwnedBuffer:
    """A kernel-built buffer handed over without a copy (the buffer protocol)."""

    def __buffer__(self, flags: int, /) -> memoryview: ...
    def __len__(self) -> int: ...
    def isascii(self) -> bool: ...
