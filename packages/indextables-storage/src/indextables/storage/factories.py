"""One factory per URI scheme; these are the ``indextables.stores`` entry points.

Each factory has the signature ``factory(uri, **options) -> ObjectStore``, so
the protocol can open a store from its entry point without importing this
package. Options that belong to another backend are accepted and ignored.
"""

from __future__ import annotations

from indextables.protocol.store import ObjectStore
from indextables.storage.errors import ConfigurationError
from indextables.storage.local import LocalStore
from indextables.storage.memory import MemoryStore
from indextables.storage.options import canonical, parse_azure_options, parse_s3_options
from indextables.storage.uris import local_path, parse_azure_uri, parse_bucket_uri

__all__ = ["azure_store", "local_store", "memory_store", "s3_store"]


def local_store(uri: str, **options: object) -> ObjectStore:
    """Open a :class:`LocalStore` for a plain path or ``file://`` URI."""
    canonical(options)  # reject unknown option names early, even when unused here
    return LocalStore(local_path(uri))


def memory_store(uri: str, **options: object) -> ObjectStore:
    """Open the :class:`MemoryStore` named by ``memory://name[/root]``."""
    canonical(options)
    location = parse_bucket_uri(uri)
    return MemoryStore(location.bucket, root=location.prefix)


def s3_store(uri: str, **options: object) -> ObjectStore:
    """Open an :class:`~indextables.storage.s3.S3Store` for ``s3://`` or ``s3a://``."""
    location = parse_bucket_uri(uri)
    parsed = parse_s3_options(options)
    try:
        from indextables.storage.s3 import S3Store
    except ImportError as error:
        raise ConfigurationError(
            f"{location.scheme}:// needs boto3: pip install 'indextables-storage[s3]' ({error})"
        ) from None
    return S3Store(location.bucket, prefix=location.prefix, options=parsed, scheme=location.scheme)


def azure_store(uri: str, **options: object) -> ObjectStore:
    """Open an :class:`~indextables.storage.azureblob.AzureBlobStore` for ``abfss://``/``az://``."""
    location = parse_azure_uri(uri)
    parsed = parse_azure_options(options)
    try:
        from indextables.storage.azureblob import AzureBlobStore
    except ImportError as error:
        raise ConfigurationError(
            "Azure URIs need azure-storage-blob: "
            f"pip install 'indextables-storage[azure]' ({error})"
        ) from None
    return AzureBlobStore(
        location.container, account=location.account, prefix=location.prefix, options=parsed
    )
