"""Parsers for the command line's option values: ``key=value`` pairs, durations, timestamps."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta

from indextables.admin.errors import UsageError
from indextables.admin.redact import is_secret_key

__all__ = [
    "MAX_DURATION",
    "STORAGE_OPTION_ENV_PREFIX",
    "parse_duration",
    "parse_storage_options",
    "parse_timestamp_ms",
    "storage_options_from_env",
]

# INDEXTABLES_STORAGE_OPTION_REGION=us-east-1 is the same as --storage-option region=us-east-1.
STORAGE_OPTION_ENV_PREFIX = "INDEXTABLES_STORAGE_OPTION_"

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")
_UNITS = {
    "s": 1.0,
    "sec": 1.0,
    "second": 1.0,
    "seconds": 1.0,
    "m": 60.0,
    "min": 60.0,
    "minute": 60.0,
    "minutes": 60.0,
    "h": 3600.0,
    "hour": 3600.0,
    "hours": 3600.0,
    "d": 86400.0,
    "day": 86400.0,
    "days": 86400.0,
    "w": 604800.0,
    "week": 604800.0,
    "weeks": 604800.0,
}


def parse_storage_options(pairs: Iterable[str]) -> dict[str, str]:
    """Turn ``key=value`` strings into a dict; later pairs override earlier ones.

    Args:
        pairs: the values of every ``--storage-option``.

    Returns:
        The options as a dict.

    Raises:
        UsageError: a pair has no ``=`` or an empty key, or it is an unknown
            name followed by nothing but ``=`` (a base64 credential given without
            its ``KEY=``). The message names the pair by its position among the
            ``-S`` values and shows no text of it but a known option's name.

    Example:
        >>> parse_storage_options(["region=us-east-1", "endpoint_url=http://x"])
        {'region': 'us-east-1', 'endpoint_url': 'http://x'}
    """
    options: dict[str, str] = {}
    for position, pair in enumerate(pairs, start=1):
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key or re.search(r"[:\s]", key):
            # ``account_key:c2VjcmV0==`` has an ``=`` (base64 padding) but its
            # key is ``account_key:c2VjcmV0``: a typo that must not be echoed.
            raise UsageError(
                f"-S value #{position} is not KEY=VALUE{_hint(pair)}",
            )
        if not value.strip("=") and not _known_name(key):
            # ``c2VjcmV0ZQ==`` splits into key ``c2VjcmV0ZQ`` and value ``=``: a
            # credential without its KEY=, which the store would echo as a name.
            raise UsageError(
                f"-S value #{position} has no known KEY= before a value "
                "(a credential given without its name? the text is not shown)"
            )
        options[key] = value
    return options


def _known_name(name: str) -> bool:
    """A store option's name, or a setting's (``spark.*``, ``storage.*``): safe to show."""
    from indextables.storage.options import KNOWN

    lowered = name.lower()
    return lowered in KNOWN or lowered.startswith(("spark.", "storage."))


def _hint(pair: str) -> str:
    """A hint for a malformed pair that never quotes what may be a secret value.

    Only a leading known option name (before ``:`` or a space, a common typo
    for ``=``) is shown, and only when it is not a credential's name.
    """
    name = re.split(r"[:\s]", pair.strip(), maxsplit=1)[0]
    if not name or not _known_name(name) or is_secret_key(name):
        return " (the text is not shown)"
    if name == pair.strip():
        return f": {name!r} has no value"
    return f": did you mean {name}=...? (the value is not shown)"


#: The Azure CLI's and SDK samples' variables -> the Azure store's option names.
AZURE_ENV = {
    "AZURE_STORAGE_ACCOUNT": "account_name",
    "AZURE_STORAGE_KEY": "account_key",
    "AZURE_STORAGE_CONNECTION_STRING": "connection_string",
    "AZURE_STORAGE_SAS_TOKEN": "sas_token",
}


def storage_options_from_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Collect storage options from the environment.

    ``INDEXTABLES_STORAGE_OPTION_<KEY>`` gives option ``<key>`` (lower-cased:
    ``..._ENDPOINT_URL`` -> ``endpoint_url``). Azure credentials come from the
    variables the Azure CLI uses (``AZURE_STORAGE_ACCOUNT``, ``AZURE_STORAGE_KEY``,
    ``AZURE_STORAGE_CONNECTION_STRING``, ``AZURE_STORAGE_SAS_TOKEN``), as S3's
    come from ``AWS_ACCESS_KEY_ID`` and the rest (read by boto3 itself); an
    ``INDEXTABLES_STORAGE_OPTION_*`` variable of the same option wins. Options
    of another backend are ignored by a store, so these never disturb S3 or
    local tables.

    Args:
        environ: the environment to read; ``os.environ`` by default.
    """
    env = os.environ if environ is None else environ
    options = {name: env[var] for var, name in AZURE_ENV.items() if env.get(var)}
    options.update(
        {
            name[len(STORAGE_OPTION_ENV_PREFIX) :].lower(): value
            for name, value in env.items()
            if name.startswith(STORAGE_OPTION_ENV_PREFIX)
            and len(name) > len(STORAGE_OPTION_ENV_PREFIX)
        }
    )
    return options


# Retention windows beyond this are typos: they would also overflow date arithmetic.
MAX_DURATION = timedelta(days=36_525)


def parse_duration(text: str) -> timedelta:
    """Parse a duration such as ``7d``, ``168h``, ``30 days``, ``90m`` or ``45s``.

    A bare number is a number of days (as in ``OLDER THAN 7 DAYS``).

    Raises:
        UsageError: the text is not a non-negative number with a known unit.

    Example:
        >>> parse_duration("36h")
        datetime.timedelta(days=1, seconds=43200)
    """
    match = _DURATION.match(text)
    unit = match.group(2).lower() if match else ""
    if match is None or (unit and unit not in _UNITS):
        raise UsageError(f"invalid duration {text!r}: expected e.g. 7d, 168h, 30m, 45s")
    seconds = float(match.group(1)) * (_UNITS[unit] if unit else _UNITS["d"])
    if not seconds <= MAX_DURATION.total_seconds():
        raise UsageError(
            f"invalid duration {text!r}: longer than the longest allowed "
            f"({MAX_DURATION.days} days, about 100 years)"
        )
    return timedelta(seconds=seconds)


def parse_timestamp_ms(text: str) -> int:
    """Parse a point in time to epoch milliseconds.

    Accepts epoch milliseconds (``1705123456789``) or ISO 8601
    (``2024-01-13``, ``2024-01-13T10:30:00``, ``...Z`` or ``...+02:00``);
    a time without an offset is UTC.

    Raises:
        UsageError: the text is neither.
    """
    stripped = text.strip()
    if stripped.isdigit():
        return int(stripped)
    try:
        moment = datetime.fromisoformat(stripped.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(
            f"invalid timestamp {text!r}: expected epoch milliseconds or ISO 8601"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)
