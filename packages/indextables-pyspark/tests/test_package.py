"""The distribution imports, carries its version and is part of the namespace."""

import importlib
import re

import indextables


def test_imports_with_version() -> None:
    module = importlib.import_module("indextables.pyspark")
    assert re.fullmatch(r"\d+\.\d+\.\d+(\.dev\d+)?", module.__version__)
    assert sorted(module.__all__) == module.__all__


def test_indextables_is_a_namespace_package() -> None:
    assert getattr(indextables, "__file__", None) is None
    assert len(list(indextables.__path__)) >= 1


def test_subpackages_do_not_shadow_the_facade() -> None:
    """Importing every module leaves itp.write/itp.sql/... the facade's functions (a
    subpackage named like a helper would replace it on the package once imported)."""
    import importlib
    import inspect
    import pkgutil

    import indextables.pyspark as itp

    for found in pkgutil.walk_packages(itp.__path__, prefix="indextables.pyspark."):
        importlib.import_module(found.name)
    for name in ("write", "sql", "search", "count", "aggregate", "register", "range"):
        assert inspect.isfunction(getattr(itp, name)), name
