"""Which decoder loaded: a broken build must never silently run the slow path."""

from __future__ import annotations

import os

import pytest

from indextables.avrostate import CYTHON_MODULE, AvroStateError, impl


def test_the_selected_implementation_loaded() -> None:
    wanted = os.environ.get(impl.IMPL_ENV, "auto")
    if wanted == "python":
        assert not CYTHON_MODULE
        assert impl.IMPL_NAME == "python"
        assert impl.decoder().__name__ == "indextables.avrostate._decode_py"
    else:  # cython, or auto where the extension is built (tox ext env, dev venv)
        assert CYTHON_MODULE
        assert impl.IMPL_NAME == "cython"
        assert impl.decoder().__name__ == "indextables.avrostate._decode"
        assert impl.decoder().__file__.endswith(".so")


def test_twins_have_identical_signatures() -> None:
    import inspect

    py = impl.load("python")
    for name in ("scan_block", "decode_record", "map_column", "decode_entries"):
        params = list(inspect.signature(getattr(py, name)).parameters)
        if CYTHON_MODULE:
            compiled = getattr(impl.load("cython"), name)
            assert list(inspect.signature(compiled).parameters) == params


def test_unknown_choice_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(impl.IMPL_ENV, "fortran")
    with pytest.raises(AvroStateError, match="fortran"):
        impl._TWINS.choose()
