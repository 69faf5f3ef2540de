"""The engine installs and runs without Spark."""

from __future__ import annotations

import importlib
import importlib.util

import indextables.search as engine


def test_pyspark_is_not_importable_here() -> None:
    """This environment installs indextables-search alone: no PySpark, no JVM bridge.

    Every other test of this package passes in it, so none of them needs Spark.
    """
    assert importlib.util.find_spec("pyspark") is None
    assert importlib.util.find_spec("py4j") is None
    assert importlib.util.find_spec("indextables.pyspark") is None


def test_every_module_imports_without_spark() -> None:
    from pathlib import Path

    root = Path(engine.__file__).parent
    names = sorted(
        ".".join(("indextables", "search", *p.relative_to(root).with_suffix("").parts))
        for p in root.rglob("*.py")
        if p.name != "__init__.py"
    )
    assert len(names) > 30
    for name in names:
        importlib.import_module(name)
    assert engine.__version__
