"""fieldmatch values with a NUL byte match exactly; a lone surrogate is an OptionError."""

from __future__ import annotations

import random
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from indextables.search import open_table, write_table
from indextables.search.errors import OptionError


def _table(seed: int) -> pa.Table:
    rng = random.Random(seed)
    alphabet = ["a", "b", "\x00", "é", "😀", " "]
    values = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 4))) for _ in range(200)]
    return pa.table({"id": list(range(200)), "s": values})


@pytest.mark.parametrize("seed", [1, 2])
def test_fieldmatch_with_nul_bytes_matches_like_pyarrow(tmp_path: Path, seed: int) -> None:
    data = _table(seed)
    write_table(str(tmp_path / "t"), data)
    table = open_table(str(tmp_path / "t"))
    for value in sorted(set(data.column("s").to_pylist()))[:12]:
        got = table.search(fieldmatch={"s": value}).column("id").to_pylist()
        expected = data.filter(pc.equal(data.column("s"), value)).column("id").to_pylist()
        assert sorted(got) == sorted(expected), ascii(value)


@pytest.mark.parametrize("value", ["\ud800", "a\udfffb", "\x00\udc80"], ids=ascii)
def test_fieldmatch_with_a_lone_surrogate_is_an_option_error_naming_it(
    tmp_path: Path, value: str
) -> None:
    write_table(str(tmp_path / "t"), _table(3))
    table = open_table(str(tmp_path / "t"))
    with pytest.raises(OptionError, match=r"fieldmatch\.s.*lone surrogate") as caught:
        table.search(fieldmatch={"s": value})
    str(caught.value).encode("utf-8")
