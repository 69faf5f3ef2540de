"""Classification of boto3/botocore failures into storage errors and retry decisions."""

from __future__ import annotations

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    NoCredentialsError,
    ReadTimeoutError,
    ResponseStreamingError,
)
from urllib3.exceptions import HTTPError as Urllib3Error

from indextables.storage.errors import (
    AuthenticationError,
    ContainerNotFoundError,
    StorageError,
    StorageExistsError,
    StorageNotFoundError,
    StoragePreconditionError,
)
from indextables.storage.retry import Failure
from indextables.storage.secrets import redact

__all__ = ["classify_s3"]

_AUTH_CODES = frozenset(
    {
        "AccessDenied",
        "InvalidAccessKeyId",
        "SignatureDoesNotMatch",
        "InvalidToken",
        "ExpiredToken",
        "AuthorizationHeaderMalformed",
        "InvalidSecurity",
    }
)
_NOT_FOUND_CODES = frozenset({"NoSuchKey", "404", "NotFound"})
_THROTTLE_CODES = frozenset(
    {"SlowDown", "Throttling", "ThrottlingException", "RequestLimitExceeded", "TooManyRequests"}
)
_TRANSIENT_CODES = _THROTTLE_CODES | {"RequestTimeout", "InternalError", "ServiceUnavailable"}


def classify_s3(error: Exception, *, where: str) -> Failure:
    """Map one boto3 exception to a :class:`Failure`.

    Args:
        error: what the client raised.
        where: ``"s3://bucket/prefix key 'k'"`` for the message.
    """
    if isinstance(error, ClientError):
        return _client_error(error, where)
    if isinstance(error, EndpointConnectionError | ConnectTimeoutError):
        # The request never reached the server.
        return Failure(
            StorageError(f"{where}: cannot connect: {redact(str(error))}"), transient=True
        )
    if isinstance(error, ReadTimeoutError | ConnectionClosedError | ResponseStreamingError):
        return Failure(
            StorageError(f"{where}: {redact(str(error))}"), transient=True, ambiguous=True
        )
    if isinstance(error, NoCredentialsError):
        return Failure(AuthenticationError(f"{where}: no AWS credentials found ({error})"))
    if isinstance(error, BotoCoreError | Urllib3Error | ConnectionError):
        return Failure(
            StorageError(f"{where}: {redact(str(error))}"), transient=True, ambiguous=True
        )
    return Failure(StorageError(f"{where}: {type(error).__name__}: {redact(str(error))}"))


def _client_error(error: ClientError, where: str) -> Failure:
    body = error.response.get("Error", {})
    code = str(body.get("Code", ""))
    status = int(error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
    message = redact(str(body.get("Message", "") or code))
    detail = f"{where}: {code or status} {message}".rstrip()
    if code == "NoSuchBucket":
        return Failure(ContainerNotFoundError(detail))
    if code in _NOT_FOUND_CODES or status == 404:
        return Failure(StorageNotFoundError(detail))
    if code in _AUTH_CODES or status in (401, 403):
        return Failure(AuthenticationError(f"{detail} (check the access key and secret)"))
    if code == "PreconditionFailed" or status == 412:
        return Failure(StorageExistsError(f"{where}: key already exists (412)"))
    if code == "ConditionalRequestConflict":
        # A concurrent conditional write is in flight; AWS asks to retry.
        return Failure(StorageError(detail), transient=True)
    if code in _TRANSIENT_CODES or status == 429 or status >= 500:
        return Failure(StorageError(detail), transient=True, ambiguous=True)
    if status == 409:
        return Failure(StoragePreconditionError(detail))
    return Failure(StorageError(detail))
