"""The arguments ``itp.search``, ``itp.count`` and ``itp.aggregate`` share, checked once.

The facades in ``indextables.pyspark`` check the types of the arguments and
merge the session's ``spark.indextables.*`` settings under the call's options,
then hand one :class:`SearchArgs` to the helper that runs the call
(:mod:`.localsearch`, :mod:`indextables.pyspark.helpers.counting`,
:mod:`indextables.pyspark.helpers.aggregation`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from indextables.pyspark.errors import OptionError


@dataclass(frozen=True, slots=True)
class SearchArgs:
    """One search's arguments (their types already checked).

    Attributes:
        path: the table URI.
        where: a filter in SQL syntax (``host = 'h1' AND day >= '2024-01-02'``);
            comparisons, IN, IS [NOT] NULL and ``LIKE 'prefix%'`` joined by AND
            narrow the search and prune splits; Spark applies the whole condition.
        query: Tantivy query syntax over the table's fields (the ``query`` read option).
        textsearch: column -> query on tokenized columns.
        fieldmatch: column -> exact value on exact (string) columns.
        options: any other read options, the session's settings merged under them.
        version: time travel to this table version (``versionAsOf``).
        timestamp: time travel to this time (``timestampAsOf``): epoch
            milliseconds, an ISO-8601 string or a datetime.
    """

    path: str
    where: str | None = None
    query: str | None = None
    textsearch: Mapping[str, str] | None = None
    fieldmatch: Mapping[str, str] | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    version: int | None = None
    timestamp: int | str | datetime | None = None

    def read_options(self) -> dict[str, str]:
        """The data source's read options: ``options``, time travel and the search ones.

        Raises:
            OptionError: both time-travel arguments, or one that contradicts the options.
        """
        traveled = time_travel(self.options, self.version, self.timestamp)
        return search_read_options(
            self.path, self.query, self.textsearch, self.fieldmatch, traveled
        )


def search_read_options(
    path: str,
    query: str | None,
    textsearch: Mapping[str, str] | None,
    fieldmatch: Mapping[str, str] | None,
    options: Mapping[str, Any] | None,
) -> dict[str, str]:
    """The data source's read options of a helper call: ``options`` plus the search ones."""
    out = {str(k): str(v) for k, v in (options or {}).items()}
    out["path"] = path
    if query:
        out["query"] = query
    for column, text in (textsearch or {}).items():
        out[f"textsearch.{column}"] = text
    for column, value in (fieldmatch or {}).items():
        out[f"fieldmatch.{column}"] = value
    return out


def time_travel(
    options: Mapping[str, Any] | None, version: int | None, timestamp: Any
) -> dict[str, str]:
    """``options`` with ``version``/``timestamp`` as ``versionAsOf``/``timestampAsOf``.

    ``timestamp`` is epoch milliseconds, an ISO-8601 string or a datetime.

    Raises:
        OptionError: both given, or one that contradicts the options.
    """
    out = {str(k): str(v) for k, v in (options or {}).items()}
    if version is not None and timestamp is not None:
        raise OptionError("give version= or timestamp=, not both")
    keys = {k.lower() for k in out}
    if (version is not None or timestamp is not None) and keys & {"versionasof", "timestampasof"}:
        raise OptionError("version=/timestamp= and options versionAsOf/timestampAsOf both given")
    if version is not None:
        out["versionAsOf"] = str(int(version))
    if timestamp is not None:
        out["timestampAsOf"] = (
            timestamp.isoformat() if isinstance(timestamp, datetime) else str(timestamp)
        )
    return out
