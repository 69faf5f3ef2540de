"""A credential value that never shows itself in ``repr``, ``str`` or a log line."""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable

__all__ = ["Secret", "install_log_redaction", "reveal", "scrub"]

_KNOWN: set[str] = set()
_KNOWN_LOCK = threading.Lock()
#: Libraries whose DEBUG logs print request headers (which carry session tokens).
_NOISY_LOGGERS = ("botocore", "boto3", "s3transfer", "urllib3", "azure")


class Secret:
    """Holds a credential; ``repr`` and ``str`` print ``'***'``.

    Args:
        value: the credential itself; read it with :meth:`reveal`.
    """

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value
        if len(value) >= 4:
            with _KNOWN_LOCK:
                _KNOWN.add(value)

    def reveal(self) -> str:
        """Return the credential (hand it to the client library, nowhere else)."""
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)

    def __reduce__(self) -> tuple[type[Secret], tuple[str]]:
        return (Secret, (self._value,))


def reveal(value: object) -> object:
    """The credential held by a :class:`Secret`; any other value unchanged."""
    return value.reveal() if isinstance(value, Secret) else value


#: A credential at least this long is replaced wherever it appears (it cannot occur
#: by chance); a shorter one only where it stands as a whole token.
WHOLE_TOKEN_BELOW = 12


def scrub(text: str, values: Iterable[str]) -> str:
    """Replace each of ``values`` in ``text`` by ``***``, longest first.

    A value shorter than :data:`WHOLE_TOKEN_BELOW` characters is replaced only
    where it is a whole token (no letter or digit right before or after it), so
    a one-letter secret does not turn ``file:///tmp/table`` into ``fil***:///...``.
    Empty values are ignored.

    Example:
        >>> scrub("file:///tmp/e key=e", ["e"])
        'file:///tmp/*** key=***'
    """
    for value in sorted({v for v in values if v}, key=len, reverse=True):
        if value not in text:
            continue
        if len(value) >= WHOLE_TOKEN_BELOW:
            text = text.replace(value, "***")
        else:
            token = rf"(?<![A-Za-z0-9]){re.escape(value)}(?![A-Za-z0-9])"
            text = re.sub(token, "***", text)
    return text


def redact(text: str) -> str:
    """Replace every known credential in ``text`` by ``***`` (see :func:`scrub`)."""
    with _KNOWN_LOCK:
        known = list(_KNOWN)
    return scrub(text, known)


class _RedactingFilter(logging.Filter):
    """Rewrites a record whose message contains a known credential."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


_FILTER = _RedactingFilter()


def install_log_redaction() -> None:
    """Attach the redacting filter to the client libraries' loggers.

    A filter only sees records created on its own logger, so it goes on every
    logger of those libraries that exists now (stores call this after they
    create their clients, when the libraries' loggers exist).
    """
    manager = logging.Logger.manager
    names = [name for name in list(manager.loggerDict) if name.split(".")[0] in _NOISY_LOGGERS]
    for name in names:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
