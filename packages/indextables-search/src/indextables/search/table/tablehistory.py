"""``SearchTable.history()``: one typed record per retained version, as delta-rs lists them.

Built on the protocol's history (:func:`indextables.protocol.history.history_of`:
versions, times, operations), with what a reader of delta-rs' ``DeltaTable.history()``
also expects: rows added and removed (from the add actions' ``numRecords`` and the
files each remove names) and the parameters the log records (partition columns at
creation, columns a schema change added).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from indextables.protocol.actions import AddAction, MetadataAction, RemoveAction
from indextables.protocol.history import HistoryEntry, history_of
from indextables.protocol.predicates import MatchNothing

__all__ = ["CommitRecord", "table_history"]


@dataclass(frozen=True, slots=True)
class CommitRecord:
    """One retained version of a table.

    Attributes:
        version: the version.
        timestamp: its commit time (UTC).
        operation: ``CREATE``, ``WRITE`` (adds only), ``UPDATE`` (adds and removes:
            an overwrite, a rewrite), ``MERGE`` (splits merged), ``REMOVE``,
            ``METADATA`` (a schema or configuration change alone), ``SKIP``, ``EMPTY``;
            ``STATE``/``CHECKPOINT`` for a version known only by its checkpoint.
        parameters: what the log says of the operation: ``partitionBy`` (a JSON list)
            when the table is created, ``addedColumns`` (a JSON list) when the
            version added columns to the schema.
        files_added: splits added (None when only a checkpoint remains).
        files_removed: splits removed (None likewise).
        rows_added: rows of the added splits (None when a split does not record it).
        rows_removed: rows of the removed splits (None when one is not known).
    """

    version: int
    timestamp: dt.datetime
    operation: str
    parameters: Mapping[str, str] = field(default_factory=dict)
    files_added: int | None = None
    files_removed: int | None = None
    rows_added: int | None = None
    rows_removed: int | None = None


def table_history(table: Any, *, limit: int | None = None) -> list[CommitRecord]:
    """The history of the protocol ``Table`` ``table``, newest version first.

    ``limit`` keeps the newest ``limit`` versions (None: all retained).
    """
    reader = table.reader
    entries = history_of(reader)
    if limit is not None:
        entries = entries[len(entries) - limit :] if limit else []
    if not entries:
        return []
    rows = _live_rows(reader, entries[0])
    schema = _schema_before(reader, entries[0])
    records = []
    for entry in entries:
        if entry.num_adds is None:  # only a state or checkpoint: its live files
            snap = reader.load(entry.version)
            rows = {f.path: f.num_records for f in snap.files}
            schema = snap.metadata.schema_string
            records.append(CommitRecord(entry.version, _time(entry), entry.operation))
            continue
        actions = reader.actions(entry.version)
        adds = [a for a in actions if isinstance(a, AddAction)]
        removes = [a.path for a in actions if isinstance(a, RemoveAction)]
        parameters: dict[str, str] = {}
        for action in actions:
            if isinstance(action, MetadataAction):
                if entry.operation == "CREATE" or schema is None:
                    parameters["partitionBy"] = json.dumps(list(action.partition_columns))
                else:
                    added = _added_columns(schema, action.schema_string)
                    if added:
                        parameters["addedColumns"] = json.dumps(added)
                schema = action.schema_string
        removed = [rows.pop(path, None) for path in removes]
        for add in adds:
            rows[add.path] = add.num_records
        added_rows = [a.num_records for a in adds]
        records.append(
            CommitRecord(
                entry.version,
                _time(entry),
                entry.operation,
                parameters,
                len(adds),
                len(removes),
                _total(added_rows),
                _total(removed),
            )
        )
    records.reverse()
    return records


def _time(entry: HistoryEntry) -> dt.datetime:
    return dt.datetime.fromtimestamp(entry.timestamp / 1000, tz=dt.UTC)


def _total(values: list[int | None]) -> int | None:
    return None if any(v is None for v in values) else sum(v or 0 for v in values)


def _live_rows(reader: Any, first: HistoryEntry) -> dict[str, int | None]:
    """Rows of each split live just before ``first`` (empty before version 0)."""
    if first.version == 0 or first.num_adds is None:
        return {}
    snap = reader.load(first.version - 1)
    return {f.path: f.num_records for f in snap.files}


def _schema_before(reader: Any, first: HistoryEntry) -> str | None:
    if first.version == 0 or first.num_adds is None:
        return None
    return str(
        reader.load(first.version - 1, partition_filter=MatchNothing()).metadata.schema_string
    )


def _added_columns(before: str, after: str) -> list[str]:
    def names(text: str) -> list[str]:
        try:
            fields = json.loads(text).get("fields", [])
        except (ValueError, AttributeError):
            return []
        return [str(f.get("name")) for f in fields if isinstance(f, dict)]

    known = {n.lower() for n in names(before)}
    return [n for n in names(after) if n.lower() not in known]
