"""``pip install ./packages/indextables-admin`` (with its siblings) gives a working command.

Slow (a fresh venv and a real, non-editable install): run with ``-m slow``.
"""

import json
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
PACKAGES = ("protocol", "avrostate", "storage", "search", "admin")


@pytest.mark.slow
def test_non_editable_install_gives_a_working_command(
    tmp_path: Path, partitioned_table: Path
) -> None:
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin/python"
    sources = [str(REPO / f"packages/indextables-{name}") for name in PACKAGES]
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", *sources],
        check=True,
        capture_output=True,
    )
    script = shutil.which("indextables", path=str(env_dir / "bin"))
    assert script is not None
    assert script != shutil.which("indextables", path=str(Path(sys.executable).parent))
    version = subprocess.run(
        [script, "version", "-o", "json"], capture_output=True, text=True, check=True
    )
    names = [p["name"] for p in json.loads(version.stdout)["packages"]]
    assert names == [f"indextables-{n}" for n in sorted(PACKAGES)]
    described = subprocess.run(
        [script, "describe", str(partitioned_table), "-o", "json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(described.stdout)["num_files"] == 3
