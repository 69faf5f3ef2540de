"""Build the optional Cython kernels (term dictionary, doc store, companion pages).

Pure twins work without them.

The extension is skipped when INDEXTABLES_SEARCH_BUILD_EXT=0, when Cython
is missing, or when compiling fails (no compiler): installs never break.
"""

from __future__ import annotations

import os
import sys

from setuptools import setup
from setuptools.command.build_ext import build_ext

EXT_SOURCE = "src/indextables/search/splits/termdict/_kernels.pyx"
DOCSTORE_SOURCE = "src/indextables/search/read/docstore/_kernels.pyx"
COMPANION_SOURCE = "src/indextables/search/companion/_kernels.pyx"


class OptionalBuildExt(build_ext):
    """A build_ext whose failure leaves the pure-Python twin in charge."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:
            sys.stderr.write(f"indextables-search: Cython extension not built ({exc})\n")

    def build_extension(self, ext) -> None:  # type: ignore[no-untyped-def]
        try:
            super().build_extension(ext)
        except Exception as exc:
            sys.stderr.write(f"indextables-search: {ext.name} not built ({exc})\n")


def extensions() -> list:  # type: ignore[type-arg]
    if os.environ.get("INDEXTABLES_SEARCH_BUILD_EXT", "1") == "0":
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:
        sys.stderr.write(
            "indextables-search: Cython missing, pure-Python term-dictionary kernels only\n"
        )
        return []
    from setuptools import Extension

    exts = [
        Extension(
            "indextables.search.splits.termdict._kernels", [EXT_SOURCE], extra_compile_args=["-O3"]
        ),
        Extension(
            "indextables.search.read.docstore._kernels",
            [DOCSTORE_SOURCE],
            extra_compile_args=["-O3"],
        ),
        Extension(
            "indextables.search.companion._kernels",
            [COMPANION_SOURCE],
            extra_compile_args=["-O3"],
        ),
    ]
    # One module per cythonize call: a failure in one leaves the other built.
    built = []
    for ext in exts:
        try:
            built.extend(cythonize([ext], compiler_directives={"language_level": "3"}, quiet=True))
        except Exception as exc:
            sys.stderr.write(f"indextables-search: {ext.name} not cythonized ({exc})\n")
    return built


setup(ext_modules=extensions(), cmdclass={"build_ext": OptionalBuildExt})
