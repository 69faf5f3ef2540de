"""``Twins``: the environment variable's choice, and a ``using()`` block overriding it
for ``choose()`` as for ``current()`` (stand-in modules from the standard library, so
the test does not depend on a compiled build)."""

from __future__ import annotations

import csv
import json

import pytest

from indextables.avrostate import AvroStateError
from indextables.avrostate.twins import Twins

ENV = "INDEXTABLES_TWINS_TEST_IMPL"


def _twins() -> Twins:
    return Twins(
        env=ENV,
        cython="json",
        python="csv",
        error=AvroStateError,
        what="the test modules",
        hint="none",
    )


@pytest.mark.parametrize(
    ("setting", "name", "module"), [("cython", "cython", json), ("python", "python", csv)]
)
def test_the_variable_chooses(
    monkeypatch: pytest.MonkeyPatch, setting: str, name: str, module: object
) -> None:
    monkeypatch.setenv(ENV, setting)
    assert _twins().choose() == (name, module)


@pytest.mark.parametrize(
    ("setting", "other", "module"), [("cython", "python", csv), ("python", "cython", json)]
)
def test_a_using_block_overrides_choose_and_current(
    monkeypatch: pytest.MonkeyPatch, setting: str, other: str, module: object
) -> None:
    monkeypatch.setenv(ENV, setting)
    twins = _twins()
    before = twins.choose()
    with twins.using(other) as used:  # type: ignore[arg-type]
        assert used is module
        assert twins.choose() == (other, module)
        assert twins.current(before[1]) is module
        with twins.using(setting) as inner:  # type: ignore[arg-type]
            assert twins.choose() == (setting, inner)
        assert twins.choose() == (other, module)
    assert twins.choose() == before
    assert twins.current(before[1]) is before[1]


def test_a_block_ending_in_an_error_restores_the_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "cython")
    twins = _twins()
    with pytest.raises(RuntimeError), twins.using("python"):
        raise RuntimeError("inside")
    assert twins.choose() == ("cython", json)
