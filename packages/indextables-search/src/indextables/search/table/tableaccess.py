"""The one place this package talks to the protocol engine and the object stores.

Everything the data source needs from a table goes through these functions,
which return plain, picklable records (Spark pickles readers and partitions
to worker processes).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from indextables.protocol import errors as protocol_errors
from indextables.protocol.actions import AddAction
from indextables.protocol.errors import TableExistsError, TableNotFoundError
from indextables.protocol.store import ObjectStore
from indextables.search.errors import NotATableError, OptionError, VersionNotFoundError
from indextables.search.errors import TableExistsError as WriteTableExistsError
from indextables.search.options import lower_keys
from indextables.search.table.livesplits import LiveSplit, LiveSplits

STORAGE_PREFIX = "storage."


def storage_options(options: Mapping[str, str]) -> dict[str, str]:
    """Store options from data source options: ``spark.indextables.*``, ``storage.<name>``."""
    result: dict[str, str] = {}
    for key, value in lower_keys(options).items():
        if key.startswith("spark.indextables."):
            result[key] = value
        elif key.startswith(STORAGE_PREFIX):
            result[key[len(STORAGE_PREFIX) :]] = value
    return result


def open_table_store(uri: str, options: Mapping[str, str]) -> ObjectStore:
    """The object store rooted at the table ``uri``."""
    from indextables.storage import open_store

    return open_store(uri, **storage_options(options))


@dataclass(frozen=True, slots=True)
class TableView:
    """A snapshot of a table as the data source uses it.

    Attributes:
        uri: the table URI.
        version: the snapshot's version.
        schema_json: Spark schema JSON (``metaData.schemaString``).
        partition_columns: partition columns, in order.
        splits: the live splits (empty when ``files_loaded`` is false): a
            :class:`~indextables.search.table.livesplits.LiveSplits` from
            :func:`load_view`, whose entries are built only when read.
        configuration: the table configuration.
        files_loaded: False for a planning view (:func:`load_planning_view`):
            its splits are read at planning time, pruned by the pushed filters.
        doc_mappings: the doc mappings of the table's schema registry (what a
            planning view knows of its splits' fields).
    """

    uri: str
    version: int
    schema_json: str
    partition_columns: tuple[str, ...]
    splits: Sequence[LiveSplit]
    configuration: Mapping[str, str]
    files_loaded: bool = True
    doc_mappings: tuple[str, ...] = ()


def _engine() -> Any:
    import indextables.protocol as protocol

    if hasattr(protocol, "open_table"):
        return protocol
    from indextables.protocol import table

    return table


def engine_config(options: Mapping[str, str]) -> Any:
    """The engine's settings from the ``spark.indextables.*`` keys among ``options``.

    This is the one way settings reach the engine (checkpoint interval,
    commit retries, cache and retention windows); a bad value fails here,
    at planning, naming its key.
    """
    from indextables.protocol import ConfigError, TableConfig

    try:
        return TableConfig.from_options(options)
    except ConfigError as error:
        raise OptionError(str(error)) from None


def _open(uri: str, options: Mapping[str, str]) -> Any:
    with _table_expected(uri):
        return _engine().open_table(
            uri, storage_options=storage_options(options), config=engine_config(options)
        )


def _read(uri: str, options: Mapping[str, str], read: Callable[[Any], Any]) -> Any:
    """``read(table)`` on a table opened without the engine's up-front check.

    The read itself reports a missing table or an unreadable protocol, so the
    check's listing and state read (a round trip each on object stores) are
    not paid twice.
    """
    with _table_expected(uri), _version_expected(options):
        return read(
            _engine().open_table(
                uri,
                storage_options=storage_options(options),
                config=engine_config(options),
                check=False,
            )
        )


@contextlib.contextmanager
def _table_expected(uri: str) -> Iterator[None]:
    try:
        yield
    except TableNotFoundError as error:
        raise NotATableError(f"{uri!r} is not an IndexTables table: {error}") from None


@contextlib.contextmanager
def _version_expected(options: Mapping[str, str]) -> Iterator[None]:
    """The protocol's VersionNotFoundError as ours, naming a ``timestampAsOf`` as given."""
    try:
        yield
    except protocol_errors.VersionNotFoundError as error:
        if isinstance(error, VersionNotFoundError):
            raise
        given = lower_keys(options).get("timestampasof")
        message = str(error)
        if given is not None and "no retained version at or before" in message:
            message = (
                f"{_uri_of(message)}: "
                f"no retained version at or before timestampAsOf {_as_given(given)} "
                "(the table's log starts later, or was purged before it)"
            )
        raise VersionNotFoundError(message) from None


def _uri_of(message: str) -> str:
    """The table URI that a protocol message starts with (``<uri>: ...``)."""
    return message.rsplit(": no retained version", 1)[0]


def _as_given(value: Any) -> str:
    """A ``timestampAsOf`` as the user gave it; epoch milliseconds also as ISO-8601 UTC."""
    import datetime as _dt

    text = str(value).strip()
    if text.lstrip("-").isdigit():
        moment = _dt.datetime.fromtimestamp(int(text) / 1000, tz=_dt.UTC)
        return f"{text} ({moment.isoformat(timespec='milliseconds')})"
    return text


def table_exists(uri: str, options: Mapping[str, str]) -> bool:
    """True when ``uri`` holds a table."""
    try:
        _open(uri, options)
    except NotATableError:
        return False
    return True


def load_view(
    uri: str,
    options: Mapping[str, str],
    *,
    version: int | None = None,
    timestamp: int | None = None,
    partition_filter: Any = None,
    stats_filter: Any = None,
) -> TableView:
    """Read the table's snapshot (latest, or time travel by version or epoch-ms timestamp).

    ``partition_filter`` and ``stats_filter`` are protocol predicates that
    leave out splits (see ``Table.snapshot``).

    Raises:
        NotATableError: ``uri`` holds no table.
    """
    snapshot = _read(
        uri,
        options,
        lambda table: table.snapshot(
            version,
            timestamp=timestamp,
            partition_filter=partition_filter,
            stats_filter=stats_filter,
        ),
    )
    splits = LiveSplits(
        snapshot.files, snapshot.schema_registry, snapshot.metadata.partition_columns
    )
    return _view(uri, snapshot, splits=splits)


def load_planning_view(
    uri: str,
    options: Mapping[str, str],
    *,
    version: int | None = None,
    timestamp: int | None = None,
) -> TableView:
    """A view to plan a read with: splits are read later, pruned by the pushed filters.

    Reads the metadata only (no file list) when the table's schema registry
    holds its doc mappings (tables with a state or deduplicated mappings);
    otherwise the field kinds can only come from the splits, and this is
    :func:`load_view` of the same version.

    Raises:
        NotATableError: ``uri`` holds no table.
    """
    snapshot = _read(
        uri, options, lambda table: table.metadata_snapshot(version, timestamp=timestamp)
    )
    registry = snapshot.schema_registry
    if not registry:
        return load_view(uri, options, version=snapshot.version)
    return _view(
        uri,
        snapshot,
        splits=(),
        files_loaded=False,
        doc_mappings=tuple(sorted(set(registry.values()))),
    )


def _view(uri: str, snapshot: Any, **splits: Any) -> TableView:
    """The view of ``snapshot``'s metadata, with the split fields given."""
    metadata = snapshot.metadata
    return TableView(
        uri=uri,
        version=snapshot.version,
        schema_json=metadata.schema_string,
        partition_columns=tuple(metadata.partition_columns),
        configuration=dict(metadata.configuration),
        **splits,
    )


@dataclass(frozen=True, slots=True)
class TableHead:
    """What a read sees of a table without its file list.

    Attributes:
        version: the snapshot's version.
        schema_json: Spark schema JSON (``metaData.schemaString``).
    """

    version: int
    schema_json: str


def load_head(
    uri: str,
    options: Mapping[str, str],
    *,
    version: int | None = None,
    timestamp: int | None = None,
) -> TableHead:
    """The version and schema a read of these options sees, without reading the file list.

    Raises:
        NotATableError: ``uri`` holds no table.
    """
    snapshot = _read(
        uri, options, lambda table: table.metadata_snapshot(version, timestamp=timestamp)
    )
    return TableHead(int(snapshot.version), str(snapshot.metadata.schema_string))


def commit_write(
    uri: str,
    options: Mapping[str, str],
    *,
    schema_json: str,
    partition_columns: Sequence[str],
    adds: Sequence[AddAction],
    overwrite: bool,
    read_version: int | None = None,
    configuration: Mapping[str, str] | None = None,
    evolve_schema: bool = False,
    create_only: bool = False,
) -> int:
    """Commit the adds of one write (creating the table if needed); return the new version.

    An overwrite removes the files live at ``read_version`` (the version the
    job planned against), so a file appended after planning is never dropped
    silently: the engine refuses the commit if the removed set changed.
    ``evolve_schema`` (the write added columns to an existing table) commits
    ``schema_json`` as the table's schema in the same version. ``create_only``
    (``mode="error"``/``"ignore"`` found no table) commits only by creating the
    table: one created meanwhile is a ``TableExistsError``, never appended to.
    """
    engine = _engine()
    store_options = storage_options(options)
    config = engine_config(options)
    table = None
    if not create_only:
        with contextlib.suppress(TableNotFoundError):
            table = engine.open_table(uri, storage_options=store_options, config=config)
    if table is None:
        try:
            table = engine.create_table(
                uri,
                schema=schema_json,
                partition_columns=tuple(partition_columns),
                configuration=dict(configuration or {}),
                storage_options=store_options,
                config=config,
            )
        except TableExistsError:  # another job created it first: append to theirs
            if create_only:
                raise WriteTableExistsError(
                    f"{uri!r} became a table while this write ran (mode error/ignore)"
                ) from None
            table = engine.open_table(uri, storage_options=store_options, config=config)
    mode = "overwrite" if overwrite else "append"
    if evolve_schema and read_version is not None:
        return int(
            table.commit(
                adds=list(adds), mode=mode, read_version=read_version, schema_string=schema_json
            )
        )
    return int(table.commit(adds=list(adds), mode=mode, read_version=read_version))


def table_handle(uri: str, options: Mapping[str, str]) -> Any:
    """The engine's Table object (maintenance commands call its methods)."""
    return _open(uri, options)
