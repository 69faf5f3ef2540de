"""A companion source's own storage settings, separate from the index table's.

The reference reads a companion's Parquet files with the
``spark.indextables.companion.parquet.aws.*`` keys (``accessKey``, ``secretKey``,
``sessionToken``, ``region``, ``endpoint``) and
``spark.indextables.companion.parquet.azure.*`` keys (``accountName``,
``accountKey``, ``connectionString``), and takes explicit companion credentials as
``spark.indextables.companion.aws.accessKey`` / ``secretKey`` / ``sessionToken``.
:func:`source_options` turns the options a build or a read is given into the
options the source's store is opened with: without any of these keys, the index
table's own options, unchanged; with them, the index's options with the given
settings replaced, and, when any credential is given, every credential of the index
for that cloud dropped (a source key never mixes with an index secret or profile).

Beyond the reference's names, ``...companion.parquet.aws.pathStyleAccess`` and
``...companion.parquet.azure.sasToken`` / ``endpoint`` are accepted.
"""

from __future__ import annotations

from collections.abc import Mapping

from indextables.search.errors import CompanionSourceError

__all__ = ["SOURCE_KEY_PREFIXES", "has_source_settings", "source_options"]

_PARQUET_AWS = "spark.indextables.companion.parquet.aws."
_COMPANION_AWS = "spark.indextables.companion.aws."
_PARQUET_AZURE = "spark.indextables.companion.parquet.azure."

#: The prefixes of the source's own keys (lower case).
SOURCE_KEY_PREFIXES = (_PARQUET_AWS, _COMPANION_AWS, _PARQUET_AZURE)

# key suffix (lower case) -> the storage layer's canonical option name
_AWS_NAMES = {
    "accesskey": "access_key_id",
    "secretkey": "secret_access_key",
    "sessiontoken": "session_token",
    "region": "region",
    "endpoint": "endpoint_url",
    "pathstyleaccess": "path_style",
}
_COMPANION_AWS_NAMES = {
    "accesskey": "access_key_id",
    "secretkey": "secret_access_key",
    "sessiontoken": "session_token",
}
_AZURE_NAMES = {
    "accountname": "account_name",
    "accountkey": "account_key",
    "connectionstring": "connection_string",
    "sastoken": "sas_token",
    "endpoint": "endpoint_url",
}
_AWS_CREDENTIALS = frozenset({"access_key_id", "secret_access_key", "session_token", "profile"})
_AZURE_CREDENTIALS = frozenset(
    {
        "account_name",
        "account_key",
        "connection_string",
        "sas_token",
        "tenant_id",
        "client_id",
        "client_secret",
        "bearer_token",
    }
)
_STORAGE = "storage."


def has_source_settings(options: Mapping[str, object] | None) -> bool:
    """Whether ``options`` name any of the source's own storage keys."""
    return any(str(k).lower().startswith(SOURCE_KEY_PREFIXES) for k in (options or {}))


def source_options(options: Mapping[str, str] | None) -> dict[str, str]:
    """The options the source's store is opened with (see the module's text).

    Raises:
        CompanionSourceError: an unknown key under a source prefix, or one setting
            given twice with different values (named, never its value).
    """
    given = dict(options or {})
    aws = _settings(given, ((_PARQUET_AWS, _AWS_NAMES), (_COMPANION_AWS, _COMPANION_AWS_NAMES)))
    azure = _settings(given, ((_PARQUET_AZURE, _AZURE_NAMES),))
    if not aws and not azure:
        return given
    replaced: set[str] = set()
    for settings, credentials in ((aws, _AWS_CREDENTIALS), (azure, _AZURE_CREDENTIALS)):
        replaced |= set(settings)
        if credentials & set(settings):
            replaced |= credentials
    result = {
        key: value
        for key, value in given.items()
        if not str(key).lower().startswith(SOURCE_KEY_PREFIXES)
        and _canonical(str(key)) not in replaced
    }
    for name, value in {**aws, **azure}.items():
        result[_STORAGE + name] = value
    return result


def _settings(
    given: Mapping[str, str], families: tuple[tuple[str, Mapping[str, str]], ...]
) -> dict[str, str]:
    """canonical name -> value of the keys under ``families``' prefixes (earlier wins)."""
    found: dict[str, tuple[str, str]] = {}
    for prefix, names in families:
        for key, value in given.items():
            lowered = str(key).lower()
            if not lowered.startswith(prefix):
                continue
            name = names.get(lowered[len(prefix) :])
            if name is None:
                known = ", ".join(sorted(prefix + n for n in names))
                raise CompanionSourceError(
                    f"unknown companion source setting {key!r}; known: {known}"
                )
            if value is None or str(value) == "":
                continue
            if name in found and found[name][1] != str(value):
                raise CompanionSourceError(
                    f"companion source settings {found[name][0]!r} and {key!r} "
                    "have different values: give one"
                )
            found.setdefault(name, (str(key), str(value)))
    return {name: value for name, (_, value) in found.items()}


def _canonical(key: str) -> str | None:
    """The storage option an index option key sets (None: not a storage option)."""
    from indextables.storage.options import ALIASES

    lowered = key.lower()
    if lowered.startswith(_STORAGE):
        return lowered[len(_STORAGE) :]
    return ALIASES.get(lowered)
