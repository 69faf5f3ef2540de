"""Running a docs/search.md example as written, in its own interpreter (no Spark)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

__all__ = ["ROOT", "run_example"]

ROOT = Path(__file__).resolve().parents[3]


def run_example(heading: str, tmp_path: Path) -> str:
    """The output of the first python block under ``## <heading>`` of docs/search.md.

    The script runs from the repository root with ``TMPDIR`` in ``tmp_path``
    (the default split cache lives there); a failing script fails the test
    with the end of its stderr.
    """
    section = (ROOT / "docs/search.md").read_text().split(f"## {heading}", 1)[1]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert blocks, f"docs/search.md has no python example under {heading!r}"
    script = tmp_path / "example.py"
    script.write_text(blocks[0])
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=ROOT,
        env={**os.environ, "TMPDIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout
