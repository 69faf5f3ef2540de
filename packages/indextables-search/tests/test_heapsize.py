"""indexWriter.heapSize is checked against Tantivy's own bounds, naming the option."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
import tantivy

from indextables.search import write_table
from indextables.search.errors import OptionError
from indextables.search.options import parse_write

KEY = "spark.indextables.indexWriter.heapSize"


def _tantivy_accepts(heap: int) -> bool:
    schema = tantivy.SchemaBuilder().add_text_field("body").build()
    try:
        writer = tantivy.Index(schema).writer(heap, 1)
    except ValueError:
        return False
    del writer
    return True


@pytest.mark.parametrize(
    "value",
    [
        str((15 << 20) - 1),
        "15M",
        "1G",
        "4293967294",
        "4293967295",
        "4293967296",
        "4G",
        "5g",
        "999999G",
        "99999999999999999999G",
    ],
)
def test_parse_write_accepts_what_tantivy_accepts(value: str) -> None:
    units = {"": 1, "m": 1 << 20, "g": 1 << 30}
    number, unit = value.rstrip("MGmg"), value[len(value.rstrip("MGmg")) :].lower()
    heap = int(number) * units[unit]
    # The model: Tantivy's own check, and the reference's stricter minimum of 15M.
    if 15 << 20 <= heap <= 8 << 30 and _tantivy_accepts(heap):
        assert parse_write({KEY: value}).heap_size == heap
    else:
        with pytest.raises(OptionError, match=r"(?i)indexWriter\.heapSize"):
            parse_write({KEY: value})


def test_a_huge_heap_fails_the_write_naming_the_option(tmp_path: Path) -> None:
    with pytest.raises(OptionError, match=r"(?i)indexWriter\.heapSize.*999999G.*maximum"):
        write_table(str(tmp_path / "t"), pa.table({"a": [1, 2]}), options={KEY: "999999G"})
    assert not (tmp_path / "t" / "_transaction_log").exists()


@pytest.mark.parametrize("value", ["999999G", "4293967295", "5g"])
def test_a_huge_merge_heap_is_an_option_error_naming_it(value: str) -> None:
    from indextables.search.write.merge import merge_settings

    with pytest.raises(OptionError, match=r"(?i)merge\.heapsize.*maximum"):
        merge_settings({"spark.indextables.merge.heapSize": value})


def test_a_merge_heap_within_the_bounds_is_kept() -> None:
    from indextables.search.write.merge import merge_settings

    assert merge_settings({"spark.indextables.merge.heapSize": "4293967294"}).heap_size == (
        4_293_967_294
    )
