"""Store keys of states and manifests, including the legacy manifest path forms."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from indextables.avrostate.errors import UnsupportedStateVersionError
from indextables.avrostate.layout import manifest_key, parse_state_key, state_key
from indextables.avrostate.state_file import decode_state, encode_state
from indextables.protocol.state import StateManifest


def test_manifest_path_forms_resolve() -> None:
    assert (
        manifest_key("manifests/manifest-ab.avro", 7)
        == "_transaction_log/manifests/manifest-ab.avro"
    )
    assert (
        manifest_key("state-v00000000000000000003/manifest-x.avro", 7)
        == "_transaction_log/state-v00000000000000000003/manifest-x.avro"
    )
    assert (
        manifest_key("manifest-x.avro", 7)
        == "_transaction_log/state-v00000000000000000007/manifest-x.avro"
    )


def test_state_keys_round_trip() -> None:
    assert parse_state_key(state_key(12)) == (12, "_manifest.avro")
    assert parse_state_key("_transaction_log/state-v00000000000000000012/x.crc") is None


def test_unsupported_format_version_in_avro_form() -> None:
    data = encode_state(StateManifest(2, 1, 0, 0, 0, ()))
    with pytest.raises(UnsupportedStateVersionError, match="formatVersion 2") as caught:
        decode_state(data, path="state-v1/_manifest.avro")
    assert caught.value.path == "state-v1/_manifest.avro"


@pytest.mark.slow
def test_atheris_fuzzer_finds_no_disagreement(tmp_path: Path) -> None:
    fuzzer = Path(__file__).resolve().parents[1] / "fuzz" / "fuzz_decode.py"
    subprocess.run([sys.executable, str(fuzzer), "--make-seeds", str(tmp_path)], check=True)
    done = subprocess.run(
        [sys.executable, str(fuzzer), str(tmp_path), "-runs=50000"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Done 50000 runs" in done.stderr
