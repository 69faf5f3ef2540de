"""What is installed: every indextables distribution and the Avro decoder in use."""

from __future__ import annotations

import importlib
import platform
from dataclasses import dataclass
from importlib import metadata

__all__ = ["DecoderInfo", "PackageVersion", "decoder_info", "installed_packages"]

_PREFIX = "indextables-"


@dataclass(frozen=True, slots=True)
class PackageVersion:
    """One installed distribution of the indextables family."""

    name: str
    version: str


@dataclass(frozen=True, slots=True)
class DecoderInfo:
    """Which Avro state decoder ``indextables.avrostate`` runs.

    ``implementation`` is ``"cython"`` or ``"python"`` as
    ``indextables.avrostate.impl`` chose it, or ``None`` when it could not be
    loaded (``problem`` then says why); ``cython_active`` is True only for the
    compiled decoder (``impl.CYTHON_MODULE``).
    """

    implementation: str | None
    cython_active: bool
    problem: str | None = None


def installed_packages() -> list[PackageVersion]:
    """Every installed ``indextables-*`` distribution with its version, sorted by name."""
    found: dict[str, str] = {}
    for dist in metadata.distributions():
        name = (dist.metadata["Name"] or "").lower().replace("_", "-")
        if name.startswith(_PREFIX):
            found.setdefault(name, dist.version)
    return [PackageVersion(name, found[name]) for name in sorted(found)]


def decoder_info() -> DecoderInfo:
    """Ask ``indextables.avrostate.impl`` which decoder it selected at import."""
    try:
        impl = importlib.import_module("indextables.avrostate.impl")
    except Exception as error:  # a broken build or a bad INDEXTABLES_AVROSTATE_IMPL
        return DecoderInfo(implementation=None, cython_active=False, problem=str(error))
    name = getattr(impl, "IMPL_NAME", None)
    cython = getattr(impl, "CYTHON_MODULE", False)
    return DecoderInfo(
        implementation=name if isinstance(name, str) else None,
        cython_active=cython is True,
    )


def python_version() -> str:
    """The running interpreter's version, e.g. ``3.11.9``."""
    return platform.python_version()
