"""Exception hierarchy: everything here derives from :class:`AvroStateError`."""

from __future__ import annotations

from indextables.protocol.errors import ProtocolError


class AvroStateError(ProtocolError):
    """Root of every error raised by indextables.avrostate."""
