"""Each kernel chooser of the engine honours a ``Twins.using()`` block: the module
it hands out inside the block is the twin the block named, whatever the environment
variable says, and the variable's choice again after the block."""

from __future__ import annotations

from types import ModuleType

import pytest

from indextables.search.read.docstore import impl as docstore_impl
from indextables.search.splits.termdict import impl as termdict_impl
from indextables.search.write.segwriter import impl as segwriter_impl

CHOOSERS = {
    "docstore": (docstore_impl, docstore_impl.kernels),
    "segwriter": (segwriter_impl, segwriter_impl.kernels),
    "termdict": (termdict_impl, termdict_impl.kernels),
}


@pytest.mark.parametrize("which", sorted(CHOOSERS))
@pytest.mark.parametrize("name", ["python", "cython"])
def test_a_using_block_picks_the_kernels(
    which: str, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    module, kernels = CHOOSERS[which]
    other = "cython" if name == "python" else "python"
    monkeypatch.setenv(module.IMPL_ENV, other)
    wanted: ModuleType = module.load(name)  # a missing extension fails the test
    outside = kernels()
    with module._TWINS.using(name):
        assert kernels() is wanted
    assert kernels() is outside
