"""The one place that chooses the segment writer's kernel implementation.

``INDEXTABLES_SEGWRITER_IMPL`` selects it (see :mod:`indextables.avrostate.twins`):
``cython`` (the compiled ``_kernels`` extension), ``python`` (the pure twin
``_kernels_py``) or ``auto`` (the default: Cython when built, else the twin),
read at each call.
"""

from __future__ import annotations

from types import ModuleType
from typing import Final

from indextables.avrostate.twins import ImplName, Twins
from indextables.search.write.segwriter.errors import SegmentWriteError

__all__ = ["IMPL_ENV", "ImplName", "kernels", "load"]

IMPL_ENV: Final = "INDEXTABLES_SEGWRITER_IMPL"
_TWINS: Final = Twins(
    env=IMPL_ENV,
    cython="indextables.search.write.segwriter._kernels",
    python="indextables.search.write.segwriter._kernels_py",
    error=SegmentWriteError,
    what="the compiled segment-writer kernels",
    hint="reinstall indextables-search with Cython present or use 'python'",
)
load = _TWINS.load


def kernels() -> ModuleType:
    """The kernels chosen by ``INDEXTABLES_SEGWRITER_IMPL`` (read at each call)."""
    return _TWINS.choose()[1]
