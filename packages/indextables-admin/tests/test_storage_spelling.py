"""Store options are spelled alike in the admin API, the CLI and the engine: a name
(``max_attempts``) or the data source's ``storage.<name>``, both accepted by each."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from indextables import admin
from indextables.search import open_table, write_table


@pytest.mark.parametrize("key", ["max_attempts", "storage.max_attempts"])
def test_every_api_takes_both_spellings(key: str, tmp_path: Path, cli_run: Any) -> None:
    uri = str(tmp_path / "t")
    write_table(uri, pa.table({"a": [1, 2, 3]}), storage_options={key: "2"})
    assert open_table(uri, storage_options={key: "2"}).count() == 3
    assert admin.describe_table(uri, storage_options={key: "2"}).snapshot.version == 1
    assert admin.checkpoint(uri, storage_options={key: "2"}) is not None
    for command in ("describe", "count"):
        run = cli_run(command, uri, "-S", f"{key}=2")
        assert run.exit_code == 0, run.stderr
