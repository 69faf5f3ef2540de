"""Runs a server and kills its process group when the test process that started it dies.

``python -m indextables.storage.testing.watchdog PARENT_PID -- COMMAND...`` is
how :func:`~indextables.storage.testing.process.managed_process` starts every
server: the watchdog leads the server's process group, so a normal stop still
kills the group at once, and a test process that is killed outright (no
cleanup runs) no longer leaves servers behind: the watchdog notices that its
parent is gone and kills the group.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

__all__ = ["main"]

_POLL_SECONDS = 0.5


def main(argv: list[str]) -> int:
    """Run ``argv[2:]`` (after ``PARENT_PID --``) until it exits or the parent dies."""
    parent, separator, *command = argv
    if separator != "--" or not command:
        print("usage: watchdog PARENT_PID -- COMMAND...", file=sys.stderr)
        return 2
    server = subprocess.Popen(command)
    while True:
        try:
            return server.wait(_POLL_SECONDS)
        except subprocess.TimeoutExpired:
            if os.getppid() != int(parent):
                os.killpg(0, signal.SIGKILL)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
