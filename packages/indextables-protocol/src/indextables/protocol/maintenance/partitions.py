"""DROP INDEXTABLES PARTITIONS: remove every live file of matching partitions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from indextables.protocol.errors import InvalidPredicateError
from indextables.protocol.maintenance.results import DropPartitionsResult
from indextables.protocol.predicates import Predicate

if TYPE_CHECKING:
    from indextables.protocol.tablelike import TableLike

__all__ = ["drop_partitions"]


def drop_partitions(table: TableLike, predicate: Predicate | None) -> DropPartitionsResult:
    """Commit the removal of every live file whose partition values match.

    Raises:
        InvalidPredicateError: no predicate, an unpartitioned table, or a
            predicate on non-partition columns.
    """
    if predicate is None:
        raise InvalidPredicateError(f"{table.uri}: dropping partitions needs a predicate")
    snap = table.snapshot()
    columns = set(snap.partition_columns)
    if not columns:
        raise InvalidPredicateError(f"{table.uri}: the table has no partition columns")
    if not predicate.columns() or not predicate.columns() <= columns:
        raise InvalidPredicateError(
            f"{table.uri}: predicate columns {sorted(predicate.columns())} must be partition "
            f"columns {sorted(columns)}"
        )
    matching = [f for f in snap.files if predicate.matches(f.partition_values)]
    if not matching:
        return DropPartitionsResult(table.uri, "NO_ACTION", 0, 0, 0, "No partitions matched")
    partitions = {tuple(sorted(f.partition_values.items())) for f in matching}
    version = table.commit(removes=[f.path for f in matching])
    total = sum(f.size for f in matching)
    return DropPartitionsResult(
        table.uri,
        "SUCCESS",
        len(partitions),
        len(matching),
        total,
        f"Dropped {len(partitions)} partitions ({len(matching)} splits) at version {version}",
        version=version,
    )
