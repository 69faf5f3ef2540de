"""Table access from the data source: one read of each log object per planning call."""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Any

import pytest

from indextables.search.errors import NotATableError
from indextables.search.table.tableaccess import load_head, load_planning_view, load_view
from indextables.storage import LocalStore

NAMES = ["02_five_appends", "08_ten_writes_at_checkpoint", "04_partitioned"]


@pytest.fixture
def store_calls(monkeypatch: pytest.MonkeyPatch) -> collections.Counter[tuple[str, str]]:
    """Counts (method, key or prefix) of every read and listing of local stores."""
    calls: collections.Counter[tuple[str, str]] = collections.Counter()
    for method in ("get", "get_range", "head", "list"):
        original = getattr(LocalStore, method)

        def counted(self: Any, *args: Any, _original: Any = original, _name: str = method) -> Any:
            calls[(_name, str(args[0]) if args else "")] += 1
            return _original(self, *args)

        monkeypatch.setattr(LocalStore, method, counted)
    return calls


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("load", [load_view, load_head, load_planning_view])
def test_a_planning_call_reads_each_log_object_once(
    name: str, load: Any, golden_copy: Any, store_calls: collections.Counter[Any]
) -> None:
    path = str(golden_copy(name))
    load(path, {})  # plugins, caches of immutable version files
    store_calls.clear()
    load(path, {})
    assert store_calls, "the call read nothing: the counter is not wired"
    twice = {call: n for call, n in store_calls.items() if n > 1}
    assert twice == {}  # the engine's up-front check used to list and read the state again


@pytest.mark.parametrize("load", [load_view, load_head, load_planning_view])
def test_a_path_without_a_table_is_a_clear_error(load: Any, tmp_path: Path) -> None:
    with pytest.raises(NotATableError, match="is not an IndexTables table"):
        load(str(tmp_path / "nothing"), {})
