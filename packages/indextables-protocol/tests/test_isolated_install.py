"""The distribution installs alone and imports with no third-party packages."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1]

IMPORT_EVERYTHING = """
import importlib, importlib.metadata, json, pkgutil, sys
import indextables.protocol as root
names = sorted(m.name for m in pkgutil.walk_packages(root.__path__, "indextables.protocol."))
for name in names:
    importlib.import_module(name)
third_party = sorted(
    n for n in sys.modules
    if n.split(".")[0] not in sys.stdlib_module_names
    # __main__ is this script; _distutils_hack is the .pth shim of the venv's own setuptools
    and n.split(".")[0] not in ("indextables", "__main__", "_distutils_hack")
)
print(json.dumps({
    "modules": names,
    "requires": importlib.metadata.requires("indextables-protocol"),
    "third_party": third_party,
    "file": root.__file__,
}))
"""


@pytest.mark.integration
def test_installs_into_a_fresh_venv_with_zero_runtime_dependencies(tmp_path: Path) -> None:
    # Build from a copy: setuptools leaves build/ and *.egg-info in the source tree.
    source = tmp_path / "source"
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "tests"))
    env = tmp_path / "venv"
    venv.create(env, with_pip=True)
    python = env / "bin" / "python"
    subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            str(source),
        ],
        check=True,
        cwd=tmp_path,
        timeout=300,
    )
    listed = subprocess.run(
        [str(python), "-m", "pip", "list", "--format=json", "--disable-pip-version-check"],
        check=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    installed = {d["name"].lower() for d in json.loads(listed.stdout)}
    assert installed - {"pip", "setuptools"} == {"indextables-protocol"}
    result = subprocess.run(
        [str(python), "-I", "-c", IMPORT_EVERYTHING],
        check=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    report = json.loads(result.stdout)
    assert report["file"].startswith(str(env)), "imported the working tree, not the install"
    assert "indextables.protocol.actions" in report["modules"]
    assert not report["requires"]
    assert report["third_party"] == []
    assert sys.version_info >= (3, 11)
