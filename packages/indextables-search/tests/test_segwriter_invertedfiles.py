"""The segment writer's ``.idx``, ``.pos``, ``.term`` and ``.fieldnorm`` files byte for
byte against tantivy-py's one-segment index of the same rows, both kernel twins."""

from __future__ import annotations

import glob
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import tantivy

from indextables.search.schema.tokenizers import register_tokenizers
from indextables.search.write.segwriter import SegmentWriteError, analyzer_for, impl
from indextables.search.write.segwriter.invertedfiles import TextField, inverted_files

FIELDS = [
    ("body", "default", "position"),
    ("ws", "whitespace", "freq"),
    ("exact", "raw", "basic"),
    ("short", "default_limit_40", "position"),
]


@pytest.fixture(params=["python", "cython"])
def twin(request: Any, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(impl.IMPL_ENV, request.param)
    assert impl.kernels().__name__.endswith("_kernels" if request.param == "cython" else "_py")
    return str(request.param)


def _value(rng: random.Random) -> str | None:
    roll = rng.random()
    if roll < 0.1:
        return None
    if roll < 0.13:
        return ""
    words = [
        "the", "The", "a", "b", "\u00e9t\u00e9", "\u0130", "\u4e2d\u6587", "x" * 39, "y" * 41,
        "z" * 300, "\U0001f600", "-", "A-B", "x\x00y", "\u3000", "\t",
    ] + [f"w{k}" for k in range(200)]  # fmt: skip
    count = rng.randrange(0, rng.choice([3, 12, 60]))
    return " ".join(rng.choice(words) for _ in range(count))


def _tantivy_files(
    directory: Path, columns: dict[str, list[str | None]], rows: int
) -> dict[str, bytes]:
    builder = tantivy.SchemaBuilder()
    for name, tokenizer, option in FIELDS:
        builder.add_text_field(name, tokenizer_name=tokenizer, index_option=option)
    index = tantivy.Index(builder.build(), path=str(directory))
    register_tokenizers(index, tuple(t for _, t, _ in FIELDS))
    writer = index.writer(200_000_000, 1)
    for row in range(rows):
        doc = tantivy.Document()
        for name, _, _ in FIELDS:
            value = columns[name][row]
            if value is not None:
                doc.add_text(name, value)
        writer.add_document(doc)
    writer.commit()
    writer.wait_merging_threads()
    out = {}
    for ext in ("idx", "pos", "term", "fieldnorm"):
        (path,) = glob.glob(str(directory / f"*.{ext}"))
        out[ext] = Path(path).read_bytes()
    return out


def _fields() -> list[TextField]:
    out = []
    for field_id, (name, tokenizer, option) in enumerate(FIELDS):
        analyzer = analyzer_for(tokenizer)
        assert analyzer is not None
        out.append(TextField(field_id, name, analyzer, option))  # type: ignore[arg-type]
    return out


@pytest.mark.parametrize(("seed", "rows"), [(0, 1), (1, 50), (2, 900), (3, 300), (4, 2)])
def test_inverted_files_are_tantivys_byte_for_byte(
    tmp_path: Path, twin: str, seed: int, rows: int
) -> None:
    rng = random.Random(seed)
    columns = {name: [_value(rng) for _ in range(rows)] for name, _, _ in FIELDS}
    if seed == 3:  # a field without any token: no postings, positions or terms
        columns["short"] = [rng.choice([None, "", "-"]) for _ in range(rows)]
    want = _tantivy_files(tmp_path, columns, rows)
    got = inverted_files([pa.array(columns[n], pa.string()) for n, _, _ in FIELDS], _fields(), rows)
    for ext in ("fieldnorm", "term", "idx", "pos"):
        assert got[ext] == want[ext], ext


def test_columns_must_fit_the_segment() -> None:
    fields = _fields()[:1]
    with pytest.raises(SegmentWriteError, match="column 'body': 2 values for 3 documents"):
        inverted_files([pa.array(["a", "b"])], fields, 3)
    with pytest.raises(SegmentWriteError, match="2 columns for 1 fields"):
        inverted_files([pa.array(["a"]), pa.array(["b"])], fields, 1)
