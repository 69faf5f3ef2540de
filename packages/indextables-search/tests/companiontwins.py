"""The companion kernels' twins for tests: every test runs with both (a missing Cython
build fails, never skips)."""

from __future__ import annotations

from types import ModuleType

import pytest

from indextables.search.companion import _kernels_py

TWINS = pytest.mark.parametrize("name", ["python", "cython"])


def load(name: str) -> ModuleType:
    """The pure twin, or the compiled one (which must be built: a failure otherwise)."""
    if name == "python":
        return _kernels_py
    from indextables.search.companion import _kernels  # type: ignore[attr-defined]

    return _kernels


def varint(value: int) -> bytes:
    """Unsigned LEB128 (the Snappy preamble, the hybrid's run headers)."""
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)
