"""Progress bars appear only on a terminal and never with --quiet."""

import io

import pytest

from indextables.admin.progress import Progress


class FakeTerminal(io.StringIO):
    """A stream that says it is a terminal, to see what a person would see."""

    def isatty(self) -> bool:
        return True


def run_phases(progress: Progress) -> None:
    with progress.session():
        with progress.phase("listing files", total=3) as phase:
            for _ in range(3):
                phase.advance()
        with progress.phase("deleting") as phase:
            phase.update(2)
        report = progress.callback()
        report("reading manifests", 1, 4)
        report("reading manifests", 4, 4)


def test_quiet_when_not_a_terminal() -> None:
    stream = io.StringIO()
    progress = Progress(stream)
    assert not progress.enabled
    run_phases(progress)
    assert stream.getvalue() == ""


def test_quiet_flag_silences_a_terminal() -> None:
    stream = FakeTerminal()
    progress = Progress(stream, quiet=True)
    assert not progress.enabled
    run_phases(progress)
    assert stream.getvalue() == ""


@pytest.mark.parametrize("name", ["listing files", "deleting", "reading manifests"])
def test_terminal_shows_each_phase(name: str) -> None:
    stream = FakeTerminal()
    progress = Progress(stream)
    assert progress.enabled
    run_phases(progress)
    assert name in stream.getvalue()


def test_terminal_shows_counts() -> None:
    stream = FakeTerminal()
    run_phases(Progress(stream))
    assert "3/3" in stream.getvalue()
    assert "4/4" in stream.getvalue()
