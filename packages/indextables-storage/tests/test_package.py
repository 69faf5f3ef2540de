"""The distribution imports, carries its version and is part of the namespace."""

import importlib
import re

import indextables


def test_imports_with_version() -> None:
    module = importlib.import_module("indextables.storage")
    assert re.fullmatch(r"\d+\.\d+\.\d+(\.dev\d+)?", module.__version__)
    assert sorted(module.__all__) == module.__all__


def test_indextables_is_a_namespace_package() -> None:
    assert getattr(indextables, "__file__", None) is None
    assert len(list(indextables.__path__)) >= 1
