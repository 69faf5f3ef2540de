"""The test-server harness: clear start failures, process groups always stopped."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import textwrap
import time
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from indextables.storage.testing import (
    PortTakenError,
    S3ServerInfo,
    ServerStartError,
    azurite,
    azurite_cache_dir,
    azurite_server,
    moto_server,
    s3servers,
    seaweedfs_server,
)
from indextables.storage.testing.process import (
    managed_process,
    port_open,
    start_retrying_taken_ports,
    wait_until,
)


def _start(command: list[str], log: Path, ready: Callable[[], bool], timeout: float) -> None:
    with managed_process(command, log=log) as process:
        wait_until(ready, process=process, timeout=timeout, what="demo", log=log)


def test_a_server_that_exits_while_starting_is_a_clear_error(tmp_path: Path) -> None:
    command = [sys.executable, "-c", "print('bad flag --nope'); raise SystemExit(3)"]
    with pytest.raises(ServerStartError, match=r"(?s)exited with code 3.*bad flag --nope"):
        _start(command, tmp_path / "server.log", lambda: False, 30)


def test_a_server_that_exits_because_its_port_is_taken_says_so(tmp_path: Path) -> None:
    with _taken_port() as taken:
        command = [sys.executable, "-m", "http.server", "-b", "127.0.0.1", str(taken)]
        with pytest.raises(PortTakenError, match=r"(?i)address already in use"):
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


# --- a port chosen free but taken before the server binds it -------------------------


def test_a_start_that_lost_a_port_race_is_made_again() -> None:
    calls: list[int] = []

    def start(stack: contextlib.ExitStack) -> int:
        calls.append(len(calls))
        stack.callback(calls.append, -1)  # undone before the next attempt
        if len(calls) < 4:
            raise PortTakenError("taken")
        return 7

    with start_retrying_taken_ports(start, attempts=3) as value:
        assert value == 7
    assert calls == [0, -1, 2, -1, 4, -1]


@pytest.mark.parametrize(
    ("error", "starts"),
    [(PortTakenError("taken again"), 3), (ServerStartError("bad flag"), 1)],
    ids=["port-taken-every-time", "other-error"],
)
def test_a_start_failing_for_good_raises_after_the_attempts_it_deserves(
    error: ServerStartError, starts: int
) -> None:
    calls: list[int] = []

    def start(stack: contextlib.ExitStack) -> int:
        calls.append(0)
        raise error

    with pytest.raises(type(error), match=str(error)), start_retrying_taken_ports(start):
        pass
    assert len(calls) == starts


def test_an_error_inside_the_block_is_not_a_reason_to_start_again() -> None:
    starts: list[int] = []

    def start(stack: contextlib.ExitStack) -> int:
        starts.append(1)
        return 1

    with pytest.raises(PortTakenError, match="from the body"), start_retrying_taken_ports(start):
        raise PortTakenError("from the body")
    assert starts == [1]


@contextlib.contextmanager
def _taken_port() -> Iterator[int]:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


def _first_choice_taken(
    monkeypatch: pytest.MonkeyPatch, module: ModuleType, name: str, taken: int, *, slot: int = 0
) -> list[object]:
    """Make ``module.name`` hand out ``taken`` on its first call.

    ``free_port`` returns it; ``free_ports`` puts it at index ``slot`` of its list.
    """
    real = getattr(module, name)
    calls: list[object] = []

    def choose(*args: int) -> object:
        chosen = real(*args)
        if not calls:
            chosen = (
                taken if isinstance(chosen, int) else [*chosen[:slot], taken, *chosen[slot + 1 :]]
            )
        calls.append(chosen)
        return chosen

    monkeypatch.setattr(module, name, choose)
    return calls


@pytest.mark.integration
@pytest.mark.parametrize(
    ("start", "module", "place"),
    [
        pytest.param(moto_server, s3servers, "create_bucket", id="moto", marks=pytest.mark.s3),
        pytest.param(
            azurite_server, azurite, "create_container", id="azurite", marks=pytest.mark.azure
        ),
    ],
)
def test_a_one_port_server_starts_on_a_fresh_port_when_its_port_was_taken(
    monkeypatch: pytest.MonkeyPatch,
    start: Callable[[], contextlib.AbstractContextManager[Any]],
    module: ModuleType,
    place: str,
) -> None:
    with _taken_port() as taken:
        calls = _first_choice_taken(monkeypatch, module, "free_port", taken)
        with start() as server:
            assert urllib.parse.urlsplit(server.endpoint_url).port != taken
            server.open_store(getattr(server, place)()).put("k", b"v")
    assert len(calls) == 2
    assert calls[0] == taken


@pytest.mark.s3
@pytest.mark.integration
def test_seaweedfs_starts_on_fresh_ports_when_one_of_them_was_taken(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The CI failure this guards against: ``-s3.port.iceberg`` taken between choice and bind."""
    with _taken_port() as taken:
        iceberg = s3servers._WEED_PORT_FLAGS.index("-s3.port.iceberg")
        calls = _first_choice_taken(monkeypatch, s3servers, "free_ports", taken, slot=iceberg)
        with seaweedfs_server() as server:
            store = server.open_store(server.create_bucket())
            store.put("k", b"v")
            assert store.get("k") == b"v"
    assert len(calls) == 2
    assert taken in calls[0]  # type: ignore[operator]
    assert taken not in calls[1]  # type: ignore[operator]
