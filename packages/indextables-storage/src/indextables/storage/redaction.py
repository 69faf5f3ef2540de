"""One place that decides what may be printed of a setting, an option or a URL.

Every layer that echoes a name or a value (error messages, log lines,
``DESCRIBE`` rows, the command line's text and JSON output) goes through
these helpers, so no credential reaches a user's screen or a log, whatever
the typo that brought it there:

* a credential's *name* (``secret_access_key``, ``accountKey``,
  ``spark.indextables.aws.sessionToken``, ``AZURE_STORAGE_SAS_TOKEN``...)
  hides its value whole;
* a credential written with ``:`` or a space instead of ``=``
  (``account_key:SECRET``, ``account_key SECRET``, ``secret_access_key: S``)
  is cut after its name, wherever it appears (a key, a value, free text);
* the password of a URL's user info (``http://user:PW@host``) goes, also in
  URLs that are malformed (``ht!tp://user:PW@host``), and so do signature
  query parameters of pre-signed and SAS URLs;
* every value held by a :class:`~indextables.storage.secrets.Secret` (and
  every secret a caller passes) is replaced wherever it appears, a value
  shorter than 12 characters only where it is a whole token (no letter or
  digit beside it: ``-S secret_access_key=e`` must not mask every ``e``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from indextables.storage.secrets import redact as _redact_known
from indextables.storage.secrets import scrub

__all__ = [
    "REDACTED",
    "is_secret_key",
    "redact_name",
    "redact_options",
    "redact_setting",
    "redact_text",
    "redact_uri",
]

REDACTED = "***"

#: Substrings of a normalised name (lower case, separators removed) whose
#: values are credentials. Access key ids count too: they name an account.
_SECRET_MARKERS = (
    "secret",
    "password",
    "passwd",
    "pwd",
    "token",
    "sas",
    "credential",
    "accountkey",
    "accesskey",
    "sharedkey",
    "masterkey",
    "privatekey",
    "signature",
    "connectionstring",
    "connstr",
    "apikey",
    "auth",
)

# A name that holds a credential, as it appears inside text: the marker with
# the name characters around it (dots, dashes, underscores, letters, digits).
_NAME = r"[A-Za-z0-9_.\-]*"
_MARKER_RE = (
    r"(?:secret|passw(?:or)?d|pwd|token|sas|credential|account[_.\-]?key|access[_.\-]?key|"
    r"shared[_.\-]?key|master[_.\-]?key|private[_.\-]?key|signature|"
    r"connection[_.\-]?string|connstr|api[_.\-]?key|auth)"
)
# ``name=value``, ``name:value``, ``name: value``, ``name = value`` in text.
_INLINE = re.compile(rf"(?i)\b({_NAME}{_MARKER_RE}{_NAME})(\s*[:=]\s*)([^\s'\",;&)\]}}]+)")
# User info of a URL, also when the scheme is malformed (``ht!tp://``).
_USERINFO = re.compile(r"([A-Za-z0-9+.!\-_~%]*://)([^/@\s'\"]+)@")
# Query parameters of pre-signed / SAS URLs that carry a signature or a key.
_URI_SECRET_PARAMS = re.compile(
    r"(?i)([?&](?:sig|signature|x-amz-signature|x-amz-security-token|x-amz-credential|"
    r"token|sas|key|password)=)[^&#\s'\"]*"
)
_SEPARATOR = re.compile(r"[:=\s]")


def _normalise(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def is_secret_key(name: str) -> bool:
    """Tell whether a setting, option or environment variable name holds a credential.

    Matched on the lower-cased name with separators removed, so
    ``AWS_SECRET_ACCESS_KEY``, ``secret-access-key`` and ``secretAccessKey``
    all count. A name followed by a typo'd value (``account_key:SECRET``)
    counts by its name part.

    Example:
        >>> is_secret_key("spark.indextables.aws.secretKey"), is_secret_key("region")
        (True, False)
    """
    head = _SEPARATOR.split(name.strip(), maxsplit=1)[0] if name.strip() else name
    normalised = _normalise(head)
    return any(marker in normalised for marker in _SECRET_MARKERS)


def redact_uri(text: str) -> str:
    """Remove the password of URL user info and signature query parameters.

    User info with a ``:`` is a credential pair and goes whole; without one
    it is a name (the container of ``abfss://container@account...``) and stays.

    Example:
        >>> redact_uri("http://me:pw@host:9000/b")
        'http://***@host:9000/b'
        >>> redact_uri("abfss://logs@acct.dfs.core.windows.net/t")
        'abfss://logs@acct.dfs.core.windows.net/t'
    """
    text = _USERINFO.sub(_userinfo, text)
    return _URI_SECRET_PARAMS.sub(lambda m: f"{m.group(1)}{REDACTED}", text)


def _userinfo(match: re.Match[str]) -> str:
    info = match.group(2)
    return f"{match.group(1)}{REDACTED if ':' in info else info}@"


def redact_text(text: str, secrets: Iterable[str] = ()) -> str:
    """Make any text safe to print: known secrets, inline credentials, URL passwords.

    Args:
        text: an error message, a log line, a value about to be shown.
        secrets: extra secret values to scrub (empty strings are ignored).

    Example:
        >>> redact_text("bad option 'account_key:c2VjcmV0' near http://u:p@h")
        "bad option 'account_key:***' near http://***@h"
    """
    text = scrub(text, secrets)
    text = _redact_known(text)
    text = redact_uri(text)
    return _INLINE.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)


def redact_name(name: str) -> str:
    """A setting or option *name* safe to print.

    A name that is really ``name<sep>value`` (a ``:``, ``=`` or space typed
    for ``=``) whose name part is a credential keeps only its name part.

    Example:
        >>> redact_name("storage.secret_access_key:abc")
        'storage.secret_access_key:***'
        >>> redact_name("spark.indextables.read.limit")
        'spark.indextables.read.limit'
    """
    stripped = name.strip()
    parts = _SEPARATOR.split(stripped, maxsplit=1)
    if len(parts) == 2 and is_secret_key(parts[0]):
        separator = stripped[len(parts[0])]
        return f"{parts[0]}{separator}{REDACTED}"
    return redact_text(name)


def redact_setting(name: str, value: object) -> str | None:
    """The value of setting ``name`` safe to print (``None`` stays ``None``).

    Example:
        >>> redact_setting("spark.indextables.aws.endpoint", "http://u:pw@h:1")
        'http://***@h:1'
        >>> redact_setting("storage.account_key", "abc")
        '***'
    """
    if value is None:
        return None
    if is_secret_key(name):
        return REDACTED
    return redact_text(str(value))


def redact_options(options: Mapping[str, object]) -> dict[str, str | None]:
    """A copy of ``options`` safe to print: names and values redacted."""
    return {redact_name(key): redact_setting(key, value) for key, value in options.items()}
