"""Progress bars for long operations, on stderr and only for a person watching.

A :class:`Progress` is quiet (draws nothing) when stderr is not a terminal or
``--quiet`` was given, so pipes, logs and JSON consumers never see bars.
Operations report through :meth:`Progress.phase`, or through
:meth:`Progress.callback` where the engine takes a ``progress`` callable.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.progress import Progress as RichProgress

__all__ = ["Phase", "Progress", "ProgressCallback"]

ProgressCallback = Callable[[str, int, int | None], None]
"""``callback(phase, done, total)``: ``total`` is None while unknown."""


class Phase:
    """One step of an operation, as a bar (known total) or a spinner."""

    def __init__(self, bars: RichProgress | None, task: TaskID | None) -> None:
        """Wrap a rich task; ``bars`` is None when quiet."""
        self._bars = bars
        self._task = task

    def update(self, done: int, total: int | None = None) -> None:
        """Set how much of the phase is done (and its total, once known)."""
        if self._bars is not None and self._task is not None:
            self._bars.update(self._task, completed=done, total=total)

    def advance(self, amount: int = 1) -> None:
        """Add ``amount`` to what is done."""
        if self._bars is not None and self._task is not None:
            self._bars.advance(self._task, amount)


class Progress:
    """Progress display for one command run."""

    def __init__(self, stream: TextIO, *, quiet: bool = False) -> None:
        """Draw on ``stream`` unless ``quiet`` or ``stream`` is not a terminal."""
        self.enabled = not quiet and stream.isatty()
        self._stream = stream
        self._bars: RichProgress | None = None
        self._tasks: dict[str, TaskID] = {}

    @contextmanager
    def session(self) -> Iterator[Progress]:
        """Keep the display live for the duration of the block (no-op when quiet)."""
        if not self.enabled:
            yield self
            return
        console = Console(file=self._stream, highlight=False, markup=False)
        with RichProgress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        ) as bars:
            self._bars = bars
            try:
                yield self
            finally:
                self._bars = None
                self._tasks.clear()

    @contextmanager
    def phase(self, name: str, *, total: int | None = None) -> Iterator[Phase]:
        """Show ``name`` while the block runs; the phase is marked done at its end."""
        task = self._task(name, total)
        handle = Phase(self._bars, task)
        try:
            yield handle
        finally:
            if self._bars is not None and task is not None:
                finished = next(t for t in self._bars.tasks if t.id == task)
                final = finished.total if finished.total is not None else finished.completed
                self._bars.update(task, completed=final, total=final)

    def callback(self) -> ProgressCallback:
        """Return a ``callback(phase, done, total)`` that drives one bar per phase name."""

        def report(phase: str, done: int, total: int | None) -> None:
            task = self._task(phase, total)
            if self._bars is not None and task is not None:
                self._bars.update(task, completed=done, total=total)

        return report

    def _task(self, name: str, total: int | None) -> TaskID | None:
        if self._bars is None:
            return None
        if name not in self._tasks:
            self._tasks[name] = self._bars.add_task(name, total=total)
        return self._tasks[name]
