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

    ``implementation`` is ``"cython"``, ``"python"``, or ``None`` when
    indextables-avrostate is not installed (or exposes no marker yet);
    ``cython_active`` is True only for the compiled decoder.
    """

    implementation: str | None
    cython_active: bool


def installed_packages() -> list[PackageVersion]:
    """Every installed ``indextables-*`` distribution with its version, sorted by name."""
    found: dict[str, str] = {}
    for dist in metadata.distributions():
        name = (dist.metadata["Name"] or "").lower().replace("_", "-")
        if name.startswith(_PREFIX):
            found.setdefault(name, dist.version)
    return [PackageVersion(name, found[name]) for name in sorted(found)]


def decoder_info() -> DecoderInfo:
    """Ask indextables.avrostate which decoder it selected."""
    try:
        module = importlib.import_module("indextables.avrostate")
    except ImportError:
        return DecoderInfo(implementation=None, cython_active=False)
    implementation = getattr(module, "DECODER_IMPLEMENTATION", None)
    if not isinstance(implementation, str):
        return DecoderInfo(implementation=None, cython_active=False)
    return DecoderInfo(implementation=implementation, cython_active=implementation == "cython")


def python_version() -> str:
    """The running interpreter's version, e.g. ``3.11.9``."""
    return platform.python_version()
