"""The segment writer's inverted tokens against tantivy-py's own segment of the same rows.

The oracle is tantivy-py's one-segment index (the analyzers every index registers):
its term dictionary (read from the ``.term`` file) gives every term in order with its
document frequency, and term queries give each term's documents.
"""

from __future__ import annotations

import glob
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import tantivy

from indextables.search.schema.tokenizers import register_tokenizers
from indextables.search.splits.termdict.composite import split_composite, split_footer
from indextables.search.splits.termdict.fstform import decode_fst_dict
from indextables.search.write.segwriter import Analyzer, analyzer_for, impl, tokenize
from indextables.search.write.segwriter.invert import InvertedField, invert

FIELDS = [("body", "default"), ("ws", "whitespace"), ("exact", "raw")]


@pytest.fixture(params=["python", "cython"])
def twin(request: Any, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(impl.IMPL_ENV, request.param)
    assert impl.kernels().__name__.endswith("_kernels" if request.param == "cython" else "_py")
    return str(request.param)


def _value(rng: random.Random) -> str | None:
    roll = rng.random()
    if roll < 0.1:
        return None
    if roll < 0.15:
        return ""
    words = [
        "a", "A", "b", "ab", "abc", "Ab", "\u00e9", "E\u0301", "\u00ff", "\u0100", "\u4e2d",
        "\U0001f600", "z" * 30, "\u023a", "\u2c65", "x\x00y", "\u0130", "-", "\t", "\u3000",
    ]  # fmt: skip
    return " ".join(rng.choice(words) for _ in range(rng.randrange(0, 30)))


def _tantivy(directory: Path, columns: dict[str, list[str | None]]) -> tantivy.Index:
    builder = tantivy.SchemaBuilder()
    for name, tokenizer in FIELDS:
        builder.add_text_field(name, tokenizer_name=tokenizer)
    index = tantivy.Index(builder.build(), path=str(directory))
    register_tokenizers(index)
    writer = index.writer(200_000_000, 1)
    rows = len(columns[FIELDS[0][0]])
    for row in range(rows):
        doc = tantivy.Document()
        for name, _ in FIELDS:
            value = columns[name][row]
            if value is not None:
                doc.add_text(name, value)
        writer.add_document(doc)
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    return index


def _ours(columns: dict[str, list[str | None]], name: str, tokenizer: str) -> InvertedField:
    analyzer = analyzer_for(tokenizer)
    assert analyzer is not None
    return invert(tokenize(pa.array(columns[name], pa.string()), analyzer, name=name))


@pytest.mark.parametrize("seed", range(3))
def test_terms_doc_freqs_and_documents_are_tantivys(tmp_path: Path, twin: str, seed: int) -> None:
    rng = random.Random(seed)
    rows = 250
    columns = {name: [_value(rng) for _ in range(rows)] for name, _ in FIELDS}
    index = _tantivy(tmp_path, columns)
    (term_file,) = glob.glob(str(tmp_path / "*.term"))
    body, _ = split_footer(Path(term_file).read_bytes())
    dictionaries = {blob.field: decode_fst_dict(blob.data) for blob in split_composite(body)}
    searcher = index.searcher()
    for field, (name, tokenizer) in enumerate(FIELDS):
        ours = _ours(columns, name, tokenizer)
        theirs = dictionaries[field]
        assert ours.terms.to_pylist() == theirs.keys, name
        assert ours.doc_freq.to_pylist() == list(theirs.doc_freq), name
        starts = ours.doc_starts.to_pylist()
        docs = ours.docs.to_pylist()
        for k, term in enumerate(ours.terms.to_pylist()):
            query = tantivy.Query.term_query(index.schema, name, term.decode())
            hits = searcher.search(query, rows + 1).hits
            assert sorted(address.doc for _, address in hits) == docs[starts[k] : starts[k + 1]]


def test_term_freqs_and_positions_follow_the_tokens(twin: str) -> None:
    # A Python model over the tokens themselves: (term, row) -> positions.
    rng = random.Random(5)
    values = [_value(rng) for _ in range(300)]
    tokens = tokenize(pa.array(values, pa.string()), Analyzer("simple"), name="b")
    model: dict[tuple[bytes, int], list[int]] = {}
    for term, row, position in zip(
        tokens.terms.to_pylist(), tokens.rows.to_pylist(), tokens.positions.to_pylist(), strict=True
    ):
        model.setdefault((term, row), []).append(position)
    inverted = invert(tokens)
    got: dict[tuple[bytes, int], list[int]] = {}
    positions = iter(inverted.positions.to_pylist())
    starts = inverted.doc_starts.to_pylist()
    docs, freqs = inverted.docs.to_pylist(), inverted.term_freqs.to_pylist()
    for k, term in enumerate(inverted.terms.to_pylist()):
        for d in range(starts[k], starts[k + 1]):
            got[(term, docs[d])] = [next(positions) for _ in range(freqs[d])]
    assert got == {key: sorted(value) for key, value in model.items()}
    assert next(positions, None) is None
