"""Repository layout checks that no linter makes: run by ``tox -e lint``.

- ``indextables`` is a PEP 420 namespace: no ``src/indextables/__init__.py``.
- Every package has the same skeleton.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKELETON = ("pyproject.toml", "README.md", "CHANGELOG.md", "tests")
MODULE_FILES = ("__init__.py", "version.py", "py.typed", "errors.py")


def problems() -> list[str]:
    found = []
    packages = sorted((ROOT / "packages").glob("indextables-*"))
    if not packages:
        found.append("no packages under packages/")
    for package in packages:
        name = package.name.removeprefix("indextables-")
        if (package / "src/indextables/__init__.py").exists():
            found.append(f"{package.name}: src/indextables/__init__.py breaks the namespace")
        found += [f"{package.name}: missing {p}" for p in SKELETON if not (package / p).exists()]
        module = package / "src/indextables" / name
        found += [f"{package.name}: missing {f}" for f in MODULE_FILES if not (module / f).exists()]
    return found


def main() -> int:
    found = problems()
    for line in found:
        print(line, file=sys.stderr)
    print(f"layout: {len(found)} problem(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
