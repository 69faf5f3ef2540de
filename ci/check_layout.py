"""Repository layout checks that no linter makes: run by ``tox -e lint``.

- ``indextables`` is a PEP 420 namespace: no ``src/indextables/__init__.py``.
- Every package has the same skeleton.
- Imports flow one way (docs/architecture.md): each package imports only the
  packages below it, and no modules import each other in a cycle. Every import
  counts, also those inside functions and ``if TYPE_CHECKING:`` blocks.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator, Mapping
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


# Which packages each package may import
# (storage -> protocol -> avrostate -> search -> pyspark/admin). The engine (search)
# never imports pyspark, the Spark adapter.
ALLOWED: Mapping[str, frozenset[str]] = {
    "protocol": frozenset(),
    "storage": frozenset({"protocol"}),
    "avrostate": frozenset({"protocol"}),
    "search": frozenset({"protocol", "avrostate", "storage"}),
    "pyspark": frozenset({"protocol", "avrostate", "storage", "search"}),
    "admin": frozenset({"protocol", "avrostate", "storage", "search"}),
}


# Libraries a package must never import, at any depth (the engine runs without a JVM).
FORBIDDEN: Mapping[str, frozenset[str]] = {
    "protocol": frozenset({"pyspark", "py4j"}),
    "storage": frozenset({"pyspark", "py4j"}),
    "avrostate": frozenset({"pyspark", "py4j"}),
    "search": frozenset({"pyspark", "py4j"}),
    "admin": frozenset({"pyspark", "py4j"}),
}


def third_party(path: Path) -> set[str]:
    """The top-level names of the absolute imports outside ``indextables`` in one file."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    found.discard("indextables")
    return found


def source_modules() -> dict[str, Path]:
    """Dotted module name -> file, for every module under packages/*/src."""
    found: dict[str, Path] = {}
    for src in sorted((ROOT / "packages").glob("indextables-*/src")):
        for path in sorted(src.rglob("*.py")):
            parts = list(path.relative_to(src).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def imported(name: str, path: Path, known: Mapping[str, Path]) -> set[str]:
    """The project modules ``name`` imports (a package, when a name is not a submodule)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parents = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parents, base] if base else parents)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                if full in known:
                    found.add(full)
                elif base in known:
                    found.add(base)
    found.discard(name)
    return found


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if parts[0] == "indextables" and len(parts) > 1 else parts[0]


def _cycles(graph: Mapping[str, set[str]]) -> Iterator[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    yield sorted(component)


def import_problems() -> list[str]:
    known = source_modules()
    graph = {name: imported(name, path, known) for name, path in known.items()}
    found = []
    for module, targets in sorted(graph.items()):
        source = _package(module)
        allowed = ALLOWED.get(source)
        for target in sorted(targets):
            other = _package(target)
            if allowed is not None and other != source and other not in allowed:
                found.append(f"{module} imports {target}: {source} may not depend on {other}")
    found += [f"import cycle: {' -> '.join(c)}" for c in _cycles(graph)]
    for module, path in sorted(known.items()):
        package = _package(module)
        banned = FORBIDDEN.get(package, frozenset()) & third_party(path)
        found += [f"{module} imports {name}: {package} must not" for name in sorted(banned)]
    return found


def main() -> int:
    found = problems() + import_problems()
    for line in found:
        print(line, file=sys.stderr)
    print(f"layout: {len(found)} problem(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
