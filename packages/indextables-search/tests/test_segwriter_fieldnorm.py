"""The segment writer's ``.fieldnorm`` file byte for byte against tantivy-py's, both twins.

tantivy-py indexes the same rows (one segment, the analyzers every index registers);
its ``.fieldnorm`` file is the oracle for ours, built from the writer's own tokens.
"""

from __future__ import annotations

import glob
import itertools
import random
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
import tantivy

from indextables.search.schema.tokenizers import register_tokenizers
from indextables.search.splits.termdict.composite import split_composite, split_footer
from indextables.search.write.segwriter import (
    Analyzer,
    SegmentWriteError,
    analyzer_for,
    impl,
    tokenize,
)
from indextables.search.write.segwriter.fieldnorm import (
    FIELDNORM_VALUES,
    fieldnorm_file,
    fieldnorm_ids,
    token_counts,
)

# (name, tokenizer) of the text fields, in schema order; then a u64 field without fieldnorms.
TEXT_FIELDS = [
    ("body", "default"),
    ("ws", "whitespace"),
    ("short", "default_limit_40"),
    ("exact", "raw"),
]


@pytest.fixture(params=["python", "cython"])
def twin(request: Any, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(impl.IMPL_ENV, request.param)
    assert impl.kernels().__name__.endswith("_kernels" if request.param == "cython" else "_py")
    return str(request.param)


def _tantivy_index(
    directory: Path, columns: dict[str, list[str | None]], text_fields: list[tuple[str, str]]
) -> tuple[tantivy.Index, bytes]:
    """tantivy-py's one-segment index of the rows, and its ``.fieldnorm`` file."""
    builder = tantivy.SchemaBuilder()
    for name, tokenizer in text_fields:
        builder.add_text_field(name, tokenizer_name=tokenizer)
    builder.add_unsigned_field("n", fast=True, indexed=True)
    index = tantivy.Index(builder.build(), path=str(directory))
    register_tokenizers(index, tuple(t for _, t in text_fields))
    writer = index.writer(200_000_000, 1)
    rows = len(next(iter(columns.values())))
    for row in range(rows):
        doc = tantivy.Document()
        for name, _ in text_fields:
            value = columns[name][row]
            if value is not None:
                doc.add_text(name, value)
        doc.add_unsigned("n", row)
        writer.add_document(doc)
    writer.commit()
    writer.wait_merging_threads()
    (path,) = glob.glob(str(directory / "*.fieldnorm"))
    return index, Path(path).read_bytes()


def _tantivy_fieldnorm(directory: Path, columns: dict[str, list[str | None]]) -> bytes:
    return _tantivy_index(directory, columns, TEXT_FIELDS)[1]


def _ours(
    columns: dict[str, list[str | None]], text_fields: list[tuple[str, str]] = TEXT_FIELDS
) -> bytes:
    rows = len(next(iter(columns.values())))
    fields = []
    for field, (name, tokenizer) in enumerate(text_fields):
        analyzer = analyzer_for(tokenizer)
        assert analyzer is not None
        tokens = tokenize(pa.array(columns[name], pa.string()), analyzer, name=name)
        fields.append((field, token_counts(tokens, rows)))
    return fieldnorm_file(fields, rows)


def _value(rng: random.Random) -> str | None:
    roll = rng.random()
    if roll < 0.1:
        return None
    if roll < 0.15:
        return ""
    words = [
        "Alpha",
        "beta",
        "ÄÖÜ",
        "x" * 38,
        "y" * 45,
        "z" * 260,
        "Ⱥ" * 20,
        "İ",
        "-",
        "  ",
        "\u3000",
    ]
    return " ".join(rng.choice(words) for _ in range(rng.randrange(0, rng.choice([4, 40, 400]))))


@pytest.mark.parametrize("seed", range(3))
def test_fieldnorm_file_is_tantivys_byte_for_byte(tmp_path: Path, twin: str, seed: int) -> None:
    rng = random.Random(seed)
    rows = 300
    columns = {name: [_value(rng) for _ in range(rows)] for name, _ in TEXT_FIELDS}
    assert _ours(columns) == _tantivy_fieldnorm(tmp_path, columns)


def test_fieldnorm_codes_at_every_boundary_below_8000_tokens(tmp_path: Path, twin: str) -> None:
    counts = sorted(
        {c for v in FIELDNORM_VALUES if v <= 8_000 for c in (v - 1, v, v + 1) if c >= 0}
    )
    values: list[str | None] = ["w " * c for c in counts]
    columns = {name: values for name, _ in TEXT_FIELDS}
    want = _tantivy_fieldnorm(tmp_path, columns)
    assert _ours(columns) == want
    body, _ = split_footer(want)
    blob = split_composite(body)[0]
    assert blob.field == 0
    assert blob.data == fieldnorm_ids(np.array(counts))


def test_fieldnorm_values_increase_and_cover_u32() -> None:
    assert all(a < b for a, b in itertools.pairwise(FIELDNORM_VALUES))
    assert fieldnorm_ids(np.array([0, 23, 24, 2**32 - 1])) == bytes([0, 23, 24, 255])


def test_bad_fieldnorm_inputs_are_our_errors() -> None:
    with pytest.raises(SegmentWriteError, match="not increasing"):
        fieldnorm_file([(1, np.zeros(2)), (1, np.zeros(2))], 2)
    with pytest.raises(SegmentWriteError, match="field 0: 3 fieldnorm counts for 2 documents"):
        fieldnorm_file([(0, np.zeros(3))], 2)
    with pytest.raises(SegmentWriteError, match="negative"):
        fieldnorm_ids(np.array([-1]))
    tokens = tokenize(pa.array(["a b", "c"]), Analyzer("simple"), name="t")
    with pytest.raises(SegmentWriteError, match="beyond the 1 documents"):
        token_counts(tokens, 1)


def test_tokens_past_65530_bytes_are_dropped_as_tantivys_indexer_drops_them(
    tmp_path: Path, twin: str
) -> None:
    fields = [("exact", "raw"), ("ws", "whitespace_limit_200000")]
    lengths = [65529, 65530, 65531, 70000]
    columns: dict[str, list[str | None]] = {
        # U+023A (2 bytes) lowercases to 3 bytes: 21,844 of them cross the limit only then.
        "exact": [*("a" * n for n in lengths), "\u023a" * 21844],
        "ws": [*(f"{'b' * n} c" for n in lengths), "\u023a" * 21844 + " c"],
    }
    index, want = _tantivy_index(tmp_path, columns, fields)
    assert _ours(columns, fields) == want
    index.reload()
    searcher = index.searcher()
    for name, tokenizer in fields:
        analyzer = analyzer_for(tokenizer)
        assert analyzer is not None
        tokens = tokenize(pa.array(columns[name]), analyzer, name=name)
        ours = set(tokens.terms.to_pylist())
        for value in columns[name]:
            assert value is not None
            term = value.split(" ")[0]
            term = term if name == "exact" else term.lower().replace("\u023a", "\u2c65")
            query = tantivy.Query.term_query(index.schema, name, term)
            assert (len(searcher.search(query, 10).hits) == 1) == (term.encode() in ours), (
                name,
                len(term),
            )
        assert (b"c" in ours) == (name == "ws")
