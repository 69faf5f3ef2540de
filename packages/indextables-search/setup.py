"""Build the optional Cython kernels (term dictionary, doc store, companion pages, segment
writer).

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
SEGWRITER_SOURCE = "src/indextables/search/write/segwriter/_kernels.pyx"


class OptionalBuildExt(build_ext):
    """A build_ext whose failure leaves the pure-Python twin in charge."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:
            sys.stderr.write(f"indextables-search: Cython extension not built ({exc})\n")

    def build_extension(self, ext) -> None:  # type: ignore[no-untyped-def]
        if self._reuse_in_place(ext):
            return
        try:
            super().build_extension(ext)
        except Exception as exc:
            sys.stderr.write(f"indextables-search: {ext.name} not built ({exc})\n")

    def _reuse_in_place(self, ext) -> bool:  # type: ignore[no-untyped-def]
        """Copy the module already built next to its source when it is newer than every
        source (each editable install of the tree, one per tox env, would otherwise
        compile the same C again); True when copied."""
        built = os.path.join(
            os.path.dirname(ext.sources[0]), os.path.basename(self.get_ext_filename(ext.name))
        )
        target = self.get_ext_fullpath(ext.name)
        if (
            self.force
            or not os.path.isfile(built)
            or os.path.abspath(built) == os.path.abspath(target)
        ):
            return False
        try:
            newest = max(os.path.getmtime(source) for source in [*ext.sources, *ext.depends])
            if os.path.getmtime(built) <= newest:
                return False
            self.mkpath(os.path.dirname(target))
            self.copy_file(built, target)
        except OSError:
            return False  # compile it instead
        return True


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
        Extension(
            "indextables.search.write.segwriter._kernels",
            [SEGWRITER_SOURCE],
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
