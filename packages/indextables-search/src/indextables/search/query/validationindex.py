"""Empty indexes that parse queries for validation, one per set of fields, kept open.

Making one costs ~30 ms, a large share of an interactive search, so the last
:data:`KEPT` are kept. Each lives in a temporary directory (only an index on disk
drops the inverted index of store-only fields, as a split's does), removed when
it leaves the cache or when the process exits.
"""

from __future__ import annotations

import atexit
import contextlib
import shutil
import threading
from collections import OrderedDict
from collections.abc import Iterator

import tantivy

from indextables.search.schema.mapping import FieldSpec, create_index
from indextables.search.scratchdirs import scratch_directory

__all__ = ["KEPT", "is_validation_index", "validation_index"]

#: Indexes kept open (the least recently used is dropped past this).
KEPT = 8
_INDEXES: OrderedDict[tuple[FieldSpec, ...], tuple[str, tantivy.Index]] = OrderedDict()
_LOCK = threading.Lock()
# id -> index of the indexes in ``_INDEXES`` (read without the lock, which a caller of
# :func:`validation_index` holds while it parses).
_KEPT_BY_ID: dict[int, tantivy.Index] = {}


@contextlib.contextmanager
def validation_index(specs: tuple[FieldSpec, ...]) -> Iterator[tantivy.Index]:
    """An empty index with ``specs``' fields, used by one caller at a time."""
    with _LOCK:
        found = _INDEXES.get(specs)
        if found is None:
            if not _INDEXES:
                atexit.register(_drop_all)
            directory = scratch_directory("validate")
            found = (directory, create_index(specs, directory))
            _INDEXES[specs] = found
            _KEPT_BY_ID[id(found[1])] = found[1]
            while len(_INDEXES) > KEPT:
                _, (old, dropped) = _INDEXES.popitem(last=False)
                _KEPT_BY_ID.pop(id(dropped), None)
                # Tantivy's threads may still touch the directory: never fail on cleanup.
                shutil.rmtree(old, ignore_errors=True)
        _INDEXES.move_to_end(specs)
        yield found[1]


def is_validation_index(index: object) -> bool:
    """Whether ``index`` is one of the validation indexes kept open here."""
    return _KEPT_BY_ID.get(id(index)) is index


def _drop_all() -> None:
    with _LOCK:
        while _INDEXES:
            _, (directory, dropped) = _INDEXES.popitem()
            _KEPT_BY_ID.pop(id(dropped), None)
            shutil.rmtree(directory, ignore_errors=True)
