"""Retries with exponential backoff, and put-if-absent resolution after an ambiguous failure.

Only transient failures are retried (throttling, 5xx, timeouts, connection
resets). A conflict is never retried into a success: put-if-absent treats a
failure that may have reached the server (a timeout after sending, a reset,
a 5xx) as *ambiguous* and settles it by reading the key back: our bytes mean
our write landed; other bytes mean another writer won; no object means the
write did not happen, so it is sent again.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from indextables.storage.errors import (
    StorageError,
    StorageExistsError,
    StorageNotFoundError,
    TransientStorageError,
)
from indextables.storage.options import CommonOptions
from indextables.storage.secrets import redact

__all__ = ["Failure", "backoff_delays", "put_if_absent_resolved", "with_retries"]

_LOG = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Failure:
    """What a backend's classifier says about one failed request.

    Attributes:
        error: the error to raise when giving up (message without credentials).
        transient: retrying may succeed.
        ambiguous: the request may have been applied by the server.
    """

    error: StorageError
    transient: bool = False
    ambiguous: bool = False


Classifier = Callable[[Exception], Failure]


def backoff_delays(options: CommonOptions) -> Iterator[float]:
    """Delays between attempts: full jitter on ``base * 2**n``, capped; one per retry."""
    for attempt in range(options.max_attempts - 1):
        ceiling = min(options.retry_max_delay, options.retry_base_delay * 2**attempt)
        yield random.uniform(ceiling / 2, ceiling)


class ScrubbedClientError(Exception):
    """A client library's error whose message quoted a credential, with it replaced by ``***``."""


def scrubbed(raw: BaseException) -> BaseException:
    """``raw``, or a copy of its message without known credentials when it quotes one."""
    text = str(raw)
    clean = redact(text)
    if clean == text:
        return raw
    copy = ScrubbedClientError(f"{type(raw).__name__}: {clean}")
    copy.__traceback__ = raw.__traceback__
    return copy


def _give_up(failure: Failure, what: str, attempts: int) -> StorageError:
    if failure.transient:
        return TransientStorageError(f"{failure.error} (gave up on {what} after {attempts} tries)")
    return failure.error


def with_retries(
    call: Callable[[], T], classify: Classifier, options: CommonOptions, *, what: str
) -> T:
    """Run an idempotent request, retrying transient failures with backoff.

    Raises:
        StorageError: the classified error of the last failure.
    """
    delays = backoff_delays(options)
    attempts = 0
    while True:
        attempts += 1
        try:
            return call()
        except StorageError:
            raise
        except Exception as raw:
            failure = classify(raw)
            cause = scrubbed(raw)
            delay = next(delays, None) if failure.transient else None
            if delay is None:
                final = _give_up(failure, what, attempts)
                break
            _LOG.debug("retrying %s in %.2fs after: %s", what, delay, failure.error)
        time.sleep(delay)
    # Raised outside the handler, so the raw client error (which may quote an endpoint
    # URL with its password) is not chained as context; only its scrubbed copy is.
    raise final from cause


def _settle(read_back: Callable[[], bytes], data: bytes, what: str) -> bool:
    """True when our bytes are there; False when nothing is; raise when another writer won."""
    try:
        found = read_back()
    except StorageNotFoundError:
        return False
    if found == data:
        _LOG.debug("%s: an ambiguous attempt had landed; the object holds our bytes", what)
        return True
    raise StorageExistsError(f"{what}: key already exists (another writer's content)")


def put_if_absent_resolved(
    put: Callable[[], None],
    read_back: Callable[[], bytes],
    data: bytes,
    classify: Classifier,
    options: CommonOptions,
    *,
    what: str,
) -> None:
    """Conditional create with retries that never turn a conflict into a success.

    Args:
        put: sends the conditional create; raises on failure.
        read_back: reads the whole object (retried internally), or raises
            StorageNotFoundError.
        data: the bytes being written, compared with what is read back.
        classify: maps a raw client exception to a :class:`Failure`; a lost
            race must classify as a non-transient ``StorageExistsError``.
        options: retry settings.
        what: ``"<store uri> key '<key>'"`` for messages and logs.

    Raises:
        StorageExistsError: another writer created the key.
        StorageError: a permanent failure, or transient ones outlasting the retries.
    """
    delays = backoff_delays(options)
    attempts, ambiguous = 0, False
    while True:
        attempts += 1
        try:
            put()
            return
        except StorageError:
            raise
        except Exception as raw:
            failure = classify(raw)
            cause = scrubbed(raw)
        if isinstance(failure.error, StorageExistsError):
            # After an ambiguous attempt, a 412 may be our own earlier write.
            if ambiguous and _settle(read_back, data, what):
                return
            raise failure.error from cause
        if not failure.transient:
            raise failure.error from cause
        if failure.ambiguous:
            ambiguous = True
            if _settle(read_back, data, what):
                return
        delay = next(delays, None)
        if delay is None:
            raise _give_up(failure, what, attempts) from cause
        _LOG.debug("retrying put-if-absent of %s in %.2fs after: %s", what, delay, failure.error)
        time.sleep(delay)
