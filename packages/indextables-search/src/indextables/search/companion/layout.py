"""A companion's index layout beyond INDEXING MODES: record options and fast-only columns.

The default is the reference's layout (every chosen column indexed; text
fields record frequencies and positions). A user may choose a smaller one with
option keys, given as ``build_companion(options=...)``, ``itp.sql(...,
options=...)``/session settings, or ``indextables companion build -S key=value``:

- ``spark.indextables.indexing.indexrecordoption.<column>`` = ``basic`` |
  ``freq`` | ``position`` (or the list form ``indexrecordoption.basic =
  "a,b"``) and ``spark.indextables.indexing.text.indexRecordOption`` (every text
  field not named): the reference's keys for tables, which its companion build
  does not read. They apply to tokenized text columns (``INDEXING MODES
  'c':'text'`` and the strip modes), as in a table write; the per-column key
  also to exact string columns (one token a value: ``basic`` loses nothing).
- ``spark.indextables.indexing.fastonlyfields`` = ``"id,ts"`` (this package's
  key; the reference has none): integer, float and date columns kept as fast
  fields only, not indexed. Filters on them run as Tantivy range queries over
  the fast field (:mod:`indextables.search.query.tantivyquery`).

The choice is recorded in the table configuration and reused by a later sync
that is not given these keys, so every new split gets the same layout.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from indextables.search.errors import CompanionError
from indextables.search.options import (
    DEFAULT_RECORD_OPTION_KEY,
    FAST_ONLY_KEY,
    RECORD_OPTION,
    lower_keys,
    parse_indexing,
)
from indextables.search.query.tantivyquery import FAST_RANGE_KINDS
from indextables.search.schema.mapping import FieldKind, FieldSpec

__all__ = [
    "FAST_ONLY_KINDS",
    "CompanionLayout",
    "apply_layout",
    "layout_from_config",
    "layout_from_options",
]

#: Kinds whose filters a Tantivy range query over the fast field answers exactly.
FAST_ONLY_KINDS = FAST_RANGE_KINDS
_CONFIG_RECORDS = "recordOptions"
_CONFIG_DEFAULT = "defaultRecordOption"
_CONFIG_FAST_ONLY = "fastOnlyColumns"
_TEXT_MODES = "INDEXING MODES 'col':'text' (or text_uuid_strip / text_custom_strip)"


@dataclass(frozen=True, slots=True)
class CompanionLayout:
    """The user's layout choices (all empty: the reference's layout).

    Attributes:
        record_options: lowercase column -> ``basic``/``freq``/``position``.
        default_record_option: the option of text columns not named, or None
            (``position``, the reference's).
        fast_only: lowercase columns kept as fast fields only.
    """

    record_options: Mapping[str, str] = field(default_factory=dict)
    default_record_option: str | None = None
    fast_only: tuple[str, ...] = ()

    @property
    def is_empty(self) -> bool:
        """True when no choice was made (the default layout, or a stored one applies)."""
        return not (self.record_options or self.default_record_option or self.fast_only)

    def configuration(self, prefix: str) -> dict[str, str]:
        """The table-configuration keys recording the choice (none for the default)."""
        config: dict[str, str] = {}
        if self.record_options:
            config[prefix + _CONFIG_RECORDS] = json.dumps(dict(sorted(self.record_options.items())))
        if self.default_record_option:
            config[prefix + _CONFIG_DEFAULT] = self.default_record_option
        if self.fast_only:
            config[prefix + _CONFIG_FAST_ONLY] = json.dumps(list(self.fast_only))
        return config


def layout_from_options(options: Mapping[str, str]) -> CompanionLayout:
    """The record-option and fast-only keys among ``options`` (other keys are left alone).

    Raises:
        OptionError: a value that is not ``basic``/``freq``/``position``.
    """
    opts = lower_keys(options)
    mine = {
        k: v
        for k, v in opts.items()
        if k.startswith(RECORD_OPTION) or k in (DEFAULT_RECORD_OPTION_KEY, FAST_ONLY_KEY)
    }
    parsed = parse_indexing(mine)
    return CompanionLayout(
        record_options=dict(parsed.record_options),
        default_record_option=(
            parsed.default_record_option if DEFAULT_RECORD_OPTION_KEY in mine else None
        ),
        fast_only=tuple(sorted(parsed.fast_only_fields)),
    )


def layout_from_config(stored: Mapping[str, str]) -> CompanionLayout:
    """The layout a companion's configuration records (``indextables.companion.*``,
    prefix removed), empty when none was chosen."""
    return CompanionLayout(
        record_options=dict(json.loads(stored.get(_CONFIG_RECORDS, "{}"))),
        default_record_option=stored.get(_CONFIG_DEFAULT) or None,
        fast_only=tuple(json.loads(stored.get(_CONFIG_FAST_ONLY, "[]"))),
    )


def apply_layout(
    specs: Sequence[FieldSpec], layout: CompanionLayout, *, fast_field_mode: str
) -> tuple[FieldSpec, ...]:
    """``specs`` with the layout's record options and fast-only columns applied.

    Raises:
        CompanionError: a key naming a column that gets no field, a record option
            on a column that is not tokenized text, a fast-only column that is not
            an integer, float or date, or fast-only with FASTFIELDS MODE PARQUET_ONLY.
    """
    by_name = {s.name.lower(): s for s in specs}
    for column, option in layout.record_options.items():
        found = by_name.get(column)
        key = f"{RECORD_OPTION}{column}={option}"
        if found is None:
            raise CompanionError(
                f"option {key} names {column!r}, which the companion does not index "
                f"(indexed columns: {', '.join(sorted(by_name))})"
            )
        if found.kind not in (FieldKind.TEXT, FieldKind.STRING):
            raise CompanionError(
                f"option {key}: column {found.name!r} is a {found.kind.value} field; record "
                f"options apply to text columns ({_TEXT_MODES}) and exact string columns"
            )
    for column in layout.fast_only:
        found = by_name.get(column)
        if found is None:
            raise CompanionError(
                f"option {FAST_ONLY_KEY} names {column!r}, which the companion does not index "
                f"(indexed columns: {', '.join(sorted(by_name))})"
            )
        if found.kind not in FAST_ONLY_KINDS:
            raise CompanionError(
                f"option {FAST_ONLY_KEY}: column {found.name!r} is a {found.kind.value} field; "
                "fast-only applies to integer, float, decimal, date and timestamp columns "
                "(Tantivy filters a boolean, string or IP fast field only through its index)"
            )
        if fast_field_mode == "PARQUET_ONLY":
            raise CompanionError(
                f"option {FAST_ONLY_KEY} names {found.name!r}, but FASTFIELDS MODE PARQUET_ONLY "
                "gives no column a fast field: use HYBRID (the default) or DISABLED"
            )
    default = layout.default_record_option
    fast_only = set(layout.fast_only)
    applied = []
    for spec in specs:
        key = spec.name.lower()
        if spec.kind is FieldKind.TEXT:
            option = layout.record_options.get(key, default or spec.record_option)
            spec = replace(spec, record_option=option)
        elif spec.kind is FieldKind.STRING and key in layout.record_options:
            # One token per value: a phrase on it is a term query, so basic costs nothing.
            spec = replace(spec, record_option=layout.record_options[key])
        if key in fast_only:
            spec = replace(spec, indexed=False, fast=True)
        applied.append(spec)
    return tuple(applied)
