"""The one place that chooses the FileEntry decoder implementation.

``INDEXTABLES_AVROSTATE_IMPL`` selects it: ``cython`` (the compiled
``_decode`` extension; failing to load it is an error), ``python`` (the pure
twin ``_decode_py``) or ``auto`` (the default: Cython when it was built,
otherwise the pure twin). :data:`CYTHON_MODULE` says which one loaded, so a
test can assert that a broken build never silently runs the slow path.
"""

from __future__ import annotations

import contextlib
import importlib
import os
from collections.abc import Iterator
from types import ModuleType
from typing import Final, Literal

from indextables.avrostate.errors import AvroStateError

__all__ = ["CYTHON_MODULE", "IMPL_ENV", "IMPL_NAME", "ImplName", "decoder", "load", "using"]

ImplName = Literal["cython", "python"]
IMPL_ENV: Final = "INDEXTABLES_AVROSTATE_IMPL"
_MODULES: Final[dict[str, str]] = {
    "cython": "indextables.avrostate._decode",
    "python": "indextables.avrostate._decode_py",
}


def load(name: ImplName) -> ModuleType:
    """Import one decoder implementation by name.

    Raises:
        AvroStateError: ``cython`` was asked for but the extension is not built.
    """
    try:
        return importlib.import_module(_MODULES[name])
    except ImportError as exc:
        raise AvroStateError(
            f"{IMPL_ENV}={name}: the compiled decoder is not available ({exc}); "
            "build it with `python setup.py build_ext --inplace` or use 'python'"
        ) from exc


def _choose() -> tuple[ImplName, ModuleType]:
    wanted = os.environ.get(IMPL_ENV, "auto").strip().lower() or "auto"
    if wanted == "cython":
        return "cython", load("cython")
    if wanted == "python":
        return "python", load("python")
    if wanted != "auto":
        raise AvroStateError(f"{IMPL_ENV}={wanted!r}: expected auto, cython or python")
    try:
        return "cython", load("cython")
    except AvroStateError:
        return "python", load("python")


IMPL_NAME: ImplName
_active: ModuleType
IMPL_NAME, _active = _choose()
CYTHON_MODULE: Final = IMPL_NAME == "cython"


def decoder() -> ModuleType:
    """Return the decoder module in use (``scan_block``, ``decode_record``, ``map_column``)."""
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
