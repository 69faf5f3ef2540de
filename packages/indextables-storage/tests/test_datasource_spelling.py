"""``storage.<name>``, the data source options' spelling of a store option, is that option
in every API that takes store options (open_store, the protocol's storage_options)."""

from __future__ import annotations

import pytest

from indextables.storage import ConfigurationError, open_store
from indextables.storage.options import KNOWN, canonical


@pytest.mark.parametrize("name", sorted(KNOWN))
def test_every_store_option_is_also_spelled_storage_dot_name(name: str) -> None:
    assert canonical({f"storage.{name}": "v"}) == {name: "v"}


def test_both_spellings_of_one_option_must_agree() -> None:
    assert canonical({"storage.max_attempts": "3", "max_attempts": "3"}) == {"max_attempts": "3"}
    with pytest.raises(ConfigurationError, match="given twice"):
        canonical({"storage.max_attempts": "3", "max_attempts": "4"})


def test_an_unknown_name_after_storage_dot_is_refused_by_name() -> None:
    with pytest.raises(ConfigurationError, match=r"storage\.max_atempts"):
        canonical({"storage.max_atempts": "3"})


def test_open_store_takes_the_data_source_spelling() -> None:
    store = open_store("memory://spelling", **{"storage.max_attempts": "2"})
    store.put("k", b"v")
    assert store.get("k") == b"v"
