"""The README's install and use sections, run verbatim from a fresh clone.

Slow (a fresh venv, real installs, a Spark session): run with ``-m slow``. The
clone is of the committed HEAD, so the README checked is the committed one. pip
finds the pyspark wheel `make bootstrap` built (``.cache/wheelhouse``) through
``PIP_FIND_LINKS`` instead of building the ~456 MB wheel again; everything else
comes from the package registry, as for a user.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)


def readme_blocks(text: str, heading: str) -> list[tuple[str, str]]:
    """The fenced code blocks (language, code) of one ``## heading`` section."""
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    section = text[start : end if end >= 0 else len(text)]
    return [(m.group(1), m.group(2)) for m in FENCE.finditer(section)]


def test_readme_sections_have_the_blocks_the_slow_test_runs() -> None:
    text = (REPO / "README.md").read_text()
    assert [lang for lang, _ in readme_blocks(text, "Install")] == ["bash"]
    assert [lang for lang, _ in readme_blocks(text, "Use it")] == ["python", "bash"]
    install = readme_blocks(text, "Install")[0][1]
    assert "pip install ./packages/indextables-pyspark" not in install.replace("\\\n", " ")
    assert "./packages/indextables-admin" in install
    assert "s3://" not in readme_blocks(text, "Use it")[0][1]


@pytest.mark.slow
def test_readme_install_and_use_run_verbatim_from_a_fresh_clone(tmp_path: Path) -> None:
    head = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", "--no-checkout", str(REPO), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "--quiet", head], check=True)
    text = (clone / "README.md").read_text()
    ((_, install),) = readme_blocks(text, "Install")
    (_, use_python), (_, use_shell) = readme_blocks(text, "Use it")
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    work = tmp_path / "work"
    work.mkdir()
    (work / "use.py").write_text(use_python)
    script = f"set -euo pipefail\ncd {clone}\n{install}\ncd {work}\npython use.py\n{use_shell}\n"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "PYTHON"))}
    env["PATH"] = f"{env_dir / 'bin'}{os.pathsep}{env['PATH']}"
    env["VIRTUAL_ENV"] = str(env_dir)
    wheelhouse = REPO / ".cache/wheelhouse"
    if wheelhouse.is_dir():
        env["PIP_FIND_LINKS"] = str(wheelhouse.resolve())
    done = subprocess.run(
        ["bash", "-c", script], cwd=work, env=env, capture_output=True, text=True, timeout=3600
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    assert "request 7 timeout" in done.stdout
    assert (work / "logs/_transaction_log").is_dir()
    described, _ = json.JSONDecoder().raw_decode(done.stdout[done.stdout.index("\n{") + 1 :])
    assert described["num_files"] >= 2
