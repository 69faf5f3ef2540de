"""The one place that chooses the term-dictionary kernel implementation.

``INDEXTABLES_TERMDICT_IMPL`` selects it: ``cython`` (the compiled
``_kernels`` extension; failing to load it is an error), ``python`` (the pure
twin ``_kernels_py``) or ``auto`` (the default: Cython when it was built,
otherwise the pure twin). :data:`CYTHON_MODULE` says which one loaded.
"""

from __future__ import annotations

import contextlib
import importlib
import os
from collections.abc import Iterator
from types import ModuleType
from typing import Final, Literal

from indextables.search.splits.termdict.errors import TermDictError

__all__ = ["CYTHON_MODULE", "IMPL_ENV", "IMPL_NAME", "ImplName", "kernels", "load", "using"]

ImplName = Literal["cython", "python"]
IMPL_ENV: Final = "INDEXTABLES_TERMDICT_IMPL"
_MODULES: Final[dict[str, str]] = {
    "cython": "indextables.search.splits.termdict._kernels",
    "python": "indextables.search.splits.termdict._kernels_py",
}


def load(name: ImplName) -> ModuleType:
    """Import one kernel implementation by name.

    Raises:
        TermDictError: ``cython`` was asked for but the extension is not built.
    """
    try:
        return importlib.import_module(_MODULES[name])
    except ImportError as exc:
        raise TermDictError(
            f"{IMPL_ENV}={name}: the compiled term-dictionary kernels are not available ({exc}); "
            "reinstall indextables-search with Cython present or use 'python'"
        ) from exc


def _choose() -> tuple[ImplName, ModuleType]:
    wanted = os.environ.get(IMPL_ENV, "auto").strip().lower() or "auto"
    if wanted == "cython":
        return "cython", load("cython")
    if wanted == "python":
        return "python", load("python")
    if wanted != "auto":
        raise TermDictError(f"{IMPL_ENV}={wanted!r}: expected auto, cython or python")
    try:
        return "cython", load("cython")
    except TermDictError:
        return "python", load("python")


IMPL_NAME: ImplName
_active: ModuleType
IMPL_NAME, _active = _choose()
CYTHON_MODULE: Final = IMPL_NAME == "cython"


def kernels() -> ModuleType:
    """The kernel module in use (``fst_build``, ``fst_entries``, ``tis_*``, ``sst_*``)."""
    return _active


@contextlib.contextmanager
def using(name: ImplName) -> Iterator[ModuleType]:
    """Run a block with a given implementation (tests compare both twins this way)."""
    global _active
    previous = _active
    _active = load(name)
    try:
        yield _active
    finally:
        _active = previous
