"""``open_store``: pick the store for a URI's scheme, built-ins first, then entry points."""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points

from indextables.protocol.store import ObjectStore
from indextables.storage import factories
from indextables.storage.errors import UnsupportedSchemeError
from indextables.storage.uris import scheme_of

__all__ = ["ENTRY_POINT_GROUP", "StoreFactory", "open_store", "registered_schemes"]

#: The entry point group through which the protocol finds stores.
ENTRY_POINT_GROUP = "indextables.stores"

StoreFactory = Callable[..., ObjectStore]

_BUILTIN: dict[str, StoreFactory] = {
    "file": factories.local_store,
    "memory": factories.memory_store,
    "s3": factories.s3_store,
    "s3a": factories.s3_store,
    "s3n": factories.s3_store,
    "abfss": factories.azure_store,
    "abfs": factories.azure_store,
    "wasbs": factories.azure_store,
    "wasb": factories.azure_store,
    "az": factories.azure_store,
}


def _from_entry_points(scheme: str) -> StoreFactory | None:
    for entry in entry_points(group=ENTRY_POINT_GROUP, name=scheme):
        factory: StoreFactory = entry.load()
        return factory
    return None


def registered_schemes() -> list[str]:
    """Every scheme ``open_store`` accepts: built-ins and installed entry points."""
    names = {entry.name for entry in entry_points(group=ENTRY_POINT_GROUP)}
    return sorted(names | set(_BUILTIN))


def open_store(uri: str, **options: object) -> ObjectStore:
    """Open the object store rooted at ``uri``.

    Args:
        uri: a local path or ``file://`` URI, ``memory://name[/root]``,
            ``s3://bucket/prefix`` (or ``s3a://``), ``abfss://container@account.dfs.core.windows.net/path``
            or ``az://container/path``.
        **options: backend options by canonical name (``endpoint_url``, ``region``,
            ``access_key_id``, ``path_style``, ``read_timeout``, ...) or by the
            reference's ``spark.indextables.aws.*`` / ``spark.indextables.azure.*`` keys.
            Options of other backends are ignored; see docs/storage.md.

    Returns:
        An :class:`~indextables.protocol.store.ObjectStore`.

    Raises:
        UnsupportedSchemeError: no store handles the scheme.
        ConfigurationError: an invalid URI or option.

    Example:
        >>> store = open_store("memory://open-store-example")
        >>> store.put("k", b"v")
        >>> open_store("memory://open-store-example").get("k")
        b'v'
    """
    scheme = scheme_of(uri)
    factory = _BUILTIN.get(scheme) or _from_entry_points(scheme)
    if factory is None:
        raise UnsupportedSchemeError(
            f"no object store for scheme {scheme!r}; known: {registered_schemes()}"
        )
    return factory(uri, **options)
