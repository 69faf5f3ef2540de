"""Keep credentials out of everything the command line prints.

Storage options carry secrets (``secret_access_key``, SAS tokens, ...). The
command line never echoes their values: option mappings are shown redacted,
and any text that could quote one (error messages from a store) is scrubbed
of every secret value before it reaches the terminal.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

__all__ = ["REDACTED", "is_secret_key", "redact_options", "redact_text", "redact_uri"]

REDACTED = "***"

# Substrings of option names whose values are credentials. Matched on the
# lower-cased name with separators removed, so "AWS_SECRET_ACCESS_KEY",
# "secret-access-key" and "secretAccessKey" are all caught.
_SECRET_MARKERS = (
    "secret",
    "password",
    "passwd",
    "token",
    "sas",
    "credential",
    "accountkey",
    "accesskey",
    "privatekey",
    "signature",
    "connectionstring",
    "apikey",
    "auth",
)

# Query parameters of pre-signed / SAS URLs that carry a signature or a key.
_URI_SECRET_PARAMS = re.compile(
    r"(?i)([?&](?:sig|signature|x-amz-signature|x-amz-security-token|x-amz-credential|"
    r"token|sas|key|password)=)[^&#\s]*"
)
_URI_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)([^/@\s]+)@")


def _normalise(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def is_secret_key(name: str) -> bool:
    """Tell whether a storage option (or environment variable) name holds a credential.

    Access key *ids* count as secrets too: they identify an account and are
    never needed on screen.

    Args:
        name: the option name, in any case and separator style.

    Returns:
        True when the value must never be printed.

    Example:
        >>> is_secret_key("aws_secret_access_key"), is_secret_key("region")
        (True, False)
    """
    normalised = _normalise(name)
    return any(marker in normalised for marker in _SECRET_MARKERS)


def redact_options(options: Mapping[str, str]) -> dict[str, str]:
    """Return a copy of ``options`` with every credential value replaced by ``***``.

    Args:
        options: storage options as given by the user.

    Returns:
        A new dict, safe to print.
    """
    return {
        key: REDACTED if is_secret_key(key) else redact_uri(value) for key, value in options.items()
    }


def redact_uri(uri: str) -> str:
    """Remove credentials in user info and signature query parameters from a URI.

    User info with a ``:`` is a credential pair and goes whole; without one
    it is a name, such as the container of ``abfss://container@account...``,
    which is not a secret and stays.

    Example:
        >>> redact_uri("s3://AKIA:shh@bucket/t?sig=abc&x=1")
        's3://***@bucket/t?sig=***&x=1'
        >>> redact_uri("abfss://logs@acct.dfs.core.windows.net/t")
        'abfss://logs@acct.dfs.core.windows.net/t'
    """
    uri = _URI_USERINFO.sub(_userinfo, uri)
    return _URI_SECRET_PARAMS.sub(lambda m: f"{m.group(1)}{REDACTED}", uri)


def _userinfo(match: re.Match[str]) -> str:
    info = match.group(2)
    return f"{match.group(1)}{REDACTED if ':' in info else info}@"


def redact_text(text: str, secrets: Iterable[str]) -> str:
    """Replace every occurrence of each secret value in ``text`` (and any URI secrets).

    Args:
        text: a message about to be printed (an error message, a URI).
        secrets: the secret values to scrub; empty strings are ignored.

    Returns:
        ``text`` with each secret replaced by ``***``.
    """
    # Longest first, so a secret containing another is removed whole.
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return redact_uri(text)
