"""A companion source's bytes, read through indextables-storage.

A source on object storage (``s3://``, ``abfss://``, ``az://``...) is read
through an :class:`~indextables.protocol.store.ObjectStore` opened from the
same storage options as the index table (``storage.<name>`` or the reference's
``spark.indextables.aws.*`` / ``spark.indextables.azure.*`` keys): its endpoint,
credentials, timeouts and retries apply, and its errors are redacted. A source in
another account gets its own keys, ``spark.indextables.companion.parquet.aws.*`` /
``.azure.*`` (:mod:`.sourcecreds`). The
store is wrapped as a read-only pyarrow filesystem (:class:`StoreFileSystem`),
so listing (``list``), size checks (``head``) and every footer, page and row
group read (``get_range``) of the build and read paths go through it.

A local path (or ``file://``) and a scheme no store handles are read by
pyarrow's own filesystem, as before.

Delta tables are listed by ``deltalake``: :func:`delta_storage_options` gives it
the same endpoint and credentials in object_store's names, and
:func:`redact_source_error` removes them from any message.
"""

from __future__ import annotations

import functools
import io
from collections.abc import Iterable, Mapping
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs

from indextables.protocol.errors import ObjectNotFoundError
from indextables.protocol.store import ObjectInfo, ObjectStore
from indextables.search.companion.sourcecreds import source_options
from indextables.search.errors import CompanionSourceError
from indextables.storage.secrets import reveal

__all__ = [
    "StoreFileSystem",
    "delta_storage_options",
    "redact_source_error",
    "source_filesystem",
]

_LOCAL = ("file",)


def source_filesystem(
    root: str, options: Mapping[str, str] | None = None
) -> tuple[pafs.FileSystem, str]:
    """The filesystem a source root is read through, and the root's path on it.

    Args:
        root: the source table root (a local path or a URI).
        options: the build's or read's options: the index table's storage options,
            or the source's own ``spark.indextables.companion.parquet.*`` keys
            (:mod:`.sourcecreds`) when given.

    Raises:
        CompanionSourceError: a root that cannot be opened (the message redacted).
    """
    from indextables.storage.uris import scheme_of

    scheme = scheme_of(root)
    if scheme in _LOCAL or scheme not in _store_schemes():
        return _pyarrow_filesystem(root)
    key = tuple(sorted((str(k), str(v)) for k, v in source_options(options).items()))
    return _store_filesystem(root, key)


@functools.cache
def _store_schemes() -> frozenset[str]:
    """The schemes indextables-storage opens (read once: it scans the entry points)."""
    from indextables.storage.registry import registered_schemes

    return frozenset(registered_schemes())


def _pyarrow_filesystem(root: str) -> tuple[pafs.FileSystem, str]:
    try:
        filesystem, path = pafs.FileSystem.from_uri(root)
    except (pa.ArrowInvalid, ValueError):
        filesystem, path = pafs.LocalFileSystem(), root
    except (OSError, pa.ArrowException) as exc:
        raise CompanionSourceError(f"source root {root!r} cannot be opened: {exc}") from None
    return filesystem, path.rstrip("/") or path


@functools.lru_cache(maxsize=16)
def _store_filesystem(root: str, options: tuple[tuple[str, str], ...]) -> tuple[Any, str]:
    """One store per root and options, kept (a client per source, not per split read)."""
    from indextables.search.table.tableaccess import open_table_store

    try:
        store = open_table_store(root.rstrip("/"), dict(options))
    except Exception as exc:  # the store's own errors: configuration, scheme
        raise CompanionSourceError(
            f"source root {root!r} cannot be opened: {redact_source_error(exc, dict(options))}"
        ) from None
    base = "source"
    return pafs.PyFileSystem(StoreFileSystem(store, base)), base


class StoreFileSystem(pafs.FileSystemHandler):  # type: ignore[misc]  # pyarrow is untyped
    """A read-only pyarrow filesystem over an object store rooted at the source root.

    Paths are ``<base>/<key>``: ``base`` stands for the store's root.
    """

    def __init__(self, store: ObjectStore, base: str) -> None:
        self.store = store
        self.base = base
        self._sizes: dict[str, int] = {}

    def _key(self, path: str) -> str:
        clean = path.strip("/")
        if clean == self.base:
            return ""
        if not clean.startswith(self.base + "/"):
            raise FileNotFoundError(f"{path!r} is not under the source root")
        return clean[len(self.base) + 1 :]

    def _file(self, path: str, info: ObjectInfo) -> pafs.FileInfo:
        return pafs.FileInfo(
            path, pafs.FileType.File, size=info.size, mtime_ns=info.last_modified_ms * 1_000_000
        )

    def get_type_name(self) -> str:
        return "indextables-store"

    def normalize_path(self, path: str) -> str:
        return path

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StoreFileSystem) and other.store is self.store

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return id(self.store)

    def get_file_info(self, paths: Iterable[str]) -> list[pafs.FileInfo]:
        return [self._info(path) for path in paths]

    def _info(self, path: str) -> pafs.FileInfo:
        key = self._key(path)
        if key:
            try:
                info = self.store.head(key)
            except ObjectNotFoundError:
                self._sizes.pop(key, None)
            else:
                self._sizes[key] = info.size
                return self._file(path, info)
        prefix = f"{key}/" if key else ""
        if next(iter(self.store.list(prefix)), None) is not None:
            return pafs.FileInfo(path, pafs.FileType.Directory)
        return pafs.FileInfo(path, pafs.FileType.NotFound)

    def get_file_info_selector(self, selector: pafs.FileSelector) -> list[pafs.FileInfo]:
        top = selector.base_dir.rstrip("/")
        key = self._key(top)
        prefix = f"{key}/" if key else ""
        files: list[pafs.FileInfo] = []
        folders: set[str] = set()
        for info in self.store.list(prefix):
            rest = info.key[len(prefix) :]
            parts = rest.split("/")
            if not rest or not all(parts):
                continue
            if not selector.recursive and len(parts) > 1:
                folders.add(parts[0])
                continue
            folders.update("/".join(parts[:n]) for n in range(1, len(parts)))
            files.append(self._file(f"{top}/{rest}", info))
        if not files and not folders and not selector.allow_not_found:
            raise FileNotFoundError(f"no source files under {selector.base_dir!r}")
        dirs = [pafs.FileInfo(f"{top}/{d}", pafs.FileType.Directory) for d in sorted(folders)]
        return [*dirs, *files]

    def open_input_file(self, path: str) -> pa.NativeFile:
        key = self._key(path)
        size = self._sizes.get(key)
        if size is None:
            size = self.store.head(key).size
            self._sizes[key] = size
        return pa.PythonFile(_RangeReader(self.store, key, size), mode="r")

    def open_input_stream(self, path: str) -> pa.NativeFile:
        return self.open_input_file(path)

    def _read_only(self, *_: object) -> Any:
        raise CompanionSourceError("a companion's source is read, never written")

    create_dir = delete_dir = delete_dir_contents = delete_root_dir_contents = _read_only
    delete_file = move = copy_file = open_output_stream = open_append_stream = _read_only


class _RangeReader(io.RawIOBase):
    """A seekable file over one object: each read is one ranged ``get_range``."""

    def __init__(self, store: ObjectStore, key: str, size: int) -> None:
        super().__init__()
        self._store = store
        self._key = key
        self._size = size
        self._position = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        start = {io.SEEK_SET: 0, io.SEEK_CUR: self._position, io.SEEK_END: self._size}[whence]
        self._position = max(0, start + offset)
        return self._position

    def read(self, size: int | None = -1) -> bytes:
        end = self._size if size is None or size < 0 else min(self._size, self._position + size)
        if end <= self._position:
            return b""
        data = self._store.get_range(self._key, self._position, end)
        self._position += len(data)
        return data

    def readall(self) -> bytes:
        return self.read(-1)

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(memoryview(buffer).cast("B")))
        memoryview(buffer).cast("B")[: len(data)] = data
        return len(data)


def _storage_settings(options: Mapping[str, str]) -> dict[str, object]:
    from indextables.search.table.tableaccess import storage_options
    from indextables.storage.options import canonical

    return canonical(storage_options(options))


def _plain(value: object) -> str:
    return str(reveal(value))


def _duration(seconds: object) -> str:
    return f"{max(1, round(float(_plain(seconds)) * 1000))}ms"


_S3_KEYS = {
    "endpoint_url": "AWS_ENDPOINT_URL",
    "region": "AWS_REGION",
    "access_key_id": "AWS_ACCESS_KEY_ID",
    "secret_access_key": "AWS_SECRET_ACCESS_KEY",
    "session_token": "AWS_SESSION_TOKEN",
    "profile": "AWS_PROFILE",
}
_AZURE_KEYS = {
    "account_name": "AZURE_STORAGE_ACCOUNT_NAME",
    "account_key": "AZURE_STORAGE_ACCOUNT_KEY",
    "sas_token": "AZURE_STORAGE_SAS_KEY",
    "endpoint_url": "AZURE_STORAGE_ENDPOINT",
    "tenant_id": "AZURE_STORAGE_TENANT_ID",
    "client_id": "AZURE_STORAGE_CLIENT_ID",
    "client_secret": "AZURE_STORAGE_CLIENT_SECRET",
    "bearer_token": "AZURE_STORAGE_TOKEN",
}
_S3_SCHEMES = ("s3", "s3a", "s3n")
_AZURE_SCHEMES = ("abfss", "abfs", "wasbs", "wasb", "az")


def delta_storage_options(root: str, options: Mapping[str, str] | None) -> dict[str, str]:
    """``deltalake``'s ``storage_options`` for ``root`` from the index table's options.

    S3: endpoint, region, static keys, session token, profile; Azure: account,
    key, SAS, endpoint, service principal, bearer token; both: timeouts, and
    ``allow_http`` for an ``http://`` endpoint. Empty for a local root.

    Raises:
        CompanionSourceError: an invalid storage option (the message redacted), or an
            Azure connection string (give the account and key instead).
    """
    from indextables.storage.uris import scheme_of

    scheme = scheme_of(root)
    if scheme not in _S3_SCHEMES + _AZURE_SCHEMES:
        return {}
    options = source_options(options)
    try:
        settings = _storage_settings(options)
    except Exception as exc:
        raise CompanionSourceError(
            f"storage options of source {root!r}: {redact_source_error(exc, options or {})}"
        ) from None
    names, prefix = (_S3_KEYS, "AWS_") if scheme in _S3_SCHEMES else (_AZURE_KEYS, "AZURE_")
    if prefix == "AZURE_" and "connection_string" in settings:
        raise CompanionSourceError(
            "a Delta source on Azure is opened by deltalake, which takes no connection "
            "string: give spark.indextables.azure.accountName and accountKey (or a SAS token)"
        )
    result = {names[k]: _plain(v) for k, v in settings.items() if k in names}
    endpoint = settings.get("endpoint_url")
    if endpoint is not None and _plain(endpoint).lower().startswith("http://"):
        result[f"{prefix}ALLOW_HTTP"] = "true"
    if "read_timeout" in settings:
        result["timeout"] = _duration(settings["read_timeout"])
    if "connect_timeout" in settings:
        result["connect_timeout"] = _duration(settings["connect_timeout"])
    return result


def redact_source_error(error: BaseException | str, *options: Mapping[str, object]) -> str:
    """``error``'s text without the credentials of any of ``options`` (by name, or held
    by a ``Secret``), nor any other credential ``redact_text`` recognises."""
    from indextables.storage.redaction import is_secret_key, redact_text

    hidden = [
        _plain(value)
        for given in options
        for name, value in given.items()
        if is_secret_key(str(name).rsplit(".", 1)[-1]) or hasattr(value, "reveal")
    ]
    return redact_text(str(error), hidden)
