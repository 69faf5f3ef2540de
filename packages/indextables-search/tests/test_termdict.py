"""The term-dictionary codec: golden SSTable <-> FST, tantivy-py FST <-> SSTable, both twins."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import struct
from array import array
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
import tantivy
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from indextables.protocol.splitbundle import unbundle_split
from indextables.search.errors import IndexTablesSearchError
from indextables.search.splits.termdict import (
    TermDictError,
    check_sstable_term_file,
    dictionary_kind,
    impl,
    sstable_problems,
    to_fst,
    to_sstable,
)
from indextables.search.splits.termdict._kernels_py import pack_keys
from indextables.search.splits.termdict.composite import split_composite, split_footer
from indextables.search.splits.termdict.fstform import encode_fst_dict
from indextables.search.splits.termdict.model import FieldTerms
from indextables.search.splits.termdict.sstform import encode_sstable_dict, sstable_layout
from indextables.search.splits.termdict.transcode import decode_field

GOLDEN = Path(__file__).resolve().parents[3] / "testdata/golden/indextables_spark_v0.5.4"
GOLDEN_SPLITS = sorted(GOLDEN.rglob("*.split"))
IMPLS = ["python"] if os.environ.get(impl.IMPL_ENV) == "python" else ["cython", "python"]


def _arrays(cols: tuple[list[int], ...]) -> tuple[array[int], ...]:
    return tuple(array("Q", col) for col in cols)


def _fst(module: ModuleType, keys: list[bytes]) -> bytes:
    return module.fst_build(*pack_keys(keys))  # type: ignore[no-any-return]


def _sst(module: ModuleType, keys: list[bytes], cols: tuple[list[int], ...]) -> bytes:
    body, _blocks = module.sst_encode(*pack_keys(keys), _arrays(cols), None)
    return body  # type: ignore[no-any-return]


@pytest.fixture(params=IMPLS)
def twin(request: pytest.FixtureRequest) -> Iterator[ModuleType]:
    """Run the test with one kernel implementation; every codec test runs with both."""
    with impl.using(request.param) as module:
        yield module


def _term_files(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.term"))


def _golden_dir(split: Path, dest: Path) -> Path:
    unbundle_split(split.read_bytes(), dest, path=str(split))
    return dest


def _fields(data: bytes) -> list[bytes]:
    body, _footer = split_footer(data)
    return [blob.data for blob in split_composite(body)]


def _index(
    directory: Path, values: list[bytes] | list[str], *, kind: str = "bytes", extra_docs: int = 0
) -> Path:
    builder = tantivy.SchemaBuilder()
    if kind == "bytes":
        builder.add_bytes_field("k", indexed=True, stored=False)
    else:
        builder.add_text_field("k", stored=False, tokenizer_name="raw")
    builder.add_text_field("body", stored=True)
    schema = builder.build()
    index = tantivy.Index(schema, path=str(directory))
    writer = index.writer(50_000_000, 1)
    for i, value in enumerate(values):
        doc = tantivy.Document()
        if kind == "bytes":
            doc.add_bytes("k", value)  # type: ignore[arg-type]
        else:
            doc.add_text("k", value)  # type: ignore[arg-type]
        doc.add_text("body", f"w{i % 97} shared")
        writer.add_document(doc)
    for _ in range(extra_docs):
        writer.add_document(tantivy.Document(body="no key here"))
    writer.commit()
    writer.wait_merging_threads()
    return directory


# --------------------------------------------------------------------------- golden (reference)


def test_there_are_golden_splits() -> None:
    assert len(GOLDEN_SPLITS) >= 100


@pytest.mark.parametrize("split", GOLDEN_SPLITS, ids=lambda p: str(p.relative_to(GOLDEN)))
def test_golden_sstable_to_fst_to_sstable_is_identical(
    twin: ModuleType, split: Path, tmp_path: Path
) -> None:
    (term,) = _term_files(_golden_dir(split, tmp_path))
    data = term.read_bytes()
    assert dictionary_kind(data) == "sstable"
    check_sstable_term_file(data, name=str(split))
    fst = to_fst(data)
    assert dictionary_kind(fst) == "fst"
    assert to_sstable(fst) == data
    for before, after in zip(_fields(data), _fields(fst), strict=True):
        assert decode_field(before) == decode_field(after)


def test_golden_zstd_blocks_are_reproduced(twin: ModuleType, tmp_path: Path) -> None:
    compressed = 0
    for number, split in enumerate(GOLDEN_SPLITS):
        (term,) = _term_files(_golden_dir(split, tmp_path / str(number)))
        for blob in _fields(term.read_bytes()):
            layout = sstable_layout(blob)
            from indextables.search.splits.termdict.sstform import _decompress

            _data, _ends, _cols, blocks = twin.sst_decode(
                layout.main, layout.index_offset, _decompress
            )
            compressed += sum(1 for block in blocks if block[3])
    assert compressed >= 2  # and test above proves they re-encode byte for byte


def _field_names(meta: dict[str, object]) -> dict[int, tuple[str, str]]:
    schema = meta["schema"]
    assert isinstance(schema, list)
    return {i: (entry["name"], entry["type"]) for i, entry in enumerate(schema)}


@pytest.mark.parametrize("split", GOLDEN_SPLITS[::9], ids=lambda p: str(p.relative_to(GOLDEN)))
def test_golden_split_with_fst_dictionaries_is_searchable_in_tantivy_py(
    twin: ModuleType, split: Path, tmp_path: Path
) -> None:
    directory = _golden_dir(split, tmp_path)
    (term,) = _term_files(directory)
    original = term.read_bytes()
    names = _field_names(json.loads((directory / "meta.json").read_text()))
    body, _footer = split_footer(original)
    expected = []
    for blob in split_composite(body):
        name, kind = names[blob.field]
        if kind == "text":
            terms = decode_field(blob.data)
            expected += [
                (name, key.decode(), freq)
                for key, freq in zip(terms.keys, terms.doc_freq, strict=True)
            ]
    assert expected
    before = tantivy.Index.open(str(directory))
    with pytest.raises(Exception, match=r"(?i)dictionary"):
        before.searcher().search(tantivy.Query.term_query(before.schema, *expected[0][:2]), 1)
    # never truncate a file tantivy has mapped (SIGBUS): write a new one, rename over
    staged = term.with_suffix(".rewrite")
    staged.write_bytes(to_fst(original))
    os.replace(staged, term)
    index = tantivy.Index.open(str(directory))
    searcher = index.searcher()
    checked = 0
    for name, value, doc_freq in expected:
        query = tantivy.Query.term_query(index.schema, name, value)
        assert searcher.search(query, 1).count == doc_freq, (name, value)
        checked += 1
    assert checked > 0


# --------------------------------------------------------------------------- tantivy-py (FST)


@pytest.mark.parametrize("count", [1, 255, 256, 257, 1000])
def test_tantivy_py_fst_to_sstable_to_fst_is_identical(
    twin: ModuleType, count: int, tmp_path: Path
) -> None:
    values = [f"term{(i * 2654435761) % 2**32:08x}" for i in range(count)]
    (term,) = _term_files(_index(tmp_path, values, kind="text"))
    data = term.read_bytes()
    assert dictionary_kind(data) == "fst"
    sstable = to_sstable(data)
    check_sstable_term_file(sstable)
    assert to_fst(sstable) == data
    assert to_sstable(to_fst(sstable)) == sstable


def test_index_with_no_indexed_terms_round_trips(twin: ModuleType, tmp_path: Path) -> None:
    builder = tantivy.SchemaBuilder()
    builder.add_integer_field("n", stored=True, indexed=False)
    index = tantivy.Index(builder.build(), path=str(tmp_path))
    writer = index.writer(15_000_000, 1)
    writer.add_document(tantivy.Document(n=1))
    writer.commit()
    writer.wait_merging_threads()
    (term,) = _term_files(tmp_path)
    data = term.read_bytes()
    assert _fields(data) == []
    assert to_sstable(data) == data == to_fst(data)


def test_empty_field_dictionary_in_both_forms(twin: ModuleType) -> None:
    empty = FieldTerms.from_keys([], [[], [], [], [], []])
    fst = encode_fst_dict(empty)
    # header, one AnyTrans root with no transitions (pack sizes, ntrans 0, state), count, root
    node = bytes([0, 0, 0])
    tis = (0).to_bytes(8, "little") * 2
    expected_fst = (
        (2).to_bytes(8, "little") + bytes(8) + node + bytes(8) + (18).to_bytes(8, "little")
    )
    assert fst == expected_fst + tis + struct.pack("<QII", 16, 1, 1)
    sstable = encode_sstable_dict(empty)
    assert sstable == bytes(4) + struct.pack("<QQQII", 0, 4, 0, 3, 2)
    assert sstable_problems(sstable) == []
    assert decode_field(sstable) == decode_field(fst) == empty


def test_many_terms_use_several_store_blocks_and_index_chunks(
    twin: ModuleType, tmp_path: Path
) -> None:
    values = [f"{(i * 2654435761) % 2**40:010x}" for i in range(120_000)]
    (term,) = _term_files(_index(tmp_path, values, kind="text"))
    data = term.read_bytes()
    sstable = to_sstable(data)
    check_sstable_term_file(sstable)
    assert to_fst(sstable) == data
    biggest = max(_fields(sstable), key=len)
    layout = sstable_layout(biggest)
    from indextables.search.splits.termdict.blockaddr import decode_block_addrs

    blocks = decode_block_addrs(layout.block_store)
    assert len(blocks) > 128  # two BlockAddrStore chunks
    assert len(decode_field(biggest)) == 120_000  # 469 TermInfoStore blocks


_SPECIAL = [
    [b"", b"\xff", b"\xff\xff", b"\xff\xff\x00", b"a" * 40, b"a" * 20 + b"b" * 20],
    [bytes([i]) for i in range(256)],  # a root with 256 transitions
    [b"p" + bytes([i]) for i in range(0, 256, 7)],  # 37 transitions: the 256-byte index
    [b"x" * 30 + bytes([i]) * 17 for i in range(40)],  # keep and add >= 16
]


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(values=st.sets(st.binary(max_size=24), min_size=1, max_size=300))
@example(values=set(_SPECIAL[0]))
@example(values=set(_SPECIAL[1]))
@example(values=set(_SPECIAL[2]))
@example(values=set(_SPECIAL[3]))
def test_any_byte_keys_round_trip_like_tantivy(
    twin: ModuleType, tmp_path: Path, values: set[bytes]
) -> None:
    directory = tmp_path / f"ix{abs(hash(frozenset(values)))}"
    directory.mkdir()
    try:
        (term,) = _term_files(_index(directory, sorted(values)))
        data = term.read_bytes()
        sstable = to_sstable(data)
        check_sstable_term_file(sstable)
        assert to_fst(sstable) == data
        fields = _fields(sstable)
        assert sorted(values) in [decode_field(blob).keys for blob in fields]
    finally:
        shutil.rmtree(directory)


def test_rewritten_index_answers_every_term_query_the_same(
    twin: ModuleType, tmp_path: Path
) -> None:
    source = tmp_path / "source"
    source.mkdir()
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("body", stored=True)
    schema = builder.build()
    index = tantivy.Index(schema, path=str(source))
    writer = index.writer(50_000_000, 1)
    words = [f"w{i}" for i in range(600)]
    for i in range(3000):
        writer.add_document(
            tantivy.Document(body=" ".join(words[(i * k) % 600] for k in range(1, 8)))
        )
    writer.commit()
    writer.wait_merging_threads()
    copy = tmp_path / "copy"
    shutil.copytree(source, copy)
    for term in _term_files(copy):
        sstable = to_sstable(term.read_bytes())
        assert dictionary_kind(sstable) == "sstable"
        term.write_bytes(to_fst(sstable))
    index.reload()
    rewritten = tantivy.Index.open(str(copy))
    for word in words:
        hits = [
            sorted((a.segment_ord, a.doc) for _s, a in ix.searcher().search(q, 5000).hits)
            for ix in (index, rewritten)
            for q in [tantivy.Query.term_query(ix.schema, "body", word)]
        ]
        assert hits[0], word
        assert hits[0] == hits[1], word


# --------------------------------------------------------------------------- errors and twins


def test_errors_belong_to_the_package_root() -> None:
    assert issubclass(TermDictError, IndexTablesSearchError)


def test_bad_footer_crc_is_refused(twin: ModuleType, tmp_path: Path) -> None:
    (term,) = _term_files(_index(tmp_path, [b"a", b"b"]))
    data = bytearray(term.read_bytes())
    data[0] ^= 0xFF
    with pytest.raises(TermDictError, match="CRC"):
        to_sstable(bytes(data))


def test_footer_version_is_kept_and_crc_recomputed(twin: ModuleType, tmp_path: Path) -> None:
    (term,) = _term_files(_index(tmp_path, [b"a", b"b"]))
    data = term.read_bytes()
    sstable = to_sstable(data)
    body, footer = split_footer(sstable)  # checks the CRC
    assert json.loads(footer)["version"] == json.loads(split_footer(data)[1])["version"]
    assert body != split_footer(data)[0]


_DAMAGE_KEYS = [f"k{i:04d}{'z' * (i % 23)}".encode() for i in range(700)]
_DAMAGE_COLS = ([1] * 700, list(range(0, 7000, 10)), [10] * 700, [0] * 700, [0] * 700)


@functools.cache
def _sound_blobs(name: str) -> tuple[bytes, bytes, bytes]:
    module = impl.load(name)  # type: ignore[arg-type]
    tis = module.tis_encode(_arrays(_DAMAGE_COLS))
    return _fst(module, _DAMAGE_KEYS), tis, _sst(module, _DAMAGE_KEYS, _DAMAGE_COLS) + bytes(4)


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    position=st.integers(min_value=0),
    value=st.integers(min_value=0, max_value=255),
    cut=st.booleans(),
)
def test_damaged_dictionaries_fail_cleanly(
    twin: ModuleType, position: int, value: int, cut: bool
) -> None:
    fst, tis, sst = _sound_blobs("cython" if twin.__name__.endswith("_kernels") else "python")
    decoders = [
        (fst, twin.fst_entries),
        (tis, twin.tis_decode),
        (sst, lambda data: twin.sst_decode(data, len(data), lambda payload: payload)),
    ]
    for blob, decode in decoders:
        damaged = bytearray(blob)
        at = position % len(damaged)
        if cut:
            del damaged[at:]
        else:
            damaged[at] = value
        with contextlib.suppress(
            TermDictError
        ):  # refusing is fine; other errors or crashes are not
            decode(bytes(damaged))


def test_twins_write_the_same_bytes() -> None:
    keys = sorted({f"{(i * 7919) % 100_003:x}".encode() for i in range(5000)})
    n = len(keys)
    cols = ([i % 5 + 1 for i in range(n)], [3 * i for i in range(n)], [3] * n, [0] * n, [0] * n)
    outputs = []
    for name in IMPLS:
        with impl.using(name) as module:  # type: ignore[arg-type]
            outputs.append(
                (
                    _fst(module, keys),
                    module.tis_encode(_arrays(cols)),
                    _sst(module, keys, cols),
                )
            )
    assert all(output == outputs[0] for output in outputs)


def test_cython_twin_is_loaded_unless_python_was_asked_for() -> None:
    assert (os.environ.get(impl.IMPL_ENV) != "python") == impl.CYTHON_MODULE


def test_old_fst_format_version_is_refused(twin: ModuleType) -> None:
    fst = _fst(twin, [b"a", b"b"])
    assert twin.fst_entries(fst)[0] == b"ab"
    with pytest.raises(TermDictError, match="version 1 is not supported"):
        twin.fst_entries((1).to_bytes(8, "little") + fst[8:])


@pytest.mark.parametrize(
    "values",
    [[1, 2, 3], [0, 2, 3], [0, 1, 1], [0, 1, 2**64 - 1], [0, 2**64 - 1, 0], [0, 1, 0]],
)
def test_fst_values_other_than_the_term_ordinals_are_refused(
    twin: ModuleType, values: list[int]
) -> None:
    # The check runs in Arrow over the ordinals' buffer (wrapping u64 steps): every
    # sequence that is not exactly 0..n-1 fails it, wrap-arounds included.
    keys = [b"a", b"b", b"c"]
    columns = [[1, 1, 1], [0, 4, 8], [4, 4, 4], [0, 2, 4], [2, 2, 2]]
    sound = encode_fst_dict(FieldTerms.from_keys(keys, columns))
    fst = _fst(twin, keys)
    assert decode_field(sound).key_ends == array("Q", [1, 2, 3])
    changed = twin.fst_build(*pack_keys(keys), array("Q", values)) + sound[len(fst) :]
    with pytest.raises(TermDictError, match="not the term ordinals"):
        decode_field(changed)
