"""The one place that chooses the doc-store kernel implementation.

``INDEXTABLES_DOCSTORE_IMPL`` selects it (see :mod:`indextables.avrostate.twins`):
``cython`` (the compiled ``_kernels`` extension), ``python`` (the pure twin
``_kernels_py``) or ``auto`` (the default: Cython when built, else the twin),
read at each call. ``off`` keeps the read paths on tantivy-py's per-document
``searcher.doc`` (:func:`indextables.search.read.bulkrows.enabled`); the
decoder itself then chooses as ``auto`` does.
"""

from __future__ import annotations

from types import ModuleType
from typing import Final

from indextables.avrostate.twins import ImplName, Twins
from indextables.search.read.docstore.errors import DocStoreError

__all__ = ["IMPL_ENV", "ImplName", "kernels", "load"]

IMPL_ENV: Final = "INDEXTABLES_DOCSTORE_IMPL"
_TWINS: Final = Twins(
    env=IMPL_ENV,
    cython="indextables.search.read.docstore._kernels",
    python="indextables.search.read.docstore._kernels_py",
    error=DocStoreError,
    what="the compiled doc-store kernels",
    hint="reinstall indextables-search with Cython present or use 'python'",
    also_auto=("off",),
)
load = _TWINS.load


def kernels() -> ModuleType:
    """The kernels chosen by ``INDEXTABLES_DOCSTORE_IMPL`` (read at each call)."""
    return _TWINS.choose()[1]
