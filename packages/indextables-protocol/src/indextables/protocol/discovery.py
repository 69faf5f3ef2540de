"""Finding stores and state formats among installed packages.

Stores come from the entry point group ``indextables.stores`` (name: URI
scheme, value: ``factory(uri, **options) -> ObjectStore``), state formats from
``indextables.state_formats`` (name: format name, value: a class or factory
called without arguments). The protocol never imports those packages.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib.metadata import entry_points
from typing import Any, Final

from indextables.protocol.errors import PluginNotFoundError
from indextables.protocol.stateformat import StateFormat
from indextables.protocol.store import ObjectStore

__all__ = [
    "DEFAULT_STATE_FORMAT",
    "STATE_FORMATS_GROUP",
    "STORES_GROUP",
    "load_state_format",
    "open_store",
    "uri_scheme",
]

STORES_GROUP: Final = "indextables.stores"
STATE_FORMATS_GROUP: Final = "indextables.state_formats"
DEFAULT_STATE_FORMAT: Final = "avro-state"
_STORE_PACKAGE: Final = {
    "s3": "indextables-storage[s3]",
    "s3a": "indextables-storage[s3]",
    "abfss": "indextables-storage[azure]",
    "az": "indextables-storage[azure]",
}


def uri_scheme(uri: str) -> str:
    """The scheme of ``uri``; plain paths are ``file``."""
    if "://" in uri:
        return uri.split("://", 1)[0].lower()
    return "file"


# Scanning installed distributions for entry points takes ~10 ms here, once
# per lookup: found plugins are kept for the life of the process. Misses are
# not kept, so a package installed later is still found.
_FOUND: dict[tuple[str, str], Any] = {}


def _entry_point(group: str, name: str) -> Any:
    found = _FOUND.get((group, name))
    if found is not None:
        return found
    for point in entry_points(group=group):
        if point.name == name:
            found = _FOUND[(group, name)] = point.load()
            return found
    return None


def open_store(uri: str, options: Mapping[str, Any] | None = None) -> ObjectStore:
    """Open the object store rooted at ``uri`` through its scheme's entry point.

    Raises:
        PluginNotFoundError: no installed package handles the scheme.
    """
    scheme = uri_scheme(uri)
    factory = _entry_point(STORES_GROUP, scheme)
    if factory is None:
        package = _STORE_PACKAGE.get(scheme, "indextables-storage")
        raise PluginNotFoundError(
            f"no object store for scheme {scheme!r} ({uri}): install {package}"
        )
    store: ObjectStore = factory(uri, **dict(options or {}))
    return store


def load_state_format(name: str = DEFAULT_STATE_FORMAT) -> StateFormat:
    """Return the state format registered under ``name``.

    Raises:
        PluginNotFoundError: no installed package provides it.
    """
    found = _entry_point(STATE_FORMATS_GROUP, name)
    if found is None:
        raise PluginNotFoundError(
            f"no state format {name!r} is installed: install indextables-avrostate"
        )
    fmt: StateFormat = found() if isinstance(found, type) else found
    return fmt
