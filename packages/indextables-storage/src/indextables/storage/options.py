"""Options of ``open_store``: canonical names, the reference's Spark aliases, typed values.

Every option has one canonical snake_case name; the ``spark.indextables.*``
keys of the Scala reference are accepted as aliases (case-insensitively,
because Spark lower-cases option keys). Options that belong to another
backend are ignored, so one ``storage_options`` mapping serves every URI;
an unknown name that is neither raises :class:`ConfigurationError`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from urllib.parse import unquote, urlsplit

from indextables.storage.errors import ConfigurationError
from indextables.storage.redaction import redact_name, redact_uri
from indextables.storage.secrets import Secret, reveal

__all__ = [
    "ALIASES",
    "AzureOptions",
    "CommonOptions",
    "S3Options",
    "parse_azure_options",
    "parse_common_options",
    "parse_s3_options",
]

#: ``spark.indextables.*`` key (lower-cased) -> canonical option name.
ALIASES: Mapping[str, str] = {
    "spark.indextables.aws.accesskey": "access_key_id",
    "spark.indextables.aws.secretkey": "secret_access_key",
    "spark.indextables.aws.sessiontoken": "session_token",
    "spark.indextables.aws.region": "region",
    "spark.indextables.aws.endpoint": "endpoint_url",
    "spark.indextables.s3.endpoint": "endpoint_url",
    "spark.indextables.s3.serviceurl": "endpoint_url",
    "spark.indextables.aws.forcepathstyle": "path_style",
    "spark.indextables.s3.pathstyleaccess": "path_style",
    "spark.indextables.aws.pathstyleaccess": "path_style",
    "spark.indextables.azure.accountname": "account_name",
    "spark.indextables.azure.accountkey": "account_key",
    "spark.indextables.azure.connectionstring": "connection_string",
    "spark.indextables.azure.endpoint": "endpoint_url",
    "spark.indextables.azure.tenantid": "tenant_id",
    "spark.indextables.azure.clientid": "client_id",
    "spark.indextables.azure.clientsecret": "client_secret",
    "spark.indextables.azure.bearertoken": "bearer_token",
    "spark.indextables.s3.multipartthreshold": "multipart_threshold",
    "spark.indextables.s3.partsize": "multipart_part_size",
}
_ALIAS_NAMES = frozenset(ALIASES)

# Store settings of the reference that have no effect here: accepted, with one warning each.
IGNORED: Mapping[str, str] = {
    "spark.indextables.aws.credentialsproviderclass": (
        "custom JVM credential providers do not exist in Python; boto3's default chain "
        "(environment, profile, instance role) or static keys are used"
    ),
    "spark.indextables.s3.maxconcurrency": "uploads are sequential per task here",
    "spark.indextables.s3.maxqueuesize": "uploads are sequential per task here",
    "spark.indextables.s3.streamingthreshold": "multipart_threshold decides streaming uploads",
}
_STORE_PREFIXES = ("spark.indextables.aws.", "spark.indextables.s3.", "spark.indextables.azure.")
_WARNED: set[str] = set()
_LOG = logging.getLogger("indextables.storage")


@dataclass(frozen=True, slots=True, kw_only=True)
class CommonOptions:
    """Options every remote store understands.

    Attributes:
        connect_timeout: seconds to establish a connection.
        read_timeout: seconds to wait for a response once the request is sent.
        max_attempts: tries per operation for transient errors (1 = no retry).
        retry_base_delay: first backoff delay in seconds (doubles, with jitter).
        retry_max_delay: cap of one backoff delay in seconds.
    """

    connect_timeout: float = 10.0
    read_timeout: float = 60.0
    max_attempts: int = 5
    retry_base_delay: float = 0.1
    retry_max_delay: float = 5.0


@dataclass(frozen=True, slots=True, kw_only=True)
class S3Options:
    """Options of the S3 store (``s3://``, ``s3a://``).

    Attributes:
        endpoint_url: a custom endpoint (MinIO, SeaweedFS, moto); ``None`` = AWS.
        region: the bucket's region; ``None`` = boto3's default chain.
        access_key_id: static credentials; ``None`` = boto3's default chain.
        secret_access_key: the secret of ``access_key_id``.
        session_token: a temporary session token.
        profile: a named profile of the shared AWS config files.
        path_style: address buckets as ``endpoint/bucket`` instead of virtual hosts.
        multipart_threshold: ``put`` uses a multipart upload from this many bytes.
        multipart_part_size: bytes per part of a multipart upload (>= 5 MiB).
        common: timeouts and retries.
    """

    endpoint_url: str | None = None
    region: str | None = None
    access_key_id: Secret | None = None
    secret_access_key: Secret | None = None
    session_token: Secret | None = None
    profile: str | None = None
    path_style: bool = False
    multipart_threshold: int = 64 * 1024 * 1024
    multipart_part_size: int = 16 * 1024 * 1024
    common: CommonOptions = field(default_factory=CommonOptions)


@dataclass(frozen=True, slots=True, kw_only=True)
class AzureOptions:
    """Options of the Azure Blob store (``abfss://``, ``az://``).

    Attributes:
        account_name: the storage account (also taken from an abfss:// host).
        account_key: shared-key credential.
        connection_string: a full connection string (overrides the others).
        sas_token: a shared access signature.
        endpoint_url: the blob service URL (Azurite: ``http://127.0.0.1:P/devstoreaccount1``).
        tenant_id: service principal tenant (needs the azure-identity package).
        client_id: service principal application id.
        client_secret: service principal secret.
        bearer_token: an OAuth access token for Azure Storage (the caller refreshes it).
        common: timeouts and retries.
    """

    account_name: str | None = None
    account_key: Secret | None = None
    connection_string: Secret | None = None
    sas_token: Secret | None = None
    endpoint_url: str | None = None
    tenant_id: str | None = None
    client_id: str | None = None
    client_secret: Secret | None = None
    bearer_token: Secret | None = None
    common: CommonOptions = field(default_factory=CommonOptions)


_SECRETS = frozenset(
    {
        "access_key_id",
        "secret_access_key",
        "session_token",
        "account_key",
        "connection_string",
        "sas_token",
        "client_secret",
        "bearer_token",
    }
)
_COMMON = frozenset(f.name for f in fields(CommonOptions))
_S3 = frozenset(f.name for f in fields(S3Options)) - {"common"}
_AZURE = frozenset(f.name for f in fields(AzureOptions)) - {"common"}
KNOWN = _COMMON | _S3 | _AZURE


#: The data source options' spelling of a store option (``storage.region``), accepted too.
DATA_SOURCE_PREFIX = "storage."


def canonical(options: Mapping[str, object]) -> dict[str, object]:
    """Map aliases to canonical names, drop unrelated Spark keys and ``None`` values.

    ``storage.<name>`` (the data source options' spelling) is ``<name>``.

    Raises:
        ConfigurationError: an unknown option name, or two names for one option
            with different values.
    """
    result: dict[str, object] = {}
    for name, value in options.items():
        lowered = name.lower()
        if lowered.startswith("spark."):
            target = ALIASES.get(lowered)
            if target is None and lowered in IGNORED:
                if lowered not in _WARNED:
                    _WARNED.add(lowered)
                    _LOG.warning("%s has no effect here: %s", name, IGNORED[lowered])
                continue
            if target is None and lowered.startswith(_STORE_PREFIXES):
                # A typo here would silently drop a credential or an endpoint.
                raise ConfigurationError(
                    f"unknown storage setting {redact_name(name)!r}; known: {sorted(_ALIAS_NAMES)}"
                )
            if target is None:
                continue  # other spark.indextables.* settings are not ours
        elif name in KNOWN:
            target = name
        elif lowered.startswith(DATA_SOURCE_PREFIX) and name[len(DATA_SOURCE_PREFIX) :] in KNOWN:
            target = name[len(DATA_SOURCE_PREFIX) :]  # the data source's spelling
        else:
            raise ConfigurationError(
                f"unknown storage option {redact_name(name)!r}; known: {sorted(KNOWN)}"
            )
        if value is None:
            continue
        if target in result and reveal(result[target]) != reveal(value):
            raise ConfigurationError(
                f"storage option {target!r} is given twice (as {redact_name(name)!r})"
            )
        result[target] = value
    return result


def _register_url_password(url: str) -> None:
    """Make a password written into an endpoint URL a known secret (redacted everywhere)."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return
    if password:
        Secret(password)
        Secret(unquote(password))


def _check_endpoint(url: str) -> None:
    """Refuse an endpoint the client libraries cannot use, before they see it.

    botocore raises a raw ``ValueError`` that quotes the whole URL (with a
    password in its user info); this error shows the URL redacted.
    """
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - a non-numeric port raises here
    except ValueError:
        parts = None
    if parts is None or parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        shown = redact_uri(url)
        if "@" in shown:  # user info the URL pattern did not recognise
            shown = "***@" + shown.rsplit("@", 1)[1]
        raise ConfigurationError(f"storage option 'endpoint_url' is not an http(s) URL: {shown!r}")


def _convert(name: str, value: object, kind: type) -> object:
    if name in _SECRETS:
        return value if isinstance(value, Secret) else Secret(str(value))
    if name == "endpoint_url" and isinstance(value, str):
        _register_url_password(value)
        _check_endpoint(value)
    if kind is bool:
        return _to_bool(name, value)
    if kind in (int, float):
        try:
            return int(str(value)) if kind is int else float(str(value))
        except ValueError:
            raise ConfigurationError(f"storage option {name!r} is not a number") from None
    return str(value)


def _to_bool(name: str, value: object) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise ConfigurationError(f"storage option {name!r} must be true or false")


_KINDS: dict[str, type] = {
    "connect_timeout": float,
    "read_timeout": float,
    "max_attempts": int,
    "retry_base_delay": float,
    "retry_max_delay": float,
    "path_style": bool,
    "multipart_threshold": int,
    "multipart_part_size": int,
}


def _typed(options: Mapping[str, object], names: frozenset[str]) -> dict[str, object]:
    values = canonical(options)
    return {
        name: _convert(name, value, _KINDS.get(name, str))
        for name, value in values.items()
        if name in names
    }


def parse_common_options(options: Mapping[str, object]) -> CommonOptions:
    """Build :class:`CommonOptions` from ``open_store`` keyword options."""
    common = CommonOptions(**_typed(options, _COMMON))  # type: ignore[arg-type]
    if common.max_attempts < 1:
        raise ConfigurationError("storage option 'max_attempts' must be at least 1")
    return common


def parse_s3_options(options: Mapping[str, object]) -> S3Options:
    """Build :class:`S3Options` from ``open_store`` keyword options (aliases allowed)."""
    parsed = S3Options(
        **_typed(options, _S3),  # type: ignore[arg-type]
        common=parse_common_options(options),
    )
    if parsed.multipart_part_size < 5 * 1024 * 1024:
        raise ConfigurationError("storage option 'multipart_part_size' must be >= 5 MiB")
    return parsed


def parse_azure_options(options: Mapping[str, object]) -> AzureOptions:
    """Build :class:`AzureOptions` from ``open_store`` keyword options (aliases allowed)."""
    return AzureOptions(
        **_typed(options, _AZURE),  # type: ignore[arg-type]
        common=parse_common_options(options),
    )
