"""Plan claims in the table's object store: first claim wins, old claims are swept, never data."""

from __future__ import annotations

import os
import time
from pathlib import Path

from indextables.pyspark.planguard import CLAIM_PREFIX, claim, new_token, sweep_claims
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
