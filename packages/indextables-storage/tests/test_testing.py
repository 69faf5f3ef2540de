"""The test-server harness: clear start failures, process groups always stopped."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from indextables.storage.testing import (
    S3ServerInfo,
    ServerStartError,
    azurite_cache_dir,
    moto_server,
)
from indextables.storage.testing.process import managed_process, port_open, wait_until


def _start(command: list[str], log: Path, ready: Callable[[], bool], timeout: float) -> None:
    with managed_process(command, log=log) as process:
        wait_until(ready, process=process, timeout=timeout, what="demo", log=log)


def test_a_server_that_exits_while_starting_is_a_clear_error(tmp_path: Path) -> None:
    command = [sys.executable, "-c", "print('bad flag --nope'); raise SystemExit(3)"]
    with pytest.raises(ServerStartError, match=r"(?s)exited with code 3.*bad flag --nope"):
        _start(command, tmp_path / "server.log", lambda: False, 30)


def test_a_server_that_never_gets_ready_times_out_clearly(tmp_path: Path) -> None:
    command = [sys.executable, "-c", "import time; time.sleep(60)"]
    with pytest.raises(ServerStartError, match=r"demo was not ready after 1 s"):
        _start(command, tmp_path / "server.log", lambda: False, 1)


def test_a_missing_program_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ServerStartError, match="cannot run '/no/such/server'"):
        _start(["/no/such/server"], tmp_path / "log", lambda: True, 1)


def _fail_inside_process_block(log: Path, groups: list[int]) -> None:
    with managed_process(["sh", "-c", "sleep 300 & sleep 300"], log=log) as process:
        groups.append(process.pid)
        raise RuntimeError("test body failed")


def test_the_whole_process_group_is_stopped_even_when_the_block_raises(tmp_path: Path) -> None:
    groups: list[int] = []
    with pytest.raises(RuntimeError, match="test body failed"):
        _fail_inside_process_block(tmp_path / "log", groups)
    assert _living_members(groups[0]) == []


def _living_members(group: int) -> list[int]:
    """Processes of ``group`` that are not zombies (an orphan waits for init to reap it)."""
    living = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[2]) == group and fields[0] != "Z":
            living.append(int(entry.name))
    return living


_DYING_PARENT = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from indextables.storage.testing.process import managed_process
    with managed_process(["sleep", "300"], log=Path(sys.argv[1])) as process:
        Path(sys.argv[2]).write_text(str(process.pid))
        time.sleep(300)
    """
)


def _wait_for(condition: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def test_servers_die_with_a_test_process_killed_outright(tmp_path: Path) -> None:
    pid_file = tmp_path / "group"
    command = [sys.executable, "-c", _DYING_PARENT, str(tmp_path / "log"), str(pid_file)]
    with subprocess.Popen(command) as parent:
        started = lambda: pid_file.exists() and pid_file.read_text().strip() != ""  # noqa: E731
        assert _wait_for(started, 30), "the parent never started its server"
        group = int(pid_file.read_text())
        assert _wait_for(lambda: len(_living_members(group)) >= 2, 10), "server not running"
        parent.kill()
    assert _wait_for(lambda: not _living_members(group), 10), _living_members(group)


def _fail_inside_moto_block(ports: list[int]) -> None:
    with moto_server() as server:
        ports.append(int(server.endpoint_url.rsplit(":", 1)[1]))
        server.open_store(server.create_bucket()).put("k", b"v")
        assert port_open(ports[0])
        raise KeyError("fail inside")


@pytest.mark.s3
@pytest.mark.integration
def test_moto_server_answers_inside_and_is_gone_after_the_block() -> None:
    ports: list[int] = []
    with pytest.raises(KeyError, match="fail inside"):
        _fail_inside_moto_block(ports)
    # The group is killed on exit; the kernel may take a moment to close the socket.
    deadline = time.monotonic() + 5
    while port_open(ports[0]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not port_open(ports[0])


def test_azurite_cache_dir_follows_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("INDEXTABLES_TEST_CACHE", str(tmp_path))
    assert azurite_cache_dir() == tmp_path / "azurite"
    monkeypatch.delenv("INDEXTABLES_TEST_CACHE")
    assert azurite_cache_dir().parts[-2:] == (".cache", "azurite")


@pytest.mark.s3
@pytest.mark.integration
def test_seaweedfs_log_tail_shows_what_the_server_wrote(seaweedfs_server: S3ServerInfo) -> None:
    """The crash trials print it when a trial fails: it must hold the server's own lines."""
    assert seaweedfs_server.log_file is not None
    written = seaweedfs_server.log_file.read_text(encoding="utf-8", errors="replace")
    assert written.strip()
    assert seaweedfs_server.log_tail(3) == "\n".join(written.splitlines()[-3:])
    assert S3ServerInfo("moto", "http://127.0.0.1:9", "k", "s").log_tail() == ""
