"""Parsing of store URIs: a path or ``file://``, ``memory://``, ``s3://`` (also ``s3a://``,
``s3n://``), ``abfss://`` (also ``abfs://``, ``wasbs://``, ``wasb://``) and ``az://``."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from indextables.storage.errors import ConfigurationError

__all__ = [
    "AzureLocation",
    "BucketLocation",
    "local_path",
    "parse_azure_uri",
    "parse_bucket_uri",
    "scheme_of",
]

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+")


@dataclass(frozen=True, slots=True)
class BucketLocation:
    """``scheme://bucket/prefix`` (S3, memory)."""

    scheme: str
    bucket: str
    prefix: str


@dataclass(frozen=True, slots=True)
class AzureLocation:
    """An Azure Blob location.

    Attributes:
        container: the blob container (the user part of abfss://).
        account: the storage account, or ``None`` when the URI does not name it (az://).
        prefix: the path inside the container.
    """

    container: str
    account: str | None
    prefix: str


def scheme_of(uri: str) -> str:
    """Return the URI's scheme, ``"file"`` for a plain path (also ``C:\\...``)."""
    head, sep, _ = uri.partition("://")
    if not sep or not _SCHEME.fullmatch(head):
        return "file"
    return head.lower()


def _check_text(uri: str, *, local: bool) -> None:
    """Refuse a URI no store can use: a NUL byte, or a lone surrogate (not UTF-8).

    A local path may hold the surrogates Python decodes undecodable file name bytes
    to (``os.fsencode`` takes them back); any other lone surrogate is refused.
    The message shows the URI escaped, never raw, so printing it cannot fail.
    """
    if "\x00" in uri:
        raise ConfigurationError(f"{_safe(uri)!r}: the URI holds a NUL byte")
    if uri.isascii():
        return
    try:
        os.fsencode(uri) if local else uri.encode("utf-8")
    except UnicodeEncodeError:
        raise ConfigurationError(
            f"{_safe(uri)!r}: the URI holds a lone surrogate (not UTF-8)"
        ) from None


def local_path(uri: str) -> str:
    """Return the directory of a plain path or a ``file:/abs``, ``file:///abs`` or
    ``file://localhost/abs`` URI.

    Raises:
        ConfigurationError: another scheme, a remote host, a NUL byte, or a
            character the file system cannot encode.
    """
    _check_text(uri, local=True)
    if scheme_of(uri) != "file":
        raise ConfigurationError(f"{uri!r} is not a local path or file:// URI")
    if uri[:5].lower() == "file:" and uri[5:6] == "/" and uri[5:7] != "//":
        # file:/abs/path, the form Spark and Hadoop hand over (CREATE TABLE ... LOCATION)
        return os.path.abspath(unquote(uri[5:]))
    if uri[:7].lower() != "file://":
        return os.path.abspath(os.path.expanduser(uri))
    parts = urlsplit(uri)
    if parts.netloc not in ("", "localhost"):
        raise ConfigurationError(f"{uri!r}: file:// URIs must not name a remote host")
    return os.path.abspath(unquote(parts.path))


def parse_bucket_uri(uri: str) -> BucketLocation:
    """Split ``scheme://bucket/prefix`` (no credentials allowed in the URI).

    Raises:
        ConfigurationError: no bucket, credentials in the URI, a NUL byte or a
            lone surrogate.
    """
    _check_text(uri, local=False)
    scheme = scheme_of(uri)
    rest = uri.split("://", 1)[1]
    bucket, _, prefix = rest.partition("/")
    if not bucket:
        raise ConfigurationError(f"{_safe(uri)!r}: the URI names no bucket")
    if "@" in bucket or ":" in bucket:
        raise ConfigurationError(
            f"{scheme}://...: put credentials and endpoints in options, not in the URI"
        )
    return BucketLocation(scheme, bucket, prefix.strip("/"))


def parse_azure_uri(uri: str) -> AzureLocation:
    """Split ``abfss://container@account.dfs.core.windows.net/path`` or ``az://container/path``.

    ``abfs://`` and ``wasbs://``/``wasb://`` (``container@account.blob.core.windows.net``)
    name the same locations as Hadoop's drivers do; the account is the host's first label.

    Raises:
        ConfigurationError: no container or account, a NUL byte or a lone surrogate.
    """
    _check_text(uri, local=False)
    rest = uri.split("://", 1)[1]
    authority, _, prefix = rest.partition("/")
    container, at, host = authority.partition("@")
    account = host.split(".", 1)[0] if at else None
    if not container or (at and not account):
        raise ConfigurationError(f"{_safe(uri)!r}: expected abfss://container@account.host/path")
    return AzureLocation(container, account, prefix.strip("/"))


def _safe(uri: str) -> str:
    """The URI without anything that could be a credential (a user-info part)."""
    scheme, sep, rest = uri.partition("://")
    authority, slash, path = rest.partition("/")
    if ":" in authority.split("@", 1)[0] and "@" in authority:
        authority = "***@" + authority.split("@", 1)[1]
    return f"{scheme}{sep}{authority}{slash}{path}"
