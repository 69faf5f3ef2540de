"""The test-server harness: clear start failures, process groups always stopped."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from indextables.storage.testing import ServerStartError, azurite_cache_dir, moto_server
from indextables.storage.testing.process import managed_process, port_open, wait_until


def test_a_server_that_exits_while_starting_is_a_clear_error(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    command = [sys.executable, "-c", "print('bad flag --nope'); raise SystemExit(3)"]
    with pytest.raises(ServerStartError, match=r"(?s)exited with code 3.*bad flag --nope"):
        with managed_process(command, log=log) as process:
            wait_until(lambda: False, process=process, timeout=30, what="demo", log=log)


def test_a_server_that_never_gets_ready_times_out_clearly(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    command = [sys.executable, "-c", "import time; time.sleep(60)"]
    with pytest.raises(ServerStartError, match=r"demo was not ready after 1 s"):
        with managed_process(command, log=log) as process:
            wait_until(lambda: False, process=process, timeout=1, what="demo", log=log)


def test_a_missing_program_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ServerStartError, match="cannot run '/no/such/server'"):
        with managed_process(["/no/such/server"], log=tmp_path / "log"):
            pass


def test_the_whole_process_group_is_stopped_even_when_the_block_raises(tmp_path: Path) -> None:
    command = ["sh", "-c", "sleep 300 & sleep 300"]
    with pytest.raises(RuntimeError, match="test body failed"):
        with managed_process(command, log=tmp_path / "log") as process:
            group = process.pid
            raise RuntimeError("test body failed")
    with pytest.raises(ProcessLookupError):
        os.killpg(group, 0)


@pytest.mark.s3
@pytest.mark.integration
def test_moto_server_answers_inside_and_is_gone_after_the_block() -> None:
    with pytest.raises(KeyError), moto_server() as server:
        port = int(server.endpoint_url.rsplit(":", 1)[1])
        store = server.open_store(server.create_bucket())
        store.put("k", b"v")
        assert port_open(port)
        raise KeyError("fail inside")
    assert not port_open(port)


def test_azurite_cache_dir_follows_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("INDEXTABLES_TEST_CACHE", str(tmp_path))
    assert azurite_cache_dir() == tmp_path / "azurite"
    monkeypatch.delenv("INDEXTABLES_TEST_CACHE")
    assert azurite_cache_dir().parts[-2:] == (".cache", "azurite")
