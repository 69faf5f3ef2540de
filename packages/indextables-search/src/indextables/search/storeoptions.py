"""``storage_options=``: store options by their names, merged into the data source options.

Every API takes store options under one spelling, the name ``open_store`` and
docs/storage.md give them (``region``, ``endpoint_url``, ``account_name``...) or one of
their ``spark.indextables.*`` aliases, in a ``storage_options`` mapping (as delta-rs
and ``indextables.admin`` take them). The data source options spell the same option
``storage.<name>``, which stays accepted everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from indextables.search.errors import ArgumentError, OptionError

__all__ = ["STORAGE_PREFIX", "with_storage_options"]

STORAGE_PREFIX = "storage."
_SPARK_PREFIX = "spark.indextables."


def with_storage_options(
    options: Mapping[str, str], storage_options: Mapping[str, Any] | None
) -> dict[str, str]:
    """``options`` with ``storage_options`` added under their data source keys.

    A name is kept as it is when already spelled ``storage.<name>`` or
    ``spark.indextables.<...>``, else becomes ``storage.<name>``.

    Raises:
        ArgumentError: ``storage_options`` is not a mapping.
        OptionError: an option given in both with different values, named by its key.
    """
    if storage_options is None:
        return dict(options)
    if not isinstance(storage_options, Mapping):
        raise ArgumentError(
            f"storage_options={type(storage_options).__name__} must be a mapping of store "
            "option names to values"
        )
    merged = dict(options)
    lowered = {k.lower(): k for k in merged}
    for name, value in storage_options.items():
        key = str(name)
        low = key.lower()
        if not low.startswith((STORAGE_PREFIX, _SPARK_PREFIX)):
            key = STORAGE_PREFIX + key
        text = str(value)
        given = lowered.get(key.lower())
        if given is not None and merged[given] != text:
            raise OptionError(
                f"store option {key!r} is given in both options and storage_options with "
                "different values"
            )
        if given is None:
            merged[key] = text
            lowered[key.lower()] = key
    return merged
