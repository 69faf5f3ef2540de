"""The segment writer's inversion, postings and positions kernels: Cython against its pure
twin on seeded hostile inputs (byte for byte, same errors), and both against tantivy-py's
files for terms over many blocks, doc gaps crossing bit widths and large frequencies."""

from __future__ import annotations

import glob
import random
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
import tantivy

from indextables.search.write.segwriter import SegmentWriteError, analyzer_for, impl
from indextables.search.write.segwriter.invertedfiles import TextField, inverted_files

CY = impl.load("cython")
PY = impl.load("python")


@pytest.fixture(params=["python", "cython"])
def twin(request: Any, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(impl.IMPL_ENV, request.param)
    return str(request.param)


def _term_docs(rng: random.Random) -> list[int]:
    """Strictly ascending documents: 1 to many blocks, gaps of random bit widths."""
    count = rng.choice([1, 2, 127, 128, 129, 255, 256, 257, 1000, rng.randrange(1, 1500)])
    docs, doc = [], rng.choice([0, 1, rng.randrange(1 << 20)])
    for _ in range(count):
        docs.append(doc)
        doc += 1 + (rng.getrandbits(rng.randrange(0, 20)) if rng.random() < 0.3 else 0)
    return docs


def _field(rng: random.Random) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(doc_starts, docs, term_freqs, positions) of a random field."""
    starts, docs, freqs, positions = [0], [], [], []
    for _ in range(rng.randrange(0, 12)):
        term_docs = _term_docs(rng)
        docs += term_docs
        for _ in term_docs:
            freq = rng.choice([1, 1, 2, 3, rng.randrange(1, 300), rng.randrange(1, 1 << 12)])
            freq = freq if rng.random() < 0.99 else rng.randrange(1 << 16, 1 << 17)
            freqs.append(freq)
            top = rng.choice([freq, 1 << 31, 0xFFFFFFFF])
            positions += sorted(
                rng.sample(range(top), freq)
                if top < 1 << 20
                else [rng.randrange(top) for _ in range(freq)]
            )
        starts.append(len(docs))
    return (
        np.array(starts, np.int64),
        np.array(docs, np.uint32),
        np.array(freqs, np.uint32),
        np.array(positions, np.uint32),
    )


@pytest.mark.parametrize("seed", range(12))
def test_postings_and_positions_kernels_agree_with_the_twin(seed: int) -> None:
    rng = random.Random(seed)
    starts, docs, freqs, positions = _field(rng)
    max_doc = int(docs.max()) + 1 if docs.size else 1
    codes = np.array([rng.randrange(256) for _ in range(min(max_doc, 1 << 21))], np.uint8)
    if codes.size < max_doc:
        codes = np.resize(codes, max_doc)
    scale = np.float32(rng.uniform(0.5, 50))
    values = np.arange(256, dtype=np.float32)
    norms = np.float32(1.2) * (np.float32(0.25) + np.float32(0.75) * values / scale)
    for record in (0, 1, 2):
        for fieldnorms in (codes, np.zeros(0, np.uint8)):
            got = CY.postings(starts, docs, freqs, fieldnorms, norms, record)
            assert got == PY.postings(starts, docs, freqs, fieldnorms, norms, record)
            ends = np.frombuffer(got[1], "<i8")
            assert ends[0] == 0
            assert ends[-1] == len(got[0])
            assert (np.diff(ends) > 0).all()
    got = CY.positions(starts, freqs, positions)
    assert got == PY.positions(starts, freqs, positions)


def _both_raise(name: str, *args: object) -> str:
    messages = []
    for kernels in (CY, PY):
        with pytest.raises(SegmentWriteError) as info:
            getattr(kernels, name)(*args)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    return messages[0]


def test_bad_inputs_are_the_same_errors_in_both() -> None:
    s = np.array([0, 2], np.int64)
    norms = np.ones(256, np.float32)
    none = np.zeros(0, np.uint8)
    u32 = lambda *v: np.array(v, np.uint32)  # noqa: E731
    assert "not ascending at 3" in _both_raise("postings", s, u32(5, 3), u32(1, 1), none, norms, 1)
    assert "frequency 0" in _both_raise("postings", s, u32(1, 3), u32(1, 0), none, norms, 1)
    assert "2 term frequencies for 3" in _both_raise(
        "postings", np.array([0, 3], np.int64), u32(1, 2, 3), u32(1, 1), none, norms, 1
    )
    assert "no fieldnorm" in _both_raise(
        "postings", s, u32(1, 9), u32(1, 1), np.zeros(4, np.uint8), norms, 1
    )
    assert "term starts" in _both_raise(
        "postings", np.array([0, 5], np.int64), u32(1), u32(1), none, norms, 0
    )
    assert "unknown postings record" in _both_raise(
        "postings", s, u32(1, 2), u32(1, 1), none, norms, 3
    )
    assert "positions not ascending at 1" in _both_raise(
        "positions", np.array([0, 1], np.int64), u32(2), u32(2, 1)
    )
    assert "do not sum" in _both_raise("positions", np.array([0, 1], np.int64), u32(2), u32(1))
    assert "is not below 1" in _both_raise(
        "invert_tokens", u32(0, 1), np.array([0, 0], np.int64), u32(0, 1), 1
    )
    assert "not a u32 document" in _both_raise(
        "invert_tokens", u32(0), np.array([-1], np.int64), u32(0), 1
    )


@pytest.mark.parametrize("seed", range(6))
def test_inversion_kernel_agrees_with_the_twin(seed: int) -> None:
    rng = random.Random(seed)
    groups = rng.choice([1, 2, 50, 5000])
    ranks, rows, positions = [], [], []
    row = 0
    for _ in range(rng.randrange(0, 4000)):
        row += rng.choice([0, 0, 1, rng.randrange(1, 1 << 20)])
        ranks.append(rng.randrange(groups) if rng.random() < 0.7 else 0)
        same = rows and rows[-1] == row
        positions.append(positions[-1] + rng.randrange(0, 3) if same else rng.randrange(1 << 31))
        rows.append(row)
    args = (np.array(ranks, np.uint32), np.array(rows, np.int64), np.array(positions, np.uint32))
    got = CY.invert_tokens(*args, groups)
    assert got is not None
    assert got == PY.invert_tokens(*args, groups)
    # A model: (rank, row) -> positions in token order.
    model: dict[tuple[int, int], list[int]] = {}
    for rank, r, p in zip(*(a.tolist() for a in args), strict=True):
        model.setdefault((rank, r), []).append(p)
    starts, docs, freqs = (
        np.frombuffer(b, d).tolist() for b, d in zip(got[:3], ("<i8", "<u4", "<u4"), strict=False)
    )
    flat = iter(np.frombuffer(got[3], "<u4").tolist())
    rebuilt = {}
    for rank in range(groups):
        for k in range(starts[rank], starts[rank + 1]):
            rebuilt[(rank, docs[k])] = [next(flat) for _ in range(freqs[k])]
    assert rebuilt == model
    if len(rows) > 1:  # out of order: both say None
        back = args[0][::-1].copy(), args[1][::-1].copy(), args[2][::-1].copy()
        if (np.diff(back[1]) < 0).any():
            assert CY.invert_tokens(*back, groups) is None
            assert PY.invert_tokens(*back, groups) is None


def test_many_blocks_wide_gaps_and_large_frequencies_are_tantivys(
    tmp_path: Path, twin: str
) -> None:
    rng = random.Random(7)
    rows = 3000
    values = []
    gap_rows = set()
    at = 0
    while at < rows:  # gaps of every bit width up to 11
        gap_rows.add(at)
        at += 1 + rng.getrandbits(rng.randrange(0, 12))
    for row in range(rows):
        words = ["all", f"one{row}"]
        if row in gap_rows:
            words.append("gap")
        if row % 7 == 0:
            words += ["rep"] * rng.choice([1, 130, 300, 2000])
        if row == 1234:
            words += ["rep"] * 9000  # positions far past one block
        rng.shuffle(words)
        values.append(" ".join(words))
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("body", tokenizer_name="default", index_option="position")
    builder.add_text_field("ws", tokenizer_name="whitespace", index_option="freq")
    index = tantivy.Index(builder.build(), path=str(tmp_path))
    writer = index.writer(200_000_000, 1)
    for value in values:
        writer.add_document(tantivy.Document(body=value, ws=value))
    writer.commit()
    writer.wait_merging_threads()
    fields = [
        TextField(0, "body", analyzer_for("default"), "position"),  # type: ignore[arg-type]
        TextField(1, "ws", analyzer_for("whitespace"), "freq"),  # type: ignore[arg-type]
    ]
    column = pa.array(values, pa.string())
    got = inverted_files([column, column], fields, rows)
    for ext in ("fieldnorm", "term", "idx", "pos"):
        (path,) = glob.glob(str(tmp_path / f"*.{ext}"))
        assert got[ext] == Path(path).read_bytes(), ext
