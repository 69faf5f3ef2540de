"""The one place that chooses the term-dictionary kernel implementation.

``INDEXTABLES_TERMDICT_IMPL`` selects it (see :mod:`indextables.avrostate.twins`):
``cython`` (the compiled ``_kernels`` extension), ``python`` (the pure twin
``_kernels_py``) or ``auto`` (the default). The choice is made at import;
:data:`CYTHON_MODULE` says which one loaded.
"""

from __future__ import annotations

from types import ModuleType
from typing import Final

from indextables.avrostate.twins import ImplName, Twins
from indextables.search.splits.termdict.errors import TermDictError

__all__ = ["CYTHON_MODULE", "IMPL_ENV", "IMPL_NAME", "ImplName", "kernels", "load", "using"]

IMPL_ENV: Final = "INDEXTABLES_TERMDICT_IMPL"
_TWINS: Final = Twins(
    env=IMPL_ENV,
    cython="indextables.search.splits.termdict._kernels",
    python="indextables.search.splits.termdict._kernels_py",
    error=TermDictError,
    what="the compiled term-dictionary kernels",
    hint="reinstall indextables-search with Cython present or use 'python'",
)
load = _TWINS.load
using = _TWINS.using

IMPL_NAME: ImplName
_chosen: ModuleType
IMPL_NAME, _chosen = _TWINS.choose()
CYTHON_MODULE: Final = IMPL_NAME == "cython"


def kernels() -> ModuleType:
    """The kernel module in use (``fst_build``, ``fst_entries``, ``tis_*``, ``sst_*``)."""
    return _TWINS.current(_chosen)
