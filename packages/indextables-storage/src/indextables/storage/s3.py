"""The S3 store (boto3): ``IfNoneMatch='*'`` puts, ranged GETs, paged listings, batch deletes.

botocore's own retries are switched off: they would resend a conditional
put whose first attempt may have landed and report a false conflict. This
store retries itself (:mod:`indextables.storage.retry`) and settles an
ambiguous put-if-absent by reading the key back.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import hashlib
import os
import threading
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import boto3
from botocore.config import Config

from indextables.protocol.store import ObjectInfo
from indextables.storage.keys import check_prefix, join_root, normalize_root
from indextables.storage.options import CommonOptions, S3Options
from indextables.storage.remote import RemoteStore
from indextables.storage.retry import Failure
from indextables.storage.s3errors import classify_s3
from indextables.storage.secrets import install_log_redaction, redact

__all__ = ["S3Store"]

_DELETE_BATCH = 1000  # DeleteObjects accepts at most 1000 keys


# Building a boto3 client takes ~0.1 s here, and stores are opened per table
# access (each planning call, each task): clients are shared per process by
# options. boto3 clients are thread-safe; the process id in the key keeps a
# forked child from using its parent's connection pool.
_CLIENTS: dict[tuple[int, S3Options], Any] = {}
_CLIENTS_LOCK = threading.Lock()
_MAX_CLIENTS = 32


def shared_client(options: S3Options) -> Any:
    """The process's boto3 S3 client for ``options`` (built on first use)."""
    key = (os.getpid(), options)
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(key)
    if client is not None:
        return client
    client = _make_client(options)
    with _CLIENTS_LOCK:
        if len(_CLIENTS) >= _MAX_CLIENTS:
            _CLIENTS.clear()
        return _CLIENTS.setdefault(key, client)


def _make_client(options: S3Options) -> Any:
    def reveal(secret: Any) -> str | None:
        return secret.reveal() if secret is not None else None

    session = boto3.session.Session(profile_name=options.profile)
    config = Config(
        connect_timeout=options.common.connect_timeout,
        read_timeout=options.common.read_timeout,
        retries={"total_max_attempts": 1, "mode": "standard"},
        s3={"addressing_style": "path" if options.path_style else "auto"},
        signature_version="s3v4",
        # Third-party S3 servers do not all handle the newer default checksums.
        request_checksum_calculation="when_required",
        response_checksum_validation="when_required",
    )
    client = session.client(
        "s3",
        endpoint_url=options.endpoint_url,
        region_name=options.region,
        aws_access_key_id=reveal(options.access_key_id),
        aws_secret_access_key=reveal(options.secret_access_key),
        aws_session_token=reveal(options.session_token),
        config=config,
    )
    install_log_redaction()
    return client


class S3Store(RemoteStore):
    """An :class:`~indextables.protocol.store.ObjectStore` on an S3 (or S3-compatible) bucket.

    Args:
        bucket: the bucket.
        prefix: the root prefix inside the bucket (keys are relative to it).
        options: endpoint, region, credentials, addressing, timeouts, retries.
        scheme: ``"s3"`` or ``"s3a"``, for :attr:`uri`.

    Consistency: S3 is strongly consistent for reads after writes and lists;
    ``put_if_absent`` is atomic where the server implements ``If-None-Match: *``
    atomically (AWS, SeaweedFS; moto's check is not atomic).
    """

    def __init__(
        self, bucket: str, *, prefix: str = "", options: S3Options | None = None, scheme: str = "s3"
    ) -> None:
        self._bucket = bucket
        self._root = normalize_root(prefix)
        self._options = options or S3Options()
        self._scheme = scheme
        self._client = shared_client(self._options)

    def __repr__(self) -> str:
        endpoint = self._options.endpoint_url
        shown = None if endpoint is None else redact(endpoint)
        return f"S3Store(uri={self.uri!r}, endpoint_url={shown!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        # Spark ships stores to executors: pickle the settings, rebuild the client there.
        factory = functools.partial(
            S3Store, prefix=self._root, options=self._options, scheme=self._scheme
        )
        return (factory, (self._bucket,))

    @property
    def uri(self) -> str:
        """``s3://bucket/prefix`` (no credentials, no endpoint)."""
        return f"{self._scheme}://{self._bucket}/{self._root}".rstrip("/")

    @property
    def _common(self) -> CommonOptions:
        return self._options.common

    def _classify(self, error: Exception, *, where: str) -> Failure:
        return classify_s3(error, where=where)

    def get(self, key: str) -> bytes:
        """Return the whole object."""
        name = self._name(key)
        return self._call(key, "get", lambda: self._read(Key=name))

    def _read(self, **request: Any) -> bytes:
        response = self._client.get_object(Bucket=self._bucket, **request)
        data: bytes = response["Body"].read()
        return data

    def _read_range(self, name: str, start: int, end: int) -> bytes:
        try:
            return self._read(Key=name, Range=f"bytes={start}-{end - 1}")
        except self._client.exceptions.ClientError as error:
            if error.response.get("Error", {}).get("Code") == "InvalidRange":
                return b""  # start is at or past the end of the object
            raise

    def head(self, key: str) -> ObjectInfo:
        """Return the object's size, modification time and etag."""
        name = self._name(key)
        response = self._call(
            key, "head", lambda: self._client.head_object(Bucket=self._bucket, Key=name)
        )
        return ObjectInfo(
            key,
            int(response["ContentLength"]),
            int(response["LastModified"].timestamp() * 1000),
            str(response.get("ETag", "")).strip('"') or None,
        )

    def put(self, key: str, data: bytes) -> None:
        """Create or replace the object; multipart from ``multipart_threshold`` bytes."""
        name = self._name(key)
        if len(data) >= self._options.multipart_threshold:
            self._put_multipart(key, name, data)
            return
        digest = _content_md5(data)
        self._call(
            key,
            "put",
            lambda: self._client.put_object(
                Bucket=self._bucket, Key=name, Body=data, ContentMD5=digest
            ),
        )

    def _put_multipart(self, key: str, name: str, data: bytes) -> None:
        upload = self._call(
            key,
            "create_multipart_upload",
            lambda: self._client.create_multipart_upload(Bucket=self._bucket, Key=name),
        )
        upload_id = upload["UploadId"]
        try:
            parts = self._upload_parts(key, name, upload_id, data)
            self._call(
                key,
                "complete_multipart_upload",
                lambda: self._client.complete_multipart_upload(
                    Bucket=self._bucket,
                    Key=name,
                    UploadId=upload_id,
                    MultipartUpload={"Parts": parts},
                ),
            )
        except BaseException:
            with contextlib.suppress(Exception):  # keep the original error
                self._client.abort_multipart_upload(
                    Bucket=self._bucket, Key=name, UploadId=upload_id
                )
            raise

    def _upload_parts(
        self, key: str, name: str, upload_id: str, data: bytes
    ) -> list[dict[str, Any]]:
        size = self._options.multipart_part_size
        parts = []
        for number, offset in enumerate(range(0, len(data), size), start=1):
            chunk = data[offset : offset + size]
            upload = functools.partial(
                self._client.upload_part,
                Bucket=self._bucket,
                Key=name,
                UploadId=upload_id,
                PartNumber=number,
                Body=chunk,
                ContentMD5=_content_md5(chunk),
            )
            response = self._call(key, f"upload_part {number}", upload)
            parts.append({"PartNumber": number, "ETag": response["ETag"]})
        return parts

    def _create(self, name: str, data: bytes) -> None:
        self._client.put_object(
            Bucket=self._bucket, Key=name, Body=data, IfNoneMatch="*", ContentMD5=_content_md5(data)
        )

    def list(self, prefix: str = "") -> Iterator[ObjectInfo]:
        """Yield every object whose key starts with ``prefix``, in key order (paged)."""
        full = join_root(self._root, check_prefix(prefix, store=self.uri))
        skip = len(self._root) + 1 if self._root else 0
        token: str | None = None
        while True:
            page = self._list_page(prefix, full, token)
            for item in page.get("Contents", []):
                yield ObjectInfo(
                    item["Key"][skip:],
                    int(item["Size"]),
                    int(item["LastModified"].timestamp() * 1000),
                    str(item.get("ETag", "")).strip('"') or None,
                )
            if not page.get("IsTruncated"):
                return
            token = page["NextContinuationToken"]

    def _list_page(self, prefix: str, full: str, token: str | None) -> dict[str, Any]:
        request: dict[str, Any] = {"Bucket": self._bucket, "Prefix": full, "MaxKeys": 1000}
        if token:
            request["ContinuationToken"] = token
        page: dict[str, Any] = self._call(
            prefix or "<root>", "list", lambda: self._client.list_objects_v2(**request)
        )
        return page

    def delete(self, key: str) -> None:
        """Delete the object; a missing key is not an error."""
        name = self._name(key)
        self._call(key, "delete", lambda: self._client.delete_object(Bucket=self._bucket, Key=name))

    def delete_many(self, keys: Iterable[str]) -> None:
        """Delete objects in batches of 1000 (DeleteObjects)."""
        names = [self._name(key) for key in keys]
        for start in range(0, len(names), _DELETE_BATCH):
            batch = names[start : start + _DELETE_BATCH]
            self._delete_batch(batch)

    def _delete_batch(self, names: Sequence[str]) -> None:
        request = {"Objects": [{"Key": name} for name in names], "Quiet": True}
        response = self._call(
            names[0],
            "delete_many",
            lambda: self._client.delete_objects(Bucket=self._bucket, Delete=request),
        )
        errors = [e for e in response.get("Errors", []) if e.get("Code") != "NoSuchKey"]
        if errors:
            first = errors[0]
            failure = classify_s3(
                _as_client_error(first), where=f"{self.uri} key {first.get('Key')!r}"
            )
            raise failure.error


def _as_client_error(entry: dict[str, Any]) -> Exception:
    from botocore.exceptions import ClientError

    error: Exception = ClientError(
        {"Error": {"Code": entry.get("Code"), "Message": entry.get("Message")}}, "DeleteObjects"
    )
    return error


def _content_md5(data: bytes) -> str:
    """The ``Content-MD5`` of a request body. Every upload carries one, so a server that
    received less than the body refuses it (``BadDigest``) instead of storing a short or
    empty object (SeaweedFS stored 0 bytes for an unsigned payload that lost its body)."""
    return base64.b64encode(hashlib.md5(data, usedforsecurity=False).digest()).decode()
