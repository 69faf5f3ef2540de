"""A small metrics hook: callables that receive every measurement.

Names follow the reference: ``indextables.state.read.duration_ms``,
``indextables.state.read.manifest_count``, ``indextables.state.read.file_count``,
``indextables.state.tombstone_count``, ``indextables.state.tombstone_ratio``,
``indextables.state.write.duration_ms``, ``indextables.state.write.compacted``,
``indextables.commit.duration_ms``, ``indextables.commit.attempts``.

Example:
    >>> seen = []
    >>> hook = add_metrics_hook(lambda name, value, tags: seen.append(name))
    >>> emit("indextables.commit.attempts", 1, table="memory://t")
    >>> remove_metrics_hook(hook)
    >>> seen
    ['indextables.commit.attempts']
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping

__all__ = ["MetricsHook", "add_metrics_hook", "emit", "remove_metrics_hook"]

MetricsHook = Callable[[str, float, Mapping[str, str]], None]

_hooks: list[MetricsHook] = []
_lock = threading.Lock()


def add_metrics_hook(hook: MetricsHook) -> MetricsHook:
    """Register ``hook``; it is called as ``hook(name, value, tags)``."""
    with _lock:
        _hooks.append(hook)
    return hook


def remove_metrics_hook(hook: MetricsHook) -> None:
    """Unregister ``hook`` (a hook not registered is ignored)."""
    with _lock:
        if hook in _hooks:
            _hooks.remove(hook)


def emit(name: str, value: float, **tags: str) -> None:
    """Send one measurement to every hook; a failing hook never breaks the caller."""
    with _lock:
        hooks = list(_hooks)
    for hook in hooks:
        try:
            hook(name, float(value), tags)
        except Exception:
            continue
