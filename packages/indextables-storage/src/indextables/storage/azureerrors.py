"""Classification of azure-core / azure-storage-blob failures into storage errors."""

from __future__ import annotations

from azure.core.exceptions import (
    ClientAuthenticationError,
    HttpResponseError,
    ResourceExistsError,
    ResourceNotFoundError,
    ServiceRequestError,
    ServiceResponseError,
)

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

__all__ = ["classify_azure", "error_code"]

_THROTTLE_CODES = frozenset({"ServerBusy", "OperationTimedOut", "InternalError"})


def error_code(error: HttpResponseError) -> str:
    """The service's error code (``BlobNotFound``, ``BlobAlreadyExists``, ...), or ``""``."""
    return str(getattr(error, "error_code", None) or "")


def _first_line(error: Exception) -> str:
    # Later lines repeat request ids and the response body; keep the summary.
    text = str(getattr(error, "message", None) or error).strip().splitlines()
    return redact(text[0]) if text else type(error).__name__


def classify_azure(error: Exception, *, where: str) -> Failure:
    """Map one Azure SDK exception to a :class:`Failure`."""
    if isinstance(error, HttpResponseError):
        return _response_error(error, where)
    if isinstance(error, ServiceRequestError):
        return Failure(
            StorageError(f"{where}: cannot connect: {_first_line(error)}"), transient=True
        )
    if isinstance(error, ServiceResponseError):
        return Failure(
            StorageError(f"{where}: {_first_line(error)}"), transient=True, ambiguous=True
        )
    if type(error).__name__ == "AzureSigningError":
        return Failure(
            AuthenticationError(f"{where}: cannot sign the request: invalid account key")
        )
    return Failure(StorageError(f"{where}: {type(error).__name__}: {_first_line(error)}"))


def _response_error(error: HttpResponseError, where: str) -> Failure:
    code, status = error_code(error), int(error.status_code or 0)
    detail = f"{where}: {code or status} {_first_line(error)}"
    if code == "ContainerNotFound":
        return Failure(ContainerNotFoundError(detail))
    if isinstance(error, ResourceNotFoundError) or status == 404:
        return Failure(StorageNotFoundError(detail))
    if isinstance(error, ClientAuthenticationError) or status in (401, 403):
        return Failure(AuthenticationError(f"{detail} (check the account name and key)"))
    if isinstance(error, ResourceExistsError) and code in ("BlobAlreadyExists", ""):
        return Failure(StorageExistsError(f"{where}: key already exists (409)"))
    if status == 412 or code == "ConditionNotMet":
        return Failure(StorageExistsError(f"{where}: key already exists (412)"))
    if code in _THROTTLE_CODES or status in (408, 429) or status >= 500:
        return Failure(StorageError(detail), transient=True, ambiguous=True)
    if status == 409:
        return Failure(StoragePreconditionError(detail))
    return Failure(StorageError(detail))
