"""Put-if-absent races between threads or processes, for contract tests of any store."""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from indextables.protocol.errors import ObjectExistsError
from indextables.storage.registry import open_store

__all__ = ["race_put_if_absent"]

Outcome = Literal["won", "exists"] | str


def _attempt(uri: str, options: Mapping[str, object], key: str, data: bytes, barrier: Any) -> str:
    store = open_store(uri, **options)
    barrier.wait(60)
    try:
        store.put_if_absent(key, data)
    except ObjectExistsError:
        return "exists"
    except Exception as error:  # reported to the caller, who fails the test with it
        return f"error: {type(error).__name__}: {error}"
    return "won"


def _process_main(
    uri: str, options: Mapping[str, object], key: str, data: bytes, barrier: Any, results: Any
) -> None:
    results.put((data, _attempt(uri, options, key, data, barrier)))


def race_put_if_absent(
    uri: str,
    options: Mapping[str, object],
    key: str,
    payloads: Sequence[bytes],
    *,
    mode: Literal["threads", "processes"] = "threads",
    timeout: float = 120.0,
) -> dict[bytes, Outcome]:
    """Let one racer per payload put-if-absent ``key`` at the same moment.

    Every racer opens its own store from ``uri``/``options`` and waits on a
    barrier before writing, so the writes overlap as much as possible.

    Args:
        uri: the store URI (for processes, a store every process can reach).
        options: ``open_store`` options.
        key: the contested key.
        payloads: one distinct payload per racer.
        mode: ``"threads"`` in this process, or ``"processes"`` (spawned).
        timeout: seconds to wait for every racer.

    Returns:
        payload -> ``"won"``, ``"exists"`` or ``"error: ..."``.
    """
    if len(set(payloads)) != len(payloads):
        raise ValueError("race payloads must be distinct")
    if mode == "threads":
        return _race_threads(uri, options, key, payloads)
    return _race_processes(uri, options, key, payloads, timeout)


def _race_threads(
    uri: str, options: Mapping[str, object], key: str, payloads: Sequence[bytes]
) -> dict[bytes, Outcome]:
    barrier = threading.Barrier(len(payloads))
    results: dict[bytes, Outcome] = {}

    def run(data: bytes) -> None:
        results[data] = _attempt(uri, options, key, data, barrier)

    threads = [threading.Thread(target=run, args=(data,)) for data in payloads]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def _race_processes(
    uri: str, options: Mapping[str, object], key: str, payloads: Sequence[bytes], timeout: float
) -> dict[bytes, Outcome]:
    # spawn, not fork: the parent runs client threads (boto3, pytest) that fork would clone.
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(len(payloads)), context.Queue()
    processes = [
        context.Process(
            target=_process_main, args=(uri, dict(options), key, data, barrier, results)
        )
        for data in payloads
    ]
    for process in processes:
        process.start()
    outcomes: dict[bytes, Outcome] = {}
    try:
        for _ in payloads:
            data, outcome = results.get(timeout=timeout)
            outcomes[data] = outcome
    finally:
        for process in processes:
            process.join(10)
            if process.is_alive():
                process.kill()
                process.join()
    return outcomes
