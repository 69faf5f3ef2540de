"""The segment writer's ``.idx`` and ``.pos`` bytes against tantivy-py's, term by term.

tantivy-py indexes the same rows in one segment (the analyzers every index registers);
its term dictionary gives each term's byte ranges in its ``.idx`` and ``.pos`` files,
and ours must equal them for every term: VInt tails, bitpacked 128-entry blocks, skip
data with block maxima.
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
from indextables.search.write.segwriter import SegmentWriteError, analyzer_for, impl, tokenize
from indextables.search.write.segwriter.fieldnorm import fieldnorm_ids, token_counts
from indextables.search.write.segwriter.invert import invert
from indextables.search.write.segwriter.postings import (
    BLOCK_LEN,
    Bm25Norms,
    bitpack,
    field_header,
    term_positions,
    term_postings,
)

# (name, tokenizer, index option) in schema order.
FIELDS = [
    ("body", "default", "position"),
    ("ws", "whitespace", "freq"),
    ("exact", "raw", "basic"),
    ("tags", "default", "position"),
]


@pytest.fixture(params=["python", "cython"])
def twin(request: Any, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(impl.IMPL_ENV, request.param)
    assert impl.kernels().__name__.endswith("_kernels" if request.param == "cython" else "_py")
    return str(request.param)


def _value(rng: random.Random, words: list[str], most: int) -> str | None:
    if rng.random() < 0.1:
        return None
    return " ".join(rng.choice(words) for _ in range(rng.randrange(0, most)))


def _segment_files(directory: Path, ext: str) -> dict[int, bytes]:
    (path,) = glob.glob(str(directory / f"*.{ext}"))
    body, _ = split_footer(Path(path).read_bytes())
    return {blob.field: blob.data for blob in split_composite(body)}


@pytest.mark.parametrize("seed", range(3))
def test_every_terms_postings_and_positions_are_tantivys(
    tmp_path: Path, twin: str, seed: int
) -> None:
    rng = random.Random(seed)
    words = [f"w{k}" for k in range(300)] + ["Caf\u00e9", "\u00c9T\u00c9", "x" * 300, "\u4e2d"]
    rows = 700
    columns = {name: [_value(rng, words, 25) for _ in range(rows)] for name, _, _ in FIELDS}
    # Terms of several blocks: "the" in about 630 documents (postings), and a, b, c
    # with frequencies up to 40 and thousands of positions.
    columns["ws"] = [None if v is None else v + " the" for v in columns["ws"]]
    columns["body"] = [
        None if v is None else v + " The" * rng.randrange(1, 4) for v in columns["body"]
    ]
    columns["tags"] = [_value(rng, ["a", "b", "c"], rng.choice([3, 120])) for r in range(rows)]
    builder = tantivy.SchemaBuilder()
    for name, tokenizer, option in FIELDS:
        builder.add_text_field(name, tokenizer_name=tokenizer, index_option=option)
    index = tantivy.Index(builder.build(), path=str(tmp_path))
    register_tokenizers(index)
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
    terms = {f: decode_fst_dict(b) for f, b in _segment_files(tmp_path, "term").items()}
    idx, pos = _segment_files(tmp_path, "idx"), _segment_files(tmp_path, "pos")
    checked = blocks = 0
    for field, (name, tokenizer, option) in enumerate(FIELDS):
        analyzer = analyzer_for(tokenizer)
        assert analyzer is not None
        tokens = tokenize(pa.array(columns[name], pa.string()), analyzer, name=name)
        assert idx[field][:8] == field_header(len(tokens.rows))
        postings = idx[field][8:]
        norms = Bm25Norms(fieldnorm_ids(token_counts(tokens, rows)), len(tokens.rows))
        inverted = invert(tokens)
        theirs = terms[field]
        assert inverted.terms.to_pylist() == theirs.keys
        starts = inverted.doc_starts.to_pylist()
        docs, freqs = inverted.docs.to_pylist(), inverted.term_freqs.to_pylist()
        all_positions = inverted.positions.to_pylist()
        position_at = 0
        for k in range(len(theirs)):
            term_docs = docs[starts[k] : starts[k + 1]]
            term_freqs = freqs[starts[k] : starts[k + 1]]
            per_doc = []
            for freq in term_freqs:
                per_doc.append(all_positions[position_at : position_at + freq])
                position_at += freq
            want = postings[
                theirs.postings_start[k] : theirs.postings_start[k] + theirs.postings_len[k]
            ]
            got = term_postings(
                term_docs,
                None if option == "basic" else term_freqs,
                positions=option == "position",
                norms=norms,
            )
            assert got == want, (name, theirs.keys[k], len(term_docs))
            if option == "position":
                want_pos = pos[field][
                    theirs.positions_start[k] : theirs.positions_start[k] + theirs.positions_len[k]
                ]
                assert term_positions(per_doc) == want_pos, (name, theirs.keys[k])
                blocks += sum(term_freqs) >= BLOCK_LEN
            blocks += len(term_docs) >= BLOCK_LEN
            checked += 1
    assert checked > 500
    assert blocks > 6


def test_bitpack_matches_a_bit_by_bit_model() -> None:
    rng = random.Random(9)
    for num_bits in range(33):
        values = [rng.getrandbits(num_bits) for _ in range(BLOCK_LEN)]
        packed = bitpack(values, num_bits)
        assert len(packed) == num_bits * BLOCK_LEN // 8
        # Lane j holds values j, j+4, ... LSB first; word w of lane j is u32 4w+j.
        words = [
            int.from_bytes(packed[4 * i : 4 * i + 4], "little") for i in range(len(packed) // 4)
        ]
        for index, value in enumerate(values):
            lane, slot = index % 4, index // 4
            read = 0
            for bit in range(num_bits):
                at = slot * num_bits + bit
                read |= ((words[4 * (at // 32) + lane] >> (at % 32)) & 1) << bit
            assert read == value


def test_postings_inputs_out_of_order_are_our_errors() -> None:
    with pytest.raises(SegmentWriteError, match="not ascending at 3"):
        term_postings([4, 3], [1, 1])
    with pytest.raises(SegmentWriteError, match="not ascending at 4"):
        term_postings([4, 4], None)
    with pytest.raises(SegmentWriteError, match="1 term frequencies for 2 documents"):
        term_postings([1, 2], [1])
    with pytest.raises(SegmentWriteError, match="positions not ascending at 1"):
        term_positions([[2, 1]])
