"""Compact JSON as the reference (Jackson) writes it, and typed field access.

Jackson writes no spaces, keeps non-ASCII characters as UTF-8 and escapes the
rarer control characters as ``\\u00XX`` with upper-case hex digits; Python's
encoder differs only in that case, which :func:`dumps` corrects.

The ``want_*`` helpers read one field of a decoded JSON object, raising
:class:`~indextables.protocol.errors.CorruptFileError` (naming the file and
the field) when its type is wrong.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from indextables.protocol.errors import CorruptFileError, MissingFieldError

__all__ = ["JsonObject", "dumps", "loads", "loads_object"]

JsonObject = dict[str, Any]

_LOWER_HEX_ESCAPE = re.compile(r"(\\+)u00([0-9a-f]{2})")


def _upper_hex(match: re.Match[str]) -> str:
    slashes = match.group(1)
    if len(slashes) % 2 == 0:  # an escaped backslash followed by text "u00..": leave it
        return match.group(0)
    return f"{slashes}u00{match.group(2).upper()}"


def dumps(value: Any) -> str:
    """Serialize ``value`` compactly, byte-compatible with Jackson's defaults."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    if "\\u00" in text:
        text = _LOWER_HEX_ESCAPE.sub(_upper_hex, text)
    return text


def loads(text: str | bytes, *, path: str, what: str = "JSON") -> Any:
    """Parse ``text`` as JSON, whatever it holds.

    A text nested deeper than the interpreter's recursion allows (``[[[[...``)
    is corrupt like any other text that does not decode, never a
    ``RecursionError``.

    Raises:
        CorruptFileError: the text is not JSON, or is nested too deeply to decode.
    """
    try:
        return json.loads(text)
    except ValueError as exc:
        raise CorruptFileError(path, f"invalid {what}: {exc}") from None
    except RecursionError:
        raise CorruptFileError(path, f"invalid {what}: nested too deeply to decode") from None


def loads_object(text: str, *, path: str, what: str = "JSON") -> JsonObject:
    """Parse ``text`` as one JSON object.

    Raises:
        CorruptFileError: the text is not JSON (or nested too deeply) or not an object.
    """
    value = loads(text, path=path, what=what)
    if not isinstance(value, dict):
        raise CorruptFileError(path, f"{what} is not an object: {text[:80]!r}")
    return value


def want(obj: Mapping[str, Any], key: str, kind: str, *, path: str, where: str) -> Any:
    """Return ``obj[key]`` checked against ``kind`` (see :data:`CHECKS`).

    A missing key raises :class:`MissingFieldError`; ``null`` passes only for
    kinds starting with ``?``.
    """
    if key not in obj:
        raise MissingFieldError(path, f"{where} lacks required field {key!r}")
    return check(obj[key], kind, path=path, where=f"{where}.{key}")


def check(value: Any, kind: str, *, path: str, where: str) -> Any:
    """Check one decoded JSON value against ``kind`` and return it converted."""
    if value is None:
        if kind.startswith("?"):
            return None
        raise CorruptFileError(path, f"{where} is null")
    base = kind.lstrip("?")
    converted = CHECKS[base](value)
    if converted is _BAD:
        raise CorruptFileError(path, f"{where} should be {base}, got {value!r}"[:300])
    return converted


_BAD = object()


def _str(value: Any) -> Any:
    return value if isinstance(value, str) else _BAD


#: Every integer of the log is a Java long in the reference (and an Avro long in states).
_LONG_MIN, _LONG_MAX = -(1 << 63), (1 << 63) - 1


def _int(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool) and _LONG_MIN <= value <= _LONG_MAX:
        return value
    return _BAD


def _bool(value: Any) -> Any:
    return value if isinstance(value, bool) else _BAD


def _str_map(value: Any) -> Any:
    # Partition values may be JSON null in the map: keep them as None.
    if isinstance(value, dict) and all(v is None or isinstance(v, str) for v in value.values()):
        return dict(value)
    return _BAD


def _str_list(value: Any) -> Any:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return _BAD


def _object(value: Any) -> Any:
    return dict(value) if isinstance(value, dict) else _BAD


CHECKS = {
    "str": _str,
    "int": _int,
    "bool": _bool,
    "str_map": _str_map,
    "str_list": _str_list,
    "object": _object,
}
