"""replaceWhere: replace the rows a condition matches with new rows, in one commit.

``write_table(uri, data, mode="overwrite", replace_where=cond)`` (and Spark's
``replaceWhere`` option) keeps Delta's rule: every new row must match ``cond``.
:class:`RowGuard` checks each batch before it reaches a split writer; the first
row outside the condition raises :class:`ReplaceWhereMismatchError` naming it,
and the write commits nothing (splits already uploaded by the writers are
deleted, as for any failed write).

Once the new splits are written, :func:`commit_replace` removes the rows the
condition matches at the version the write read: a condition over partition
columns only is decided per split from its partition values (the whole split
goes, nothing is read); any other condition is planned as a delete
(:func:`~indextables.search.write.deleterows.plan_deletes`), so a split whose
every row matches is removed and one holding some matching rows is rewritten
with Tantivy delete bitsets. The removes, the rewritten splits and the new
splits are one version; a split the replace read that another commit removed
meanwhile is a ``CommitConflictError`` (nothing is committed). Rows a
concurrent commit appended are kept, whether they match or not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pyarrow as pa

from indextables.protocol.actions import AddAction, RemoveAction
from indextables.search.errors import ArgumentError, CompanionError, ReplaceWhereMismatchError
from indextables.search.query.whereeval import WhereFilter, compile_where
from indextables.search.query.wheregrammar import parse_where
from indextables.search.schema.partitionvalues import spark_value
from indextables.search.schema.schemajson import arrow_schema
from indextables.search.table.livesplits import LiveSplit
from indextables.search.table.tableaccess import (
    TableView,
    load_view,
    open_table_store,
    table_handle,
)
from indextables.search.write.deleterows import (
    DeletePlan,
    delete_actions,
    discard_uncommitted,
    plan_deletes,
)

__all__ = ["ReplaceResult", "RowGuard", "commit_replace", "row_guard"]

_SAMPLE_CHARS = 300


@dataclass(frozen=True, slots=True)
class RowGuard:
    """Refuses batches holding a row that ``where`` does not match (Delta's rule)."""

    where: WhereFilter

    def check(self, batch: pa.RecordBatch) -> None:
        """Raise on the first row of ``batch`` outside the condition.

        Raises:
            ReplaceWhereMismatchError: naming the condition and a sample row.
        """
        if batch.num_rows == 0:
            return
        mask = self.where.mask(batch)
        if mask.false_count == 0:
            return
        first = next(i for i, keep in enumerate(mask.to_pylist()) if not keep)
        row = repr(batch.slice(first, 1).to_pylist()[0])
        if len(row) > _SAMPLE_CHARS:
            row = row[:_SAMPLE_CHARS] + "...}"
        raise ReplaceWhereMismatchError(
            f"replace_where={self.where.text!r}: the data holds {mask.false_count} row(s) "
            f"the condition does not match, for example {row}; every new row of a "
            "replace must match it (nothing was committed)"
        )


def row_guard(replace_where: object, schema: pa.Schema) -> RowGuard:
    """The guard of ``replace_where`` over rows of the table's ``schema``.

    Raises:
        ArgumentError: not a non-empty string.
        QuerySyntaxError: a condition that does not parse or names an unknown column.
    """
    if not isinstance(replace_where, str) or not replace_where.strip():
        raise ArgumentError(f"replace_where={replace_where!r} must be a non-empty string")
    return RowGuard(compile_where(replace_where, schema))


@dataclass(frozen=True, slots=True)
class ReplaceResult:
    """What :func:`commit_replace` committed.

    Attributes:
        version: the version committed.
        splits_removed: splits removed whole (or rewritten) for the condition.
        rows_deleted: rows removed from splits the condition matched in part
            (rows of splits removed whole from their partition values are not counted
            here: the split's ``numRecords`` are).
    """

    version: int
    splits_removed: int
    rows_deleted: int


def commit_replace(
    uri: str,
    options: Mapping[str, str],
    *,
    where: str,
    adds: Sequence[AddAction],
    read_version: int,
    schema_json: str | None = None,
) -> ReplaceResult:
    """Commit ``adds`` with the removal of the rows ``where`` matches at ``read_version``.

    ``schema_json``: the table's new schema when the write added columns. ``adds``
    are deleted from the store when the commit fails.

    Raises:
        CommitConflictError: a split the replace read was removed meanwhile.
        CompanionError: the table is a companion index.
    """
    opts = dict(options)
    store = open_table_store(uri, opts)
    view = load_view(uri, opts, version=read_version)
    whole, plan = _plan(view, where, opts)
    rewritten: list[AddAction] = []
    try:
        removes = [_remove(s) for s in whole] + delete_actions(store, plan, rewritten)
        table = table_handle(uri, opts)
        every = [*adds, *rewritten]
        if schema_json is not None:
            version = table.commit(
                adds=every, removes=removes, read_version=read_version, schema_string=schema_json
            )
        else:
            version = table.commit(adds=every, removes=removes, read_version=read_version)
    except BaseException:
        discard_uncommitted(store, [*adds, *rewritten])
        raise
    return ReplaceResult(int(version), len(removes), plan.rows)


def _plan(
    view: TableView, where: str, options: Mapping[str, str]
) -> tuple[list[LiveSplit], DeletePlan]:
    """Splits removed whole from their partition values, and the delete plan of the rest."""
    if view.configuration.get("indextables.companion.enabled") == "true":
        raise CompanionError(
            f"{view.uri!r} is a companion index: its rows live in the source table; "
            "replace them there and sync the companion"
        )
    schema = arrow_schema(view.schema_json)
    tree = parse_where(where)
    exact = compile_where(where, schema, tree=tree)
    partitions = {c.lower() for c in view.partition_columns}
    if partitions and {c.lower() for c in exact.columns} <= partitions:
        fields = [f for f in schema if f.name.lower() in partitions]
        whole = [s for s in view.splits if _partition_matches(exact, fields, s)]
        return whole, DeletePlan(view.uri, view.version, view.partition_columns, ())
    return [], plan_deletes(view, where=where, options=options)


def _partition_matches(exact: WhereFilter, fields: list[pa.Field], split: LiveSplit) -> bool:
    """Whether the condition (over partition columns only) holds on the split's rows."""
    values = {k.lower(): v for k, v in split.partition_values.items()}
    arrays = [pa.array([spark_value(values.get(f.name.lower()), f.type)], f.type) for f in fields]
    batch = pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))
    return bool(exact.mask(batch)[0].as_py())


def _remove(split: LiveSplit) -> RemoveAction:
    return RemoveAction(
        path=split.path,
        data_change=True,
        partition_values=dict(split.partition_values),
        size=split.size,
    )
