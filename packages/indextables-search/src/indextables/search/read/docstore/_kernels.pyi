from typing import Any

def read_vint(data: bytes, pos: int) -> tuple[int, int]: ...
def lz4_decompress(src: bytes, size: int) -> bytes: ...
def decode_block(
    block: bytes,
    doc_positions: list[int],
    slots: dict[int, int],
    num_slots: int,
    version: int,
) -> list[list[list[tuple[int, Any]]]]: ...
