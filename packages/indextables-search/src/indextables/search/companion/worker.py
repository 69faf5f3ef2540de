"""A companion build worker: ``python -m indextables.search.companion.worker``.

Reads ``(SplitJob, CompanionGroup, parent pid)`` pickled on stdin, builds and
uploads the group's split (:func:`.parallel.build_group`) and writes
``("ok", AddAction)`` or ``("error", exception)`` pickled on its stdout; anything
else printed goes to stderr. It ends with its parent (Linux): a killed sync
leaves no worker behind.
"""

from __future__ import annotations

import os
import pickle
import sys


def main() -> int:
    """Run one group's build; the result goes to the original stdout."""
    result_fd = os.dup(1)
    os.dup2(2, 1)  # library output (Python or native) must not mix with the result
    sys.stdout = sys.stderr
    job, group, parent = pickle.loads(sys.stdin.buffer.read())
    _die_with_parent(parent)
    from indextables.search.companion.parallel import build_group
    from indextables.search.errors import CompanionError

    try:
        result: tuple[str, object] = ("ok", build_group(job, group))
    except Exception as exc:  # handed to the parent, which raises it
        try:
            pickle.dumps(exc)
            result = ("error", exc)
        except Exception:  # an exception that cannot travel: its message does
            result = ("error", CompanionError(f"{type(exc).__name__}: {exc}"))
    with os.fdopen(result_fd, "wb") as out:
        out.write(pickle.dumps(result))
    return 0


def _die_with_parent(parent: int) -> None:
    """End with the process that started this one (``prctl(PR_SET_PDEATHSIG)``, Linux)."""
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # it died before the request was made
        os._exit(1)


if __name__ == "__main__":
    sys.exit(main())
