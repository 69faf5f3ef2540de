"""Spark ``LIKE`` patterns read into pieces: literal runs, ``%`` and ``_``.

Spark's escape character is the backslash: ``\\%``, ``\\_`` and ``\\\\`` stand for
themselves, any other escape (or a trailing backslash) is an error in Spark, and
here a pattern without pieces. A ``_`` is one character (a code point), a ``%``
any run of characters, line breaks included. Runs of ``%`` are merged into one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

__all__ = ["ANY", "ONE", "Piece", "like_pieces", "like_python_regex", "like_shape"]

ANY: Final = "%"
ONE: Final = "_"


@dataclass(frozen=True, slots=True)
class Piece:
    """One piece of a pattern: ``kind`` is ``%``, ``_`` or ``text`` (then ``text`` holds
    the literal characters, escapes resolved)."""

    kind: str
    text: str = ""


def like_pieces(pattern: str) -> tuple[Piece, ...] | None:
    """The pieces of ``pattern`` (None: an escape Spark refuses)."""
    pieces: list[Piece] = []
    literal: list[str] = []

    def flush() -> None:
        if literal:
            pieces.append(Piece("text", "".join(literal)))
            literal.clear()

    i, end = 0, len(pattern)
    while i < end:
        c = pattern[i]
        if c == "\\":
            if i + 1 == end or pattern[i + 1] not in "%_\\":
                return None
            literal.append(pattern[i + 1])
            i += 2
            continue
        if c in (ANY, ONE):
            flush()
            if not (c == ANY and pieces and pieces[-1].kind == ANY):
                pieces.append(Piece(c))
        else:
            literal.append(c)
        i += 1
    flush()
    return tuple(pieces)


def like_shape(pieces: tuple[Piece, ...]) -> tuple[str, str] | None:
    """``("suffix", text)`` for ``%text``, ``("contains", text)`` for ``%text%``, else None."""
    kinds = tuple(p.kind for p in pieces)
    if kinds == (ANY, "text"):
        return "suffix", pieces[1].text
    if kinds == (ANY, "text", ANY):
        return "contains", pieces[1].text
    return None


def like_python_regex(pieces: tuple[Piece, ...]) -> re.Pattern[str]:
    """A Python regex whose ``fullmatch`` keeps exactly the strings the pattern of
    ``pieces`` keeps: ``%`` any run of code points (line breaks too), ``_`` one code
    point, each literal run as itself."""
    parts = [
        "(?s:.*)" if p.kind == ANY else "(?s:.)" if p.kind == ONE else re.escape(p.text)
        for p in pieces
    ]
    return re.compile("".join(parts))
