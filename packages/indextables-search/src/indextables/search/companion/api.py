"""``build_companion``: the Python form of BUILD INDEXTABLES COMPANION (keyword options)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from indextables.search.companion.sync import (
    DEFAULT_HEAP_SIZE,
    DEFAULT_TARGET_INPUT_SIZE,
    CompanionResult,
    CompanionSettings,
    build_companion_index,
)
from indextables.search.errors import ArgumentError

__all__ = ["build_companion"]


def build_companion(
    source: str,
    location: str,
    *,
    source_format: str,
    include_columns: Sequence[str] = (),
    exclude_columns: Sequence[str] = (),
    indexing_modes: Mapping[str, str] | None = None,
    fast_field_mode: str = "HYBRID",
    target_input_size: int = DEFAULT_TARGET_INPUT_SIZE,
    writer_heap_size: int = DEFAULT_HEAP_SIZE,
    from_version: int | None = None,
    where: str | None = None,
    dry_run: bool = False,
    options: Mapping[str, Any] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> CompanionResult:
    """Create or sync the companion index at ``location`` over the table at ``source``.

    Args:
        source: the source table's root (Delta table or Parquet directory), or an
            Iceberg table's name ``[catalog.]namespace.table`` (catalog configured as
            pyiceberg reads it).
        location: the companion index's location.
        source_format: ``"delta"``, ``"parquet"`` or ``"iceberg"``.
        include_columns, exclude_columns: which columns get fields (not both).
        indexing_modes: column -> ``string``/``text``/``ip``/``json``, or
            ``text_uuid_strip``/``text_custom_strip:<regex>`` (see
            :mod:`indextables.search.companion.stringmodes`; the hashed
            ``exact_only``/``*_exactonly`` modes are refused).
        fast_field_mode: ``HYBRID`` (default), ``DISABLED`` or ``PARQUET_ONLY``.
        target_input_size: the most source bytes one split indexes.
        writer_heap_size: Tantivy writer heap per split.
        from_version: index the Delta table as of this version (Iceberg: snapshot id).
        where: a SQL condition on partition columns: only those files are indexed.
        dry_run: plan only; nothing is written.
        options: store options of the index location.
        progress: called as ``progress(splits committed, splits planned)`` after each
            committed batch.

    Returns:
        The result row (the reference's columns: status, splits_created, ...).

    Raises:
        ArgumentError: an argument of the wrong type.
        CompanionError, CompanionSourceError: bad settings, or a source that cannot be read.
    """
    for name, value in (
        ("source", source),
        ("location", location),
        ("source_format", source_format),
    ):
        if not isinstance(value, str) or not value:
            raise ArgumentError(f"{name}={value!r} must be a non-empty string")
    for name, columns in (
        ("include_columns", include_columns),
        ("exclude_columns", exclude_columns),
    ):
        if isinstance(columns, str) or not all(isinstance(c, str) for c in columns):
            raise ArgumentError(f"{name}={columns!r} must be a list of column names")
    for name, number in (
        ("target_input_size", target_input_size),
        ("writer_heap_size", writer_heap_size),
    ):
        if isinstance(number, bool) or not isinstance(number, int) or number <= 0:
            raise ArgumentError(f"{name}={number!r} must be a positive int (bytes)")
    if from_version is not None and (
        isinstance(from_version, bool) or not isinstance(from_version, int) or from_version < 0
    ):
        raise ArgumentError(f"from_version={from_version!r} must be a table version (an int >= 0)")
    settings = CompanionSettings(
        source=source,
        source_format=source_format,
        include_columns=tuple(include_columns),
        exclude_columns=tuple(exclude_columns),
        indexing_modes=dict(indexing_modes or {}),
        fast_field_mode=fast_field_mode,
        target_input_size=target_input_size,
        writer_heap_size=writer_heap_size,
        from_version=from_version,
        where=where,
    )
    opts = {str(k): str(v) for k, v in (options or {}).items()}
    return build_companion_index(
        location, settings, options=opts, dry_run=dry_run, progress=progress
    )
