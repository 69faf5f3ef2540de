"""The doc-store decoder's one exception type."""

from __future__ import annotations

__all__ = ["DocStoreError"]


class DocStoreError(ValueError):
    """A doc store that cannot be decoded: corrupt bytes, an unknown codec or value type code."""
