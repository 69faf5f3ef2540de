"""Reading a log object that never changes, again when its bytes do not decode.

Version files and state roots are written once, whole, by a conditional create,
and never rewritten. Bytes of one that do not decode (0 bytes, a cut gzip or
Avro stream) are then either damage or a read the server cut short: SeaweedFS
once served an empty version file right after a writer was killed mid-commit.
:func:`read_decoded` reads such an object again, :data:`REREAD_PAUSES` apart,
until it decodes or the same bytes come back twice (damaged for good).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TypeVar

from indextables.protocol.errors import CorruptFileError
from indextables.protocol.store import ObjectStore

__all__ = ["REREAD_PAUSES", "read_decoded"]

_LOG = logging.getLogger(__name__)

#: Pauses before each re-read of an object whose bytes did not decode (seconds).
REREAD_PAUSES: tuple[float, ...] = (0.2, 0.5, 1.0, 2.0)

T = TypeVar("T")


def read_decoded(store: ObjectStore, key: str, decode: Callable[[bytes], T]) -> T:
    """``decode(store.get(key))``, reading the object again while it does not decode.

    Raises:
        ObjectNotFoundError: the object does not exist.
        CorruptFileError: the bytes do not decode, the same on two reads (or on
            every read, each time different).
    """
    data = store.get(key)
    try:
        return decode(data)
    except CorruptFileError as exc:
        error = exc
    for pause in REREAD_PAUSES:
        _LOG.warning("%s; reading it again in %.1f s", error, pause)
        time.sleep(pause)
        again = store.get(key)
        if again == data and data:
            break  # the same bytes twice: damaged for good
        try:
            return decode(again)
        except CorruptFileError as exc:
            data, error = again, exc
    raise error
