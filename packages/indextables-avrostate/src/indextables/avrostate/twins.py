"""Choosing between a compiled hot loop and its pure-Python twin.

The project's hot loops (this package's FileEntry decoder, the search
engine's term-dictionary and doc-store kernels) each exist twice: a Cython
extension and a pure-Python module with the same functions, tested by the
same tests. An environment variable picks one: ``cython`` (failing to load
the extension is an error, so a broken build never silently runs the slow
path), ``python``, or ``auto`` (the default: Cython when it was built, else
the twin). :class:`Twins` holds that rule once for every pair.
"""

from __future__ import annotations

import contextlib
import importlib
import os
from collections.abc import Iterator
from types import ModuleType
from typing import Literal

__all__ = ["ImplName", "Twins"]

ImplName = Literal["cython", "python"]


class Twins:
    """A compiled module and its pure twin, chosen by an environment variable.

    Args:
        env: the variable naming the implementation (``cython``, ``python`` or ``auto``).
        cython: the compiled module's import path.
        python: the pure twin's import path.
        error: the exception type raised for a missing extension or a bad setting.
        what: what the modules are, for messages ("the compiled decoder").
        hint: how to get the extension, for messages.
        also_auto: other values the variable may hold that choose as ``auto`` does
            (a setting that also means something to the caller).
    """

    def __init__(
        self,
        *,
        env: str,
        cython: str,
        python: str,
        error: type[Exception],
        what: str,
        hint: str,
        also_auto: tuple[str, ...] = (),
    ) -> None:
        self.env = env
        self._modules: dict[ImplName, str] = {"cython": cython, "python": python}
        self._error = error
        self._what = what
        self._hint = hint
        self._also_auto = also_auto
        self._override: tuple[ImplName, ModuleType] | None = None

    def load(self, name: ImplName) -> ModuleType:
        """Import one implementation by name.

        Raises:
            error: ``cython`` was asked for but the extension is not built.
        """
        try:
            return importlib.import_module(self._modules[name])
        except ImportError as exc:
            raise self._error(
                f"{self.env}={name}: {self._what} is not available ({exc}); {self._hint}"
            ) from exc

    def choose(self) -> tuple[ImplName, ModuleType]:
        """The implementation a :meth:`using` block set, else the one the environment
        variable asks for now, with its name.

        Raises:
            error: the variable holds something else, or ``cython`` is not built.
        """
        if self._override is not None:
            return self._override
        wanted = os.environ.get(self.env, "auto").strip().lower() or "auto"
        if wanted == "cython":
            return "cython", self.load("cython")
        if wanted == "python":
            return "python", self.load("python")
        if wanted != "auto" and wanted not in self._also_auto:
            expected = ", ".join(("auto", "cython", "python", *self._also_auto))
            raise self._error(f"{self.env}={wanted!r}: expected one of {expected}")
        try:
            return "cython", self.load("cython")
        except self._error:
            return "python", self.load("python")

    def current(self, default: ModuleType) -> ModuleType:
        """The module a :meth:`using` block set, else ``default``."""
        return self._override[1] if self._override is not None else default

    @contextlib.contextmanager
    def using(self, name: ImplName) -> Iterator[ModuleType]:
        """Run a block with a given implementation (tests compare both twins this way)."""
        previous = self._override
        module = self.load(name)
        self._override = (name, module)
        try:
            yield module
        finally:
            self._override = previous
