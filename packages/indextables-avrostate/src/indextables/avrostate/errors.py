"""The exception hierarchy of ``indextables.avrostate``: everything derives from :class:`AvroStateError`."""

from __future__ import annotations

from indextables.protocol.errors import ProtocolError


class AvroStateError(ProtocolError):
    """Root of every error raised by indextables.avrostate."""
