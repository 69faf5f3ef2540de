"""On a real terminal (a pty), destructive commands ask first; --yes and 'n' behave."""

import os
import pty
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

TEN_DAYS = 10 * 24 * 3600


def orphan_in(table: Path) -> Path:
    source = next((table / "date=2024-01-01").glob("part-*.split"))
    orphan = table / "date=2024-01-01/orphan.split"
    shutil.copyfile(source, orphan)
    old = time.time() - TEN_DAYS
    os.utime(orphan, (old, old))
    return orphan


def run_on_terminal(args: list[str], answer: str | None) -> tuple[int, str]:
    """Run ``indextables`` with stdin, stdout and stderr on a pty; answer a prompt."""
    script = shutil.which("indextables", path=os.path.dirname(sys.executable))
    assert script is not None
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [script, *args], stdin=follower, stdout=follower, stderr=follower, close_fds=True
    )
    os.close(follower)
    seen = b""
    answered = answer is None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
        if not answered and b"Continue?" in seen:
            os.write(leader, f"{answer}\n".encode())
            answered = True
        if process.poll() is not None and not ready:
            break
    code = process.wait(timeout=30)
    os.close(leader)
    return code, seen.decode(errors="replace")


@pytest.mark.parametrize(("answer", "deleted"), [("n", False), ("y", True)])
def test_purge_asks_on_a_terminal(partitioned_table: Path, answer: str, deleted: bool) -> None:
    orphan = orphan_in(partitioned_table)
    code, screen = run_on_terminal(["purge", str(partitioned_table)], answer)
    assert "Purge deletes 1 object(s)" in screen
    assert orphan.exists() is not deleted
    assert code == (0 if deleted else 1)


def test_yes_skips_the_question(partitioned_table: Path) -> None:
    orphan = orphan_in(partitioned_table)
    code, screen = run_on_terminal(["purge", str(partitioned_table), "--yes"], None)
    assert code == 0, screen
    assert "Continue?" not in screen
    assert not orphan.exists()


def test_dry_run_never_asks(partitioned_table: Path) -> None:
    code, screen = run_on_terminal(
        ["drop-partitions", str(partitioned_table), "--where", "date = '2024-01-01'", "--dry-run"],
        None,
    )
    assert code == 0, screen
    assert "Continue?" not in screen
    assert "DRY_RUN" in screen


def test_progress_is_drawn_on_a_terminal_and_not_with_quiet(partitioned_table: Path) -> None:
    _, screen = run_on_terminal(["validate", str(partitioned_table)], None)
    assert "validating" in screen
    assert "splits checked" in screen
    assert "3/3" in screen
    _, quiet = run_on_terminal(["validate", str(partitioned_table), "--quiet"], None)
    assert "validating" not in quiet
