"""Key rules shared by every store: ``/``-separated, relative, no dot segments.

A store is rooted at a prefix (a directory, or a bucket/container path); keys
are relative to it. The same rules everywhere keep a table portable between
backends and keep a key from escaping its root on the local filesystem.
"""

from __future__ import annotations

from indextables.storage.errors import InvalidKeyError

__all__ = ["TEMP_MARKER", "check_key", "check_prefix", "join_root", "normalize_root"]

#: Name prefix of the local store's temporary files; keys may not use it.
TEMP_MARKER = ".indextables-tmp-"


def check_key(key: str, *, store: str) -> str:
    """Return ``key`` unchanged if it is a valid object key.

    Args:
        key: the key to check.
        store: the store's URI, for the error message.

    Raises:
        InvalidKeyError: empty, absolute, trailing ``/``, an empty, ``.``,
            ``..`` or reserved segment, a NUL byte, or a lone surrogate (keys are
            UTF-8 in every store).
    """
    if not isinstance(key, str) or not key:
        raise InvalidKeyError(f"{store}: invalid key {key!r}: keys are non-empty strings")
    for segment in key.split("/"):
        if segment in ("", ".", "..") or segment.startswith(TEMP_MARKER) or "\x00" in segment:
            raise InvalidKeyError(
                f"{store}: invalid key {key!r}: empty, '.', '..', NUL or reserved segment"
            )
    if not key.isascii() and not _utf8(key):
        raise InvalidKeyError(f"{store}: invalid key {key!r}: a lone surrogate (not UTF-8)")
    return key


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_prefix(prefix: str, *, store: str) -> str:
    """Return ``prefix`` if it can start a key (empty, or no dot segments before its end)."""
    if not isinstance(prefix, str):
        raise InvalidKeyError(f"{store}: invalid prefix {prefix!r}: prefixes are strings")
    if prefix.startswith("/") or "\x00" in prefix:
        raise InvalidKeyError(f"{store}: invalid prefix {prefix!r}: absolute or NUL")
    if any(segment in (".", "..") for segment in prefix.split("/")[:-1]):
        raise InvalidKeyError(f"{store}: invalid prefix {prefix!r}: '.' or '..' segment")
    return prefix


def normalize_root(root: str) -> str:
    """Strip ``/`` at both ends of a root prefix; ``""`` means the bucket/container root."""
    return root.strip("/")


def join_root(root: str, key: str) -> str:
    """Return the full object name of ``key`` under the root prefix ``root``."""
    return f"{root}/{key}" if root else key
