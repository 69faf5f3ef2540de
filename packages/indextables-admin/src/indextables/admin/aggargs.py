"""``aggregate``'s ``--group-by`` and ``--metrics`` texts -> ``itp.aggregate``'s specs.

Group keys (``--group-by``, repeatable; also comma-separated outside parentheses):

- ``level``: one group per distinct value (terms);
- ``histogram(latency, 0.5)``: ``floor(latency / 0.5) * 0.5``;
- ``date_histogram(ts, 1h)``: fixed intervals (``ms``, ``s``, ``m``, ``h``, ``d``);
- ``range(latency, 0.1, 1, 10)``: ranges between ascending edges;
- any of them ``... as name`` to name the output column.

Metrics (``--metrics``, repeatable; also comma-separated): ``count`` or
``fn(column)`` with fn one of count/sum/min/max/avg, each optionally named
``name=...`` (default names: ``count``, ``sum_bytes``).
"""

from __future__ import annotations

import re
from typing import Any

from indextables.admin.errors import UsageError

__all__ = ["parse_group_by_args", "parse_metric_args"]

_NAME = r"[A-Za-z_][A-Za-z0-9_.]*"
_AS = re.compile(rf"^(?P<spec>.*?)\s+as\s+(?P<name>{_NAME})\s*$", re.IGNORECASE | re.DOTALL)
_CALL = re.compile(r"^\s*(?P<fn>[A-Za-z_]+)\s*\((?P<args>.*)\)\s*$", re.DOTALL)
_METRIC = re.compile(rf"^\s*(?:(?P<name>{_NAME})\s*=)?\s*(?P<spec>.+?)\s*$", re.DOTALL)


def split_top_level(values: tuple[str, ...]) -> list[str]:
    """Each value split at commas outside parentheses; empty parts dropped."""
    parts: list[str] = []
    for value in values:
        depth, start = 0, 0
        for index, char in enumerate(value):
            if char == "(":
                depth += 1
            elif char == ")":
                depth -= 1
            elif char == "," and depth == 0:
                parts.append(value[start:index])
                start = index + 1
        parts.append(value[start:])
    return [part.strip() for part in parts if part.strip()]


def parse_group_by_args(values: tuple[str, ...]) -> list[Any]:
    """The group keys of every ``--group-by`` (column names and bucket specs).

    Raises:
        UsageError: none given, or a key that is neither a column nor a bucket spec.
    """
    from indextables.search.aggregate import aggspec

    keys: list[Any] = []
    for text in split_top_level(values):
        named = _AS.match(text)
        spec, name = (named["spec"].strip(), named["name"]) if named else (text, None)
        call = _CALL.match(spec)
        if call is None:
            if not re.fullmatch(_NAME, spec):
                raise UsageError(f"--group-by {text!r}: not a column name nor a bucket spec")
            keys.append(spec if name is None else aggspec.Terms(spec, name))
            continue
        fn, args = call["fn"].lower(), [a.strip() for a in call["args"].split(",")]
        if fn == "histogram" and len(args) == 2:
            keys.append(aggspec.histogram(args[0], _number(text, args[1]), name=name))
        elif fn == "date_histogram" and len(args) == 2:
            keys.append(aggspec.date_histogram(args[0], args[1], name=name))
        elif fn == "range" and len(args) >= 2:
            edges = [_number(text, a) for a in args[1:]]
            keys.append(aggspec.range_(args[0], edges, name=name))
        else:
            raise UsageError(
                f"--group-by {text!r}: expected histogram(col, interval), "
                "date_histogram(col, 1h) or range(col, edge, ...)"
            )
    if not keys:
        raise UsageError("give at least one --group-by")
    return keys


def _number(text: str, value: str) -> int | float:
    try:
        return int(value)
    except ValueError:
        pass
    try:
        return float(value)
    except ValueError:
        raise UsageError(f"--group-by {text!r}: {value!r} is not a number") from None


def parse_metric_args(values: tuple[str, ...]) -> dict[str, Any]:
    """The metrics of every ``--metrics``: output name -> ``"count"`` or ``(fn, column)``.

    Raises:
        UsageError: none given, a malformed metric or two with one name.
    """
    metrics: dict[str, Any] = {}
    for text in split_top_level(values):
        match = _METRIC.match(text)
        spec = match["spec"] if match else ""
        call = _CALL.match(spec)
        value: str | tuple[str, str]
        if spec.lower() == "count":
            name, value = "count", "count"
        elif call and re.fullmatch(_NAME, call["args"].strip()):
            column = call["args"].strip()
            name, value = f"{call['fn'].lower()}_{column}", (call["fn"].lower(), column)
        else:
            raise UsageError(f"--metrics {text!r}: expected count or fn(column), e.g. sum(bytes)")
        name = (match["name"] if match else None) or name
        if name.lower() in {n.lower() for n in metrics}:
            raise UsageError(f"--metrics: two metrics named {name!r} (name them: n=count)")
        metrics[name] = value
    if not metrics:
        raise UsageError("give at least one --metrics, e.g. --metrics count")
    return metrics
