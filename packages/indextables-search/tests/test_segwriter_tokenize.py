"""The segment writer's tokens against tantivy-py's own analyzers, both kernel twins.

The oracle is the analyzer every index registers (``schema.tokenizers.analyzer``,
run by tantivy-py): its tokens and positions for each value, over every Unicode
code point in context and on seeded random hostile text. UTF-8 errors are checked
against Python's strict decoder.
"""

from __future__ import annotations

import random
import re
from typing import Any

import pyarrow as pa
import pytest
import tantivy

from indextables.search.schema import tokenizers
from indextables.search.write.segwriter import (
    Analyzer,
    SegmentWriteError,
    Tokens,
    analyzer_for,
    impl,
    tokenize,
    unicodeprobe,
)
from indextables.search.write.segwriter import _unicodetables as tables

EVERY_CODE_POINT = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000]
ANALYZERS = [Analyzer("simple"), Analyzer("whitespace"), Analyzer("raw")]


@pytest.fixture(params=["python", "cython"])
def twin(request: Any, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run the test under each kernel; a missing Cython build fails (never skips)."""
    monkeypatch.setenv(impl.IMPL_ENV, request.param)
    assert impl.kernels().__name__.endswith("_kernels" if request.param == "cython" else "_py")
    return str(request.param)


def _oracle(analyzer: Analyzer) -> tantivy.TextAnalyzer:
    if analyzer.kind == "raw":
        return tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.raw()).build()
    base = "default" if analyzer.kind == "simple" else "whitespace"
    return tokenizers.analyzer(base, analyzer.limit)


def _expected(values: list[str | None], analyzer: Analyzer) -> list[list[tuple[bytes, int]]]:
    oracle = _oracle(analyzer)
    return [
        []
        if value is None
        else [(t.text.encode(), t.position) for t in oracle.pre_tokenize(value).tokens]
        for value in values
    ]


def _by_row(tokens: Tokens, rows: int) -> list[list[tuple[bytes, int]]]:
    out: list[list[tuple[bytes, int]]] = [[] for _ in range(rows)]
    for term, position, row in zip(
        tokens.terms.to_pylist(), tokens.positions.to_pylist(), tokens.rows.to_pylist(), strict=True
    ):
        out[row].append((term, position))
    return out


def _check(values: list[str | None], analyzer: Analyzer) -> None:
    got = _by_row(tokenize(pa.array(values, pa.string()), analyzer, name="body"), len(values))
    want = _expected(values, analyzer)
    for row, (g, w) in enumerate(zip(got, want, strict=True)):
        assert g == w, (row, values[row], analyzer)


def test_unicode_tables_are_tantivy_pys_over_every_code_point() -> None:
    probed = unicodeprobe.probe()
    assert probed.alphanumeric == tables.ALPHANUMERIC
    assert probed.whitespace == tables.WHITESPACE
    assert probed.lowercase == tables.LOWERCASE
    # What the probe relies on: its separator splits in both tokenizers.
    assert (0x20, 0x20) in tables.WHITESPACE
    assert not any(a <= 0x20 <= b for a, b in tables.ALPHANUMERIC)


@pytest.mark.parametrize("analyzer", ANALYZERS, ids=lambda a: a.kind)
def test_every_code_point_in_context_tokenizes_like_tantivy(twin: str, analyzer: Analyzer) -> None:
    # Each code point between an upper-case letter and a lower-case one: whether it
    # splits, and how it lowercases, both show in the tokens.
    values: list[str | None] = [
        "".join("A" + chr(c) + "b" for c in EVERY_CODE_POINT[k : k + 64])
        for k in range(0, len(EVERY_CODE_POINT), 64)
    ]
    _check(values, analyzer)


def _hostile_value(rng: random.Random) -> str:
    pieces = [
        "Hello",
        "WORLD",
        "straße",
        "İstanbul",
        "ΣΑΣ",
        "Ⱥ",
        "ǅ",
        "ﬃ",
        "Ω",
        "K",
        "x̧",
        "١٢٣",
        "\U0001d400\U0001d401",
        "😀",
        "中文字",
        "ｶﾀｶﾅ",
        "Ⅻ",
        "²",
        "_",
        "-",
        ".",
        "'",
        "\x00",
        "\x0b",
        "\x1f",
        "\u00a0",
        "\u2028",
        "\u3000",
        "\u200b",
        "\t",
        "\n",
        "\r",
        "\x0c",
        " ",
        "  ",
        "\u0345",
        "\U0010fffd",
        "\ufeff",
        "ꟊ",
        "\u1c89",
    ]
    parts: list[str] = []
    for _ in range(rng.randrange(0, 12)):
        roll = rng.random()
        if roll < 0.1:
            # Runs around the byte limits, also of characters growing when lowercased.
            parts.append(rng.choice("a\u023a\u0130\u20ac\U0001d400") * rng.randrange(1, 140))
        elif roll < 0.2:
            parts.append(
                "".join(chr(rng.choice(EVERY_CODE_POINT)) for _ in range(rng.randrange(1, 6)))
            )
        else:
            parts.append(rng.choice(pieces))
    return "".join(parts)


@pytest.mark.parametrize("seed", range(6))
def test_random_hostile_text_tokenizes_like_tantivy(twin: str, seed: int) -> None:
    rng = random.Random(seed)
    values: list[str | None] = [
        None if rng.random() < 0.1 else _hostile_value(rng) for _ in range(400)
    ]
    values += ["", None, " ", "a" * 254, "a" * 255, "a" * 256, "Ⱥ" * 85, "Ⱥ" * 84]
    for analyzer in (
        *ANALYZERS,
        Analyzer("simple", rng.randrange(1, 60)),
        Analyzer("whitespace", 1),
    ):
        _check(values, analyzer)


def test_the_length_limit_counts_lowercased_bytes(twin: str) -> None:
    # U+023A is 2 bytes, its lowercase U+2C65 three: 3 of them are 6 bytes, 9 lowercased.
    values: list[str | None] = ["ȺȺȺ b", "aaaaaaaa c"]
    for limit in (7, 9, 10):
        _check(values, Analyzer("simple", limit))


@pytest.mark.parametrize("kind", ["large_string", "string_view", "binary", "sliced", "chunked"])
def test_column_layouts_give_the_plain_arrays_tokens(twin: str, kind: str) -> None:
    rng = random.Random(7)
    values: list[str | None] = [
        None if rng.random() < 0.2 else _hostile_value(rng) for _ in range(90)
    ]
    analyzer = Analyzer("simple")
    if kind == "sliced":
        column: pa.Array | pa.ChunkedArray = pa.array(["x y", *values, "z"]).slice(1, len(values))
    elif kind == "chunked":
        column = pa.chunked_array(
            [pa.array(values[:30]), pa.array([], pa.string()), pa.array(values[30:])]
        )
    elif kind == "binary":
        column = pa.array([None if v is None else v.encode() for v in values], pa.binary())
    else:
        column = pa.array(values, pa.large_string()).cast(getattr(pa, kind)())
    got = _by_row(tokenize(column, analyzer, name="body"), len(values))
    assert got == _expected(values, analyzer)


MALFORMED = [
    b"\x80",
    b"\xbf",
    b"\xc0\x80",
    b"\xc1\xbf",
    b"\xc3",
    b"\xc3(",
    b"\xe0\x80\x80",
    b"\xe2\x82",
    b"\xed\xa0\x80",
    b"\xed\xbf\xbf",
    b"\xf0\x8f\xbf\xbf",
    b"\xf4\x90\x80\x80",
    b"\xf5\x80\x80\x80",
    b"\xff",
    b"\xf0\x9f\x98",
    b"ok \xf0\x9f\x98\x80 \xe2(\xa1",
]


@pytest.mark.parametrize("analyzer", ANALYZERS, ids=lambda a: a.kind)
def test_malformed_utf8_is_our_error_naming_column_row_and_byte(
    twin: str, analyzer: Analyzer
) -> None:
    for bad in MALFORMED:
        value = b"fine words " + bad + b" tail"
        start = None
        try:
            value.decode("utf-8")
        except UnicodeDecodeError as exc:
            start = exc.start
        assert start is not None
        with pytest.raises(SegmentWriteError) as caught:
            tokenize(pa.array([b"good", None, value], pa.binary()), analyzer, name="body")
        assert str(caught.value) == f"column 'body': row 2: not UTF-8 at byte {start}"


def test_random_bytes_are_refused_exactly_when_python_refuses_them(twin: str) -> None:
    rng = random.Random(11)
    for _ in range(3000):
        value = bytes(
            rng.choice([rng.randrange(256), 0xED, 0xF4, 0x80, 0x41])
            for _ in range(rng.randrange(1, 9))
        )
        try:
            text: str | None = value.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text is None:
            with pytest.raises(SegmentWriteError):
                tokenize(pa.array([value], pa.binary()), Analyzer("raw"), name="b")
        else:
            got = tokenize(pa.array([value], pa.binary()), Analyzer("whitespace"), name="b")
            assert _by_row(got, 1) == _expected([text], Analyzer("whitespace"))


@pytest.mark.parametrize(
    ("offsets", "rows", "message"),
    [
        ([0, 2], 2, "2 offsets for 2 rows (expected 3)"),
        ([0, 3, 2], 2, "row 1: offset 2 out of order or past the 4 data bytes"),
        ([0, 2, 5], 2, "row 1: offset 5 out of order or past the 4 data bytes"),
        ([-1, 2, 3], 2, "row 0: offset -1 out of order or past the 4 data bytes"),
    ],
)
def test_broken_offsets_are_our_error(
    twin: str, offsets: list[int], rows: int, message: str
) -> None:
    offset_bytes = pa.array(offsets, pa.int64()).buffers()[1].to_pybytes()
    with pytest.raises(SegmentWriteError, match=re.escape(message)):
        impl.kernels().tokenize(b"abcd", offset_bytes, b"\x01" * rows, 0, 255)


def test_unknown_mode_and_bad_analyzers_are_our_errors(twin: str) -> None:
    offset_bytes = pa.array([0, 0], pa.int64()).buffers()[1].to_pybytes()
    with pytest.raises(SegmentWriteError, match="unknown tokenizer mode 9"):
        impl.kernels().tokenize(b"", offset_bytes, b"\x01", 9, 255)
    with pytest.raises(SegmentWriteError, match="not positive"):
        Analyzer("simple", 0)
    with pytest.raises(SegmentWriteError, match="unknown analyzer kind"):
        Analyzer("en_stem")  # type: ignore[arg-type]
    with pytest.raises(SegmentWriteError, match="column 'n': int64 values cannot be tokenized"):
        tokenize(pa.array([1]), Analyzer("raw"), name="n")


def test_unknown_impl_name_is_our_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(impl.IMPL_ENV, "rust")
    with pytest.raises(SegmentWriteError, match="INDEXTABLES_SEGWRITER_IMPL"):
        impl.kernels()


def test_analyzer_names_map_to_the_registered_analyzers() -> None:
    assert analyzer_for("default") == Analyzer("simple", 255)
    assert analyzer_for("simple") == Analyzer("simple", 255)
    assert analyzer_for("default_limit_40") == Analyzer("simple", 40)
    assert analyzer_for("whitespace_limit_7") == Analyzer("whitespace", 7)
    assert analyzer_for("raw") == Analyzer("raw")
    assert analyzer_for("en_stem") is None
    assert analyzer_for("raw_limit_9") is None
    # Each mapped analyzer tokenizes as the analyzer registered under that name.
    rng = random.Random(3)
    values = [_hostile_value(rng) for _ in range(200)]
    for name in ("default", "default_limit_40", "whitespace", "whitespace_limit_7"):
        mapped = analyzer_for(name)
        assert mapped is not None
        base, limit = tokenizers.split_limit(name)
        assert base is not None
        oracle = tokenizers.analyzer(base, limit)
        got = _by_row(tokenize(pa.array(values), mapped, name="t"), len(values))
        assert got == [
            [(t.text.encode(), t.position) for t in oracle.pre_tokenize(v).tokens] for v in values
        ]


def test_the_cython_kernel_runs_without_the_gil() -> None:
    assert impl.load("cython").NOGIL is True
    assert impl.load("python").NOGIL is False
