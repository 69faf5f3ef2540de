"""The one place that chooses the FileEntry decoder implementation.

``INDEXTABLES_AVROSTATE_IMPL`` selects it (see :mod:`.twins`): ``cython``
(the compiled ``_decode`` extension), ``python`` (the pure twin
``_decode_py``) or ``auto`` (the default). The choice is made at import;
:data:`CYTHON_MODULE` says which one loaded, so a test can assert that a
broken build never silently runs the slow path.
"""

from __future__ import annotations

from types import ModuleType
from typing import Final

from indextables.avrostate.errors import AvroStateError
from indextables.avrostate.twins import ImplName, Twins

__all__ = ["CYTHON_MODULE", "IMPL_ENV", "IMPL_NAME", "ImplName", "decoder", "load", "using"]

IMPL_ENV: Final = "INDEXTABLES_AVROSTATE_IMPL"
_TWINS: Final = Twins(
    env=IMPL_ENV,
    cython="indextables.avrostate._decode",
    python="indextables.avrostate._decode_py",
    error=AvroStateError,
    what="the compiled decoder",
    hint="build it with `python setup.py build_ext --inplace` or use 'python'",
)
load = _TWINS.load
using = _TWINS.using

IMPL_NAME: ImplName
_chosen: ModuleType
IMPL_NAME, _chosen = _TWINS.choose()
CYTHON_MODULE: Final = IMPL_NAME == "cython"


def decoder() -> ModuleType:
    """Return the decoder module in use (``scan_block``, ``decode_record``, ``map_column``)."""
    return _TWINS.current(_chosen)
