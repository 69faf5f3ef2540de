"""Plan claims in the table's object store: first claim wins, old claims are swept, never data."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from indextables.protocol.errors import ObjectStoreError
from indextables.pyspark.read import planguard
from indextables.pyspark.read.planguard import CLAIM_PREFIX, claim, new_token, sweep_claims
from indextables.storage import open_store


def test_first_claim_wins_for_every_store_handle(tmp_path: Path) -> None:
    token = "ff" + new_token()[2:]  # a token that never triggers the sampled sweep
    first, second = open_store(str(tmp_path)), open_store(str(tmp_path))
    assert claim(first, token, "7") == "7"
    assert claim(second, token, "9") == "7"  # another host's handle sees the same owner
    assert (tmp_path / CLAIM_PREFIX / token).read_text() == "7"


def test_sweep_removes_only_claims_older_than_a_day(tmp_path: Path) -> None:
    store = open_store(str(tmp_path))
    old, fresh = "ff" + "0" * 30, "ff" + "1" * 30
    claim(store, old, "1")
    claim(store, fresh, "2")
    (tmp_path / "part-data.split").write_bytes(b"x")
    two_days_ago = time.time() - 2 * 86400
    for name in (CLAIM_PREFIX + old, "part-data.split"):
        os.utime(tmp_path / name, (two_days_ago, two_days_ago))
    assert sweep_claims(store) == 1
    assert sorted(p.name for p in (tmp_path / CLAIM_PREFIX).iterdir()) == [fresh]
    assert (tmp_path / "part-data.split").exists()  # sweeping never touches table files


class _ReadOnly:
    """A real local store whose writes fail as with read-only credentials."""

    def __init__(self, base: Any) -> None:
        self._base = base

    def __getattr__(self, name: str) -> Any:
        return getattr(self._base, name)

    def put_if_absent(self, key: str, data: bytes) -> None:
        raise ObjectStoreError(f"access denied writing {key}")


def test_read_only_store_falls_back_to_host_markers_which_are_swept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    markers = tmp_path / "markers"
    monkeypatch.setattr(planguard, "_MARKER_DIR", str(markers))
    store = _ReadOnly(open_store(str(tmp_path / "table")))
    old, kept = "ff" + "0" * 30, "ff" + "1" * 30
    assert claim(store, old, "1") == "1"
    assert claim(store, old, "2") == "1"  # first marker wins on this host
    assert claim(store, kept, "3") == "3"
    two_days_ago = time.time() - 2 * 86400
    os.utime(markers / old, (two_days_ago, two_days_ago))
    sweeping = "00" + "2" * 30  # a token that triggers the sampled sweep
    assert claim(store, sweeping, "4") == "4"
    assert sorted(p.name for p in markers.iterdir()) == sorted([kept, sweeping])
    assert planguard.sweep_host_markers() == 0
