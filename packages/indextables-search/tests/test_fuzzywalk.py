"""The pruned FST walk of fuzzy terms finds exactly the terms within the distance.

Oracle: rapidfuzz's optimal string alignment distance over every key (the listing
the walk replaces), on random dictionaries of hostile terms (unicode of 1 to 4
UTF-8 bytes, combining marks, repeats, transposition-heavy strings, long keys)
with both FST kernel twins building the FST.
"""

from __future__ import annotations

import random

import pytest
from rapidfuzz.distance import OSA

from indextables.search.splits.termdict import _kernels_py, impl
from indextables.search.splits.termdict.fuzzywalk import fst_near_terms, merged_near_terms

ALPHABET = "abcab\u00e9\u0301\u0130i\u4e2d\U0001f600zZ09"


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 7)))


def _fst(kernels, terms: list[str]) -> bytes:
    keys = sorted({t.encode("utf-8") for t in terms})
    key_data, key_ends = _kernels_py.pack_keys(keys)
    return kernels.fst_build(key_data, key_ends)


def _expected(terms: list[str], term: str, distance: int) -> list[str]:
    keys = sorted({t.encode("utf-8") for t in terms})
    return [k.decode() for k in keys if OSA.distance(term, k.decode()) <= distance]


@pytest.mark.parametrize("twin", ["python", "cython"])
def test_walk_equals_every_key_measured(twin):
    kernels = impl.load(twin)
    with impl.using(twin):
        _check_random_dictionaries(kernels)


def _check_random_dictionaries(kernels) -> None:
    rng = random.Random(20261203)
    for _ in range(150):
        terms = [_word(rng) for _ in range(rng.randint(0, 60))]
        terms += [t[::-1] for t in terms[:5]] + ["x" * 255]
        fst = _fst(kernels, terms)
        for _ in range(4):
            term = rng.choice(terms) if rng.random() < 0.6 else _word(rng)
            if rng.random() < 0.3 and len(term) > 1:
                at = rng.randrange(len(term) - 1)
                term = term[:at] + term[at + 1] + term[at] + term[at + 2 :]
            distance = rng.choice([0, 1, 2])
            assert fst_near_terms(fst, term, distance, 10_000) == _expected(
                terms, term, distance
            ), (terms, term, distance)


@pytest.mark.parametrize("twin", ["python", "cython"])
def test_walk_stops_one_past_the_limit(twin):
    with impl.using(twin) as kernels:
        fst = _fst(kernels, [f"ab{c}" for c in "cdefghij"])
        assert fst_near_terms(fst, "abz", 1, 3) == ["abc", "abd", "abe", "abf"]
        assert len(fst_near_terms(fst, "abz", 1, 100)) == 8


@pytest.mark.parametrize("twin", ["python", "cython"])
def test_transposition_counts_one_edit(twin):
    with impl.using(twin) as kernels:
        fst = _fst(kernels, ["needlezq", "eneedlzq", "ndeelezq"])
        assert fst_near_terms(fst, "enedlezq", 1, 10) == ["needlezq"]
        assert fst_near_terms(fst, "needlezq", 0, 10) == ["needlezq"]


@pytest.mark.parametrize("twin", ["python", "cython"])
def test_keys_that_are_not_utf8_are_never_near(twin):
    with impl.using(twin) as kernels:
        keys = sorted(
            [b"ab", b"a\xff", b"a\xc0\x80", b"a\xed\xa0\x80", b"a\xf4\x90\x80\x80", b"ac"]
        )
        key_data, key_ends = _kernels_py.pack_keys(keys)
        fst = kernels.fst_build(key_data, key_ends)
        assert kernels.fst_near(fst, "ab", 1, 10) == [b"ab", b"ac"]
        assert kernels.fst_near(memoryview(fst), "a\u00e9", 1, 10) == [b"ab", b"ac"]


@pytest.mark.parametrize("twin", ["python", "cython"])
def test_a_damaged_fst_is_a_typed_error(twin):
    from indextables.search.splits.termdict import TermDictError

    with impl.using(twin) as kernels:
        fst = bytearray(_fst(kernels, ["alpha", "beta", "gamma"]))
        for at in range(8, len(fst) - 16):
            damaged = bytearray(fst)
            damaged[at] ^= 0xFF
            try:
                found = kernels.fst_near(bytes(damaged), "beta", 2, 10)
            except TermDictError:
                continue
            assert all(isinstance(key, bytes) for key in found)


def test_merged_parts_are_sorted_by_bytes_without_repeats():
    assert merged_near_terms([["b", "\u00e9"], ["a", "b", "Z"]], 10) == ["Z", "a", "b", "\u00e9"]
    assert merged_near_terms([["c", "a"], ["b"]], 1) == ["a", "b"]


def test_engine_fuzzy_search_walks_the_split_and_equals_a_model(tmp_path, monkeypatch):
    """Through the engine: a fuzzy term over a text and an exact column of random
    words gives the rows an OSA model over each row's tokens gives, and the split's
    FST walk (not the term listing) answered it."""
    import pyarrow as pa

    from indextables.search import open_table, write_table
    from indextables.search.splits import nearterms

    rng = random.Random(7)
    words = ["".join(rng.choice("abcdez") for _ in range(rng.randint(1, 6))) for _ in range(300)]
    rows = pa.table(
        {
            "id": pa.array(range(len(words)), pa.int64()),
            "message": pa.array([f"{w} tail{i % 7}" for i, w in enumerate(words)]),
            "tag": pa.array(words),
        }
    )
    uri = str(tmp_path / "t")
    write_table(
        uri, rows.slice(0, 150), options={"spark.indextables.indexing.typemap.message": "text"}
    )
    write_table(
        uri, rows.slice(150), options={"spark.indextables.indexing.typemap.message": "text"}
    )
    table = open_table(uri)
    walked: list[str] = []
    real = nearterms.split_near_terms

    def counting(directory, field, term, distance, most):
        walked.append(field)
        return real(directory, field, term, distance, most)

    monkeypatch.setattr(nearterms, "split_near_terms", counting)
    for probe in ["abc", "zzd", "ea", "bad", "dcba"]:
        for distance in (1, 2):
            for column in ("message", "tag"):
                got = sorted(table.search(query=f"{column}:{probe}~{distance}")["id"].to_pylist())
                want = [
                    i
                    for i, w in enumerate(words)
                    if any(
                        OSA.distance(probe, token) <= distance
                        for token in ([w, f"tail{i % 7}"] if column == "message" else [w])
                    )
                ]
                assert got == want, (column, probe, distance)
    assert set(walked) == {"message", "tag"}
