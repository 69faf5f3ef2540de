"""The current data files of a companion's source: Parquet directories, Delta and Iceberg tables.

Each file is named by its path relative to the source root, normalised (``/``
separators, no ``./``, percent-decoded as it is on storage), so the anti-join of
:mod:`.sync` compares the same file the same way whatever root it is reached by.
A file's :attr:`SourceFile.identity` holds what must stay the same for its
indexed rows to stay right: its size and the rows a Delta deletion vector or Iceberg
position delete files delete.
"""

from __future__ import annotations

import hashlib
import posixpath
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.fs as pafs

from indextables.search.companion.deletions import DeletedRows, delta_deletions
from indextables.search.companion.icebergdeletes import (
    equality_delete_files,
    equality_error,
    position_deletions,
)
from indextables.search.companion.sourceio import (
    delta_storage_options,
    redact_source_error,
    source_filesystem,
)
from indextables.search.errors import CompanionSourceError

__all__ = [
    "SOURCE_FORMATS",
    "SourceFile",
    "SourceListing",
    "list_source",
    "normalise_path",
    "source_filesystem",
    "source_signature",
]

SOURCE_FORMATS = ("delta", "parquet", "iceberg")


@dataclass(frozen=True, slots=True)
class SourceFile:
    """One data file of the source.

    Attributes:
        path: relative to the source root, normalised (:func:`normalise_path`).
        size: its size in bytes.
        partition_values: partition column -> value string (None for null).
        deletion_vector: the identity of the rows a Delta deletion vector or Iceberg
            position delete files delete (a digest of them); None without any.
        deleted: those rows (never indexed); None without any.
    """

    path: str
    size: int
    partition_values: Mapping[str, str | None] = field(default_factory=dict)
    deletion_vector: str | None = None
    deleted: DeletedRows | None = field(default=None, compare=False, repr=False)

    @property
    def identity(self) -> str:
        """What must be unchanged for the file's indexed rows to be current."""
        text = f"size={self.size}"
        return text if self.deletion_vector is None else f"{text};dv={self.deletion_vector}"


@dataclass(frozen=True, slots=True)
class SourceListing:
    """A source table as of one version.

    Attributes:
        root: the table root the files' paths are relative to.
        format: ``delta``, ``parquet`` or ``iceberg``.
        version: the Delta version or Iceberg snapshot id listed (None for Parquet
            directories and snapshot-less Iceberg tables).
        schema: the data columns and the partition columns, as Arrow types.
        partition_columns: the partition columns, in order.
        files: the data files (those a ``where`` on partitions keeps).
    """

    root: str
    format: str
    version: int | None
    schema: pa.Schema
    partition_columns: tuple[str, ...]
    files: tuple[SourceFile, ...]


def normalise_path(path: str) -> str:
    """``a/./b//c`` -> ``a/b/c``; percent-escapes decoded (storage's own spelling)."""
    text = unquote(path.replace("\\", "/"))
    clean = posixpath.normpath(text).lstrip("/")
    if clean.startswith("../") or clean == "..":
        raise CompanionSourceError(f"source file path {path!r} leaves the table root")
    return clean


def list_source(
    root: str,
    source_format: str,
    *,
    version: int | None = None,
    options: Mapping[str, str] | None = None,
) -> SourceListing:
    """List the source table's current data files (``version``: Delta time travel).

    ``options``: the index table's options; a source on object storage is reached
    with their storage options (endpoint, credentials: see :mod:`.sourceio`).

    Raises:
        CompanionSourceError: nothing readable at ``root``, or a format not supported.
    """
    if source_format == "parquet":
        if version is not None:
            raise CompanionSourceError("FROM VERSION applies to Delta sources, not Parquet")
        return _parquet_listing(root, options)
    if source_format == "delta":
        return _delta_listing(root, version, options)
    if source_format == "iceberg":
        return _iceberg_listing(root, version, options)
    raise CompanionSourceError(
        f"source format {source_format!r} is not one of {', '.join(SOURCE_FORMATS)}"
    )


def source_signature(
    root: str,
    source_format: str,
    *,
    version: int | None = None,
    options: Mapping[str, str] | None = None,
) -> str:
    """A short text that changes whenever the source's data may have changed, read
    more cheaply than :func:`list_source` (a streaming sync skips a cycle when equal).

    Delta: the newest commit number (one listing of ``_delta_log``); Parquet: the
    data files' paths, sizes and modification times (one recursive listing, no file
    opened); Iceberg: the table's current metadata file. A fixed ``version`` is
    its own signature.

    Raises:
        CompanionSourceError: nothing readable at ``root``.
    """
    if version is not None:
        return f"{source_format}:version={version}"
    if source_format == "delta":
        return f"delta:version={_delta_head(root, options)}"
    if source_format == "parquet":
        return "parquet:" + _directory_digest(root, options)
    if source_format == "iceberg":
        return "iceberg:" + _iceberg_metadata_location(root)
    raise CompanionSourceError(
        f"source format {source_format!r} is not one of {', '.join(SOURCE_FORMATS)}"
    )


def _delta_head(root: str, options: Mapping[str, str] | None) -> int:
    filesystem, base = source_filesystem(root, options)
    try:
        infos = filesystem.get_file_info(pafs.FileSelector(f"{base}/_delta_log"))
    except FileNotFoundError:
        raise CompanionSourceError(f"no Delta table at {root!r} (no _delta_log)") from None
    except (OSError, pa.ArrowException) as exc:
        raise CompanionSourceError(
            f"Delta table {root!r} cannot be listed: {redact_source_error(exc, options or {})}"
        ) from None
    versions = [
        int(name[:-5])
        for name in (posixpath.basename(i.path) for i in infos)
        if name.endswith(".json") and name[:-5].isdigit()
    ]
    if not versions:
        raise CompanionSourceError(f"no Delta table at {root!r} (no commit in _delta_log)")
    return max(versions)


def _directory_digest(root: str, options: Mapping[str, str] | None) -> str:
    filesystem, base = source_filesystem(root, options)
    try:
        infos = filesystem.get_file_info(pafs.FileSelector(base, recursive=True))
    except FileNotFoundError:
        raise CompanionSourceError(f"Parquet source {root!r} is not a directory") from None
    except (OSError, pa.ArrowException) as exc:
        raise CompanionSourceError(
            f"Parquet source {root!r} cannot be listed: {redact_source_error(exc, options or {})}"
        ) from None
    lines = sorted(
        f"{i.path}\t{i.size}\t{i.mtime_ns}" for i in infos if i.type == pafs.FileType.File
    )
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()


def _iceberg_metadata_location(name: str) -> str:
    table = _iceberg_table(name)
    return str(table.metadata_location)


def _parquet_listing(root: str, options: Mapping[str, str] | None) -> SourceListing:
    import pyarrow.dataset as ds

    filesystem, base = source_filesystem(root, options)
    try:
        info = filesystem.get_file_info(base)
    except (OSError, pa.ArrowException) as exc:
        text = redact_source_error(exc, options or {})
        raise CompanionSourceError(f"Parquet source {root!r} cannot be listed: {text}") from None
    if info.type != pafs.FileType.Directory:
        raise CompanionSourceError(f"Parquet source {root!r} is not a directory")
    try:
        dataset = ds.dataset(
            base,
            filesystem=filesystem,
            format="parquet",
            partitioning=ds.HivePartitioning.discover(infer_dictionary=False),
        )
    except (pa.ArrowInvalid, OSError) as exc:
        raise CompanionSourceError(
            f"Parquet source {root!r} cannot be read: {redact_source_error(exc, options or {})}"
        ) from None
    paths = list(dataset.files)
    partition_columns = _hive_columns(dataset, [posixpath.relpath(p, base) for p in paths])
    try:
        sizes = {i.path: i.size for i in filesystem.get_file_info(paths)}
    except (OSError, pa.ArrowException) as exc:
        text = redact_source_error(exc, options or {})
        raise CompanionSourceError(f"Parquet source {root!r} cannot be listed: {text}") from None
    files = []
    for path in sorted(paths):
        relative = normalise_path(posixpath.relpath(path, base))
        files.append(
            SourceFile(
                path=relative,
                size=int(sizes[path] or 0),
                partition_values=_hive_values(relative, partition_columns),
            )
        )
    return SourceListing(
        root=root,
        format="parquet",
        version=None,
        schema=dataset.schema,
        partition_columns=partition_columns,
        files=tuple(files),
    )


_HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"


def _hive_columns(dataset: Any, relative_paths: Sequence[str]) -> tuple[str, ...]:
    """The partition columns: discovered names that really are ``name=`` folders.

    pyarrow's Hive discovery reports the whole file schema as the partitioning
    of a directory without ``key=value`` folders; only folder keys count.
    """
    partitioning = dataset.partitioning
    if partitioning is None:
        return ()
    keys = {
        part.partition("=")[0]
        for path in relative_paths
        for part in path.split("/")[:-1]
        if "=" in part
    }
    return tuple(name for name in partitioning.schema.names if name in keys)


def _hive_values(relative: str, columns: Sequence[str]) -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for part in relative.split("/")[:-1]:
        if "=" in part:
            key, _, value = part.partition("=")
            found[key] = None if value == _HIVE_NULL else value
    return {c: found.get(c) for c in columns}


def _delta_listing(
    root: str, version: int | None, options: Mapping[str, str] | None
) -> SourceListing:
    try:
        from deltalake import DeltaTable
        from deltalake.exceptions import DeltaError, TableNotFoundError
    except ImportError:
        raise CompanionSourceError(
            "Delta sources need the deltalake package: pip install 'indextables-search[companion]'"
        ) from None
    storage = delta_storage_options(root, options)
    try:
        table = DeltaTable(root, version=version, storage_options=storage or None)
    except TableNotFoundError:
        raise CompanionSourceError(f"no Delta table at {root!r}") from None
    except (DeltaError, OSError, ValueError) as exc:
        text = redact_source_error(exc, storage, options or {})
        raise CompanionSourceError(f"Delta table {root!r} cannot be read: {text}") from None
    partition_columns = tuple(table.metadata().partition_columns)
    schema = pa.schema(table.schema().to_arrow())
    actions = pa.table(table.get_add_actions(flatten=True))
    features = set(table.protocol().reader_features or ())
    rows = sorted(actions.to_pylist(), key=lambda r: str(r["path"]))
    paths = [normalise_path(str(row["path"])) for row in rows]
    try:
        deletions = (
            delta_deletions(table, set(paths), normalise_path)
            if "deletionVectors" in features
            else {}
        )
    except CompanionSourceError as exc:  # its message may quote deltalake's error
        raise CompanionSourceError(redact_source_error(exc, storage, options or {})) from None
    files = []
    for row, path in zip(rows, paths, strict=True):
        deleted = deletions.get(path)
        files.append(
            SourceFile(
                path=path,
                size=int(row["size_bytes"]),
                partition_values={
                    c: _partition_text(row.get(f"partition.{c}")) for c in partition_columns
                },
                deletion_vector=None if deleted is None else deleted.identity,
                deleted=deleted,
            )
        )
    return SourceListing(
        root=root,
        format="delta",
        version=int(table.version()),
        schema=schema,
        partition_columns=partition_columns,
        files=tuple(files),
    )


def _iceberg_listing(
    name: str, snapshot_id: int | None, options: Mapping[str, str] | None
) -> SourceListing:
    """An Iceberg table named ``[catalog.]namespace.table``, its catalog configured the
    way pyiceberg reads it (``.pyiceberg.yaml`` or ``PYICEBERG_CATALOG__<NAME>__*``).

    Iceberg partition columns are stored in the data files, so the listing has no
    partition columns. A data file with position delete files gets the rows they
    delete (never indexed, see :mod:`.icebergdeletes`); equality deletes are refused.
    """
    table = _iceberg_table(name)
    snapshot = (
        table.current_snapshot() if snapshot_id is None else table.snapshot_by_id(snapshot_id)
    )
    if snapshot_id is not None and snapshot is None:
        raise CompanionSourceError(f"Iceberg table {name!r} has no snapshot {snapshot_id}")
    location = table.location().rstrip("/")
    schema = pa.schema([pa.field(f.name, f.type, f.nullable) for f in table.schema().as_arrow()])
    files = []
    if snapshot is not None:
        tasks = _iceberg_tasks(name, table, snapshot)
        deletions = position_deletions(tasks, _delete_reader(location, options))
        for task in tasks:
            path = str(task.file.file_path)
            deleted = deletions.get(path)
            files.append(
                SourceFile(
                    path=_under(location, path, "data file"),
                    size=int(task.file.file_size_in_bytes),
                    deletion_vector=None if deleted is None else deleted.identity,
                    deleted=deleted,
                )
            )
    return SourceListing(
        root=location,
        format="iceberg",
        version=None if snapshot is None else int(snapshot.snapshot_id),
        schema=schema,
        partition_columns=(),
        files=tuple(sorted(files, key=lambda f: f.path)),
    )


def _under(location: str, path: str, what: str) -> str:
    """``path`` relative to the table ``location``, normalised."""
    if not path.startswith(location + "/"):
        raise CompanionSourceError(
            f"Iceberg {what} {path!r} is outside the table location {location!r}"
        )
    return normalise_path(path[len(location) + 1 :])


def _iceberg_tasks(name: str, table: Any, snapshot: Any) -> list[Any]:
    """pyiceberg's scan tasks of ``snapshot``: each data file with its delete files."""
    try:
        return list(table.scan(snapshot_id=snapshot.snapshot_id).plan_files())
    except ValueError as exc:
        equality = equality_delete_files(table, snapshot)
        if equality:
            raise equality_error(equality) from None
        raise CompanionSourceError(f"Iceberg table {name!r} cannot be planned: {exc}") from None


def _delete_reader(
    location: str, options: Mapping[str, str] | None
) -> Callable[[str, list[str]], pa.Table]:
    """Reads a delete file under the table location through the source's filesystem."""
    import pyarrow.parquet as pq

    def read(path: str, columns: list[str]) -> pa.Table:
        filesystem, base = source_filesystem(location, options)
        relative = _under(location, path, "delete file")
        try:
            return pq.read_table(f"{base}/{relative}", columns=columns, filesystem=filesystem)
        except (OSError, pa.ArrowException) as exc:
            text = redact_source_error(exc, options or {})
            raise CompanionSourceError(
                f"Iceberg position delete file {path!r} cannot be read: {text}"
            ) from None

    return read


def _iceberg_table(name: str) -> Any:
    """The pyiceberg table named ``[catalog.]namespace.table``.

    Raises:
        CompanionSourceError: pyiceberg missing, a bad name or catalog, no such table.
    """
    try:
        from pyiceberg.catalog import load_catalog
        from pyiceberg.exceptions import NoSuchTableError
        from pyiceberg.utils.config import Config
    except ImportError:
        raise CompanionSourceError(
            "Iceberg sources need the pyiceberg package: pip install 'pyiceberg[sql-sqlite]' "
            "(or the extra for your catalog)"
        ) from None
    parts = name.split(".")
    if len(parts) < 2:
        raise CompanionSourceError(
            f"Iceberg source {name!r} must be named [catalog.]namespace.table"
        )
    catalog_name, identifier = (
        ("default", name) if len(parts) == 2 else (parts[0], ".".join(parts[1:]))
    )
    try:
        # The configuration as it is now (pyiceberg caches the one of its import time).
        properties = Config().get_catalog_config(catalog_name) or {}
        catalog = load_catalog(catalog_name, **properties)
        table = catalog.load_table(identifier)
    except NoSuchTableError:
        raise CompanionSourceError(
            f"no Iceberg table {identifier!r} in catalog {catalog_name!r}"
        ) from None
    except Exception as exc:  # pyiceberg raises many kinds for a bad catalog configuration
        raise CompanionSourceError(
            f"Iceberg table {name!r} cannot be loaded: {type(exc).__name__}: {exc}"
        ) from None
    return table


def _partition_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
