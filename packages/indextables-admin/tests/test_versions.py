"""The version command's facts come from the installed distributions and avrostate's marker."""

import json
import os
import subprocess
import sys
from importlib import metadata

import pytest

from indextables.admin.versions import decoder_info, installed_packages


def test_installed_packages_match_importlib_metadata() -> None:
    found = {p.name: p.version for p in installed_packages()}
    for name in ("indextables-admin", "indextables-protocol", "indextables-storage"):
        assert found[name] == metadata.version(name)
    assert list(found) == sorted(found)


def test_decoder_info_agrees_with_avrostate_marker() -> None:
    from indextables.avrostate import impl

    info = decoder_info()
    assert info.implementation == impl.IMPL_NAME
    assert info.cython_active is impl.CYTHON_MODULE
    assert info.problem is None


@pytest.mark.parametrize("forced", ["python", "nonsense"])
def test_version_command_reports_the_forced_implementation(forced: str) -> None:
    env = {**os.environ, "INDEXTABLES_AVROSTATE_IMPL": forced}
    done = subprocess.run(
        [sys.executable, "-m", "indextables.admin", "version", "-o", "json"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    if forced == "python":
        assert document["avrostate_decoder"] == "python"
        assert document["cython_decoder_active"] is False
    else:
        assert document["avrostate_decoder"] is None
        assert "nonsense" in document["avrostate_problem"]
