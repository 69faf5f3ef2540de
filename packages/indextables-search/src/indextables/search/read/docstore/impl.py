"""The one place that chooses the doc-store kernel implementation.

``INDEXTABLES_DOCSTORE_IMPL`` selects it: ``cython`` (the compiled ``_kernels``
extension; failing to load it is an error), ``python`` (the pure twin
``_kernels_py``) or ``auto`` (the default: Cython when built, else the twin).
``off`` keeps the read paths on tantivy-py's per-document ``searcher.doc``
(:func:`indextables.search.read.bulkrows.enabled`); the decoder itself then
uses ``auto``.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import Final, Literal

from indextables.search.read.docstore.errors import DocStoreError

__all__ = ["IMPL_ENV", "ImplName", "kernels", "load"]

ImplName = Literal["cython", "python"]
IMPL_ENV: Final = "INDEXTABLES_DOCSTORE_IMPL"
_MODULES: Final[dict[str, str]] = {
    "cython": "indextables.search.read.docstore._kernels",
    "python": "indextables.search.read.docstore._kernels_py",
}


def load(name: ImplName) -> ModuleType:
    """Import one kernel implementation by name.

    Raises:
        DocStoreError: ``cython`` was asked for but the extension is not built.
    """
    try:
        return importlib.import_module(_MODULES[name])
    except ImportError as exc:
        raise DocStoreError(
            f"{IMPL_ENV}={name}: the compiled doc-store kernels are not available ({exc}); "
            "reinstall indextables-search with Cython present or use 'python'"
        ) from exc


def kernels() -> ModuleType:
    """The kernels chosen by ``INDEXTABLES_DOCSTORE_IMPL`` (read at each call)."""
    wanted = os.environ.get(IMPL_ENV, "auto").strip().lower() or "auto"
    if wanted in ("cython", "python"):
        return load(wanted)  # type: ignore[arg-type]
    if wanted not in ("auto", "off"):
        raise DocStoreError(f"{IMPL_ENV}={wanted!r}: expected 'cython', 'python', 'auto' or 'off'")
    try:
        return load("cython")
    except DocStoreError:
        return load("python")
