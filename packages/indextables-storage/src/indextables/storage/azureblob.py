"""The Azure Blob store (azure-storage-blob): ``If-None-Match: *`` creates, ranged downloads.

The SDK's own retries are switched off for the same reason as botocore's
(see :mod:`indextables.storage.s3`); :mod:`indextables.storage.retry` retries
and settles an ambiguous put-if-absent by reading the blob back.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from azure.core.exceptions import HttpResponseError, ResourceNotFoundError
from azure.storage.blob import BlobServiceClient, ContainerClient

from indextables.protocol.store import ObjectInfo
from indextables.storage.azureerrors import classify_azure, error_code
from indextables.storage.errors import ConfigurationError
from indextables.storage.keys import check_prefix, join_root, normalize_root
from indextables.storage.options import AzureOptions, CommonOptions
from indextables.storage.remote import RemoteStore
from indextables.storage.retry import Failure
from indextables.storage.secrets import Secret, install_log_redaction

__all__ = ["AzureBlobStore"]

_DELETE_BATCH = 256  # a blob batch holds at most 256 sub-requests


class StaticTokenCredential:
    """An Azure token credential that hands out one bearer token (``azure.bearerToken``).

    The token is used as given; when it expires requests fail with an
    authentication error, as the reference's static token does.
    """

    def __init__(self, token: Secret, *, expires_on: int | None = None) -> None:
        self._token = token
        self._expires_on = expires_on if expires_on is not None else int(time.time()) + 3600

    def get_token(self, *scopes: str, **kwargs: Any) -> Any:
        """The token, in azure-core's ``AccessToken`` form."""
        from azure.core.credentials import AccessToken

        return AccessToken(self._token.reveal(), self._expires_on)

    def __repr__(self) -> str:
        return "StaticTokenCredential(***)"


def _credential(options: AzureOptions, account: str | None) -> Any:
    if options.bearer_token is not None:
        return StaticTokenCredential(options.bearer_token)
    if options.account_key is not None:
        if not account:
            raise ConfigurationError("an Azure account key needs an account name")
        return {"account_name": account, "account_key": options.account_key.reveal()}
    if options.sas_token is not None:
        return options.sas_token.reveal()
    if options.client_id or options.tenant_id or options.client_secret:
        return _service_principal(options)
    return _default_credential()


def _service_principal(options: AzureOptions) -> Any:
    if not (options.client_id and options.tenant_id and options.client_secret):
        raise ConfigurationError("a service principal needs tenant_id, client_id and client_secret")
    try:
        from azure.identity import ClientSecretCredential
    except ImportError:
        raise ConfigurationError(
            "service principal auth needs: pip install azure-identity"
        ) from None
    return ClientSecretCredential(
        options.tenant_id, options.client_id, options.client_secret.reveal()
    )


def _default_credential() -> Any:
    try:
        from azure.identity import DefaultAzureCredential
    except ImportError:
        return None  # anonymous: public containers only
    return DefaultAzureCredential()


def _service(options: AzureOptions, account: str | None) -> BlobServiceClient:
    settings: dict[str, Any] = {
        "retry_total": 0,
        "connection_timeout": options.common.connect_timeout,
        "read_timeout": options.common.read_timeout,
    }
    if options.connection_string is not None:
        return BlobServiceClient.from_connection_string(
            options.connection_string.reveal(), **settings
        )
    if not (options.endpoint_url or account):
        raise ConfigurationError(
            "Azure needs an account: abfss://container@account... or account_name"
        )
    url = options.endpoint_url or f"https://{account}.blob.core.windows.net"
    return BlobServiceClient(url, credential=_credential(options, account), **settings)


class AzureBlobStore(RemoteStore):
    """An :class:`~indextables.protocol.store.ObjectStore` on an Azure Blob container.

    Args:
        container: the blob container.
        account: the storage account (from the URI), else ``options.account_name``.
        prefix: the root prefix inside the container.
        options: account, credentials, endpoint, timeouts, retries.

    Consistency: strongly consistent reads and lists; ``put_if_absent`` is an
    upload with ``If-None-Match: *``, atomic on the service (409 when the blob exists).
    """

    def __init__(
        self,
        container: str,
        *,
        account: str | None = None,
        prefix: str = "",
        options: AzureOptions | None = None,
    ) -> None:
        self._options = options or AzureOptions()
        self._account = account or self._options.account_name
        self._container_name = container
        self._root = normalize_root(prefix)
        service = _service(self._options, self._account)
        self._container: ContainerClient = service.get_container_client(container)
        install_log_redaction()

    def __repr__(self) -> str:
        return f"AzureBlobStore(uri={self.uri!r}, endpoint_url={self._options.endpoint_url!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        # Spark ships stores to executors: pickle the settings, rebuild the client there.
        factory = functools.partial(
            AzureBlobStore, account=self._account, prefix=self._root, options=self._options
        )
        return (factory, (self._container_name,))

    @property
    def uri(self) -> str:
        """``abfss://container@account.dfs.core.windows.net/prefix`` (or ``az://``)."""
        if self._account:
            base = f"abfss://{self._container_name}@{self._account}.dfs.core.windows.net"
        else:
            base = f"az://{self._container_name}"
        return f"{base}/{self._root}".rstrip("/")

    @property
    def _common(self) -> CommonOptions:
        return self._options.common

    def _classify(self, error: Exception, *, where: str) -> Failure:
        return classify_azure(error, where=where)

    def get(self, key: str) -> bytes:
        """Return the whole blob."""
        name = self._name(key)
        return self._call(key, "get", lambda: self._container.download_blob(name).readall())

    def _read_range(self, name: str, start: int, end: int) -> bytes:
        try:
            stream = self._container.download_blob(name, offset=start, length=end - start)
            data: bytes = stream.readall()
            return data
        except HttpResponseError as error:
            if error.status_code == 416:
                return b""  # start is at or past the end of the blob
            raise

    def head(self, key: str) -> ObjectInfo:
        """Return the blob's size, modification time and etag."""
        name = self._name(key)
        props = self._call(
            key, "head", lambda: self._container.get_blob_client(name).get_blob_properties()
        )
        return ObjectInfo(
            key, int(props.size), int(props.last_modified.timestamp() * 1000), props.etag
        )

    def put(self, key: str, data: bytes) -> None:
        """Create or replace the blob (block uploads for large data, committed at once)."""
        name = self._name(key)
        self._call(
            key,
            "put",
            lambda: self._container.upload_blob(name, data, overwrite=True, validate_content=True),
        )

    def _create(self, name: str, data: bytes) -> None:
        # validate_content: every request carries Content-MD5, so a service that received
        # less than the body refuses it (Azurite stored 0 bytes for a body lost on the way).
        self._container.upload_blob(name, data, overwrite=False, validate_content=True)

    def list(self, prefix: str = "") -> Iterator[ObjectInfo]:
        """Yield every blob whose key starts with ``prefix``, in key order."""
        full = join_root(self._root, check_prefix(prefix, store=self.uri))
        skip = len(self._root) + 1 if self._root else 0
        token: str | None = None
        while True:
            page, token = self._call(
                prefix or "<root>", "list", functools.partial(self._list_page, full, token)
            )
            for blob in page:
                yield ObjectInfo(
                    blob.name[skip:],
                    int(blob.size),
                    int(blob.last_modified.timestamp() * 1000),
                    blob.etag,
                )
            if not token:
                return

    def _list_page(self, full: str, token: str | None) -> tuple[Sequence[Any], str | None]:
        listing = self._container.list_blobs(name_starts_with=full, results_per_page=1000)
        pages: Any = listing.by_page(continuation_token=token)
        page = [*next(pages, [])]
        return page, pages.continuation_token

    def delete(self, key: str) -> None:
        """Delete the blob; a missing key is not an error."""
        name = self._name(key)
        self._call(key, "delete", lambda: self._delete(name))

    def _delete(self, name: str) -> None:
        try:
            self._container.delete_blob(name)
        except ResourceNotFoundError as error:
            if error_code(error) == "ContainerNotFound":
                raise

    def delete_many(self, keys: Iterable[str]) -> None:
        """Delete blobs in batches of 256 (one blob-batch request each)."""
        names = [self._name(key) for key in keys]
        for start in range(0, len(names), _DELETE_BATCH):
            batch = names[start : start + _DELETE_BATCH]
            self._call(batch[0], "delete_many", functools.partial(self._delete_batch, batch))

    def _delete_batch(self, names: Sequence[str]) -> None:
        responses = self._container.delete_blobs(*names, raise_on_any_failure=False)
        for name, response in zip(names, responses, strict=False):
            if response.status_code not in (200, 202, 404):
                error = HttpResponseError(response=response)
                raise classify_azure(error, where=f"{self.uri} object {name!r}").error
