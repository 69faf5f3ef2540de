"""Spark's ``RLIKE`` patterns (Java regexes, a *find*) rewritten where the dialects agree.

Spark answers ``s RLIKE 'p'`` with ``Pattern.compile(p).matcher(s).find()``: true when
the Java regex matches anywhere in ``s``. Tantivy's regex (Rust's dialect) matches
whole terms, and the row filter uses Arrow's RE2. :func:`java_regex` reads a pattern
of the subset where the three agree once rewritten, and writes it in one form both
Rust and RE2 read the same way:

- literal characters, ``\\Q...\\E`` and escaped punctuation; ``\\t \\n \\r \\f``,
  ``\\xhh``, ``\\x{h...}``, ``\\uhhhh``;
- ``.`` as Java reads it without flags (any code point but ``\\n \\r \\u0085 \\u2028
  \\u2029``); ``\\d \\w \\s`` and their negations as Java's ASCII classes;
- classes ``[...]`` and ``[^...]`` of characters, ranges and ``\\d \\w \\s``;
- groups ``(...)`` and ``(?:...)``, ``|``, ``* + ?`` and ``{n}``, ``{n,}``, ``{n,m}``
  (``m`` at most :data:`MAX_REPEAT`), lazy forms (``*?``: the same strings match);
- ``^`` first and ``$`` last in a pattern without a top-level ``|``: Java's ``$``
  also matches before one final line terminator, written out here.

Anything else (back-references, lookaround, inline flags, named groups, possessive
quantifiers, ``\\b``, ``\\p{..}``, nested or intersected classes, anchors elsewhere)
is :class:`Unsupported`; a pattern Java itself refuses (an unclosed group or class,
a dangling quantifier, an unknown escape) is :class:`Invalid`. The scan is one loop
over the pattern (no recursion; nesting is bounded by :data:`MAX_DEPTH`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

__all__ = [
    "MAX_DEPTH",
    "MAX_REPEAT",
    "Invalid",
    "JavaRegex",
    "Unsupported",
    "java_regex",
    "rlike_tantivy_regex",
]

MAX_DEPTH: Final = 100
"""The deepest nesting of groups read (deeper: :class:`Unsupported`)."""
MAX_REPEAT: Final = 1000
"""The largest repetition count read (RE2's limit as well)."""

# Java's line terminators: what ``.`` does not match and what ``$`` may precede.
_DOT: Final = r"[^\n\r\x{85}\x{2028}\x{2029}]"
_FINAL_TERMINATOR: Final = r"(?:\r\n|[\n\r\x{85}\x{2028}\x{2029}])?"
# Java's predefined classes without UNICODE_CHARACTER_CLASS: ASCII only (Rust's are Unicode).
_CLASS_ITEMS: Final = {"d": "0-9", "w": "0-9A-Za-z_", "s": r"\t\n\x{b}\f\r "}
_CONTROL: Final = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_HEX: Final = frozenset("0123456789abcdefABCDEF")
# ``\x{h..}`` as written by this module (a literal backslash is itself ``\x{5c}``).
_HEX_BRACED: Final = re.compile(r"\\x\{([0-9a-f]{1,8})\}")


class Invalid(ValueError):
    """A pattern Java refuses (Spark raises on it too)."""


class Unsupported(ValueError):
    """A pattern Java reads but this rewriting does not (its meaning differs elsewhere)."""


@dataclass(frozen=True, slots=True)
class JavaRegex:
    """A Java pattern of the supported subset, rewritten.

    Attributes:
        body: the pattern in Rust/RE2 syntax, anchors taken off.
        start: the pattern began with ``^`` (matches only at the start).
        end: the pattern ended with ``$`` (at the end, or before one final terminator).
    """

    body: str
    start: bool
    end: bool

    def find_regex(self) -> str:
        """An RE2 regex whose unanchored search answers as Java's ``find`` does."""
        head = r"\A" if self.start else ""
        tail = _FINAL_TERMINATOR + r"\z" if self.end else ""
        return f"{head}(?:{self.body}){tail}"

    def whole_regex(self) -> str:
        """A Tantivy regex (matched against whole terms) keeping the terms ``find`` keeps."""
        head = "" if self.start else "(?s:.*)"
        tail = _FINAL_TERMINATOR if self.end else "(?s:.*)"
        return f"{head}(?:{self.body}){tail}"

    def python_whole_regex(self) -> re.Pattern[str]:
        """:meth:`whole_regex` in Python's ``re`` syntax (each ``\\x{h..}`` written
        ``\\Uhhhhhhhh``; the rest reads alike), for ``fullmatch`` over whole terms.

        Raises:
            Unsupported: Python's ``re`` refuses the rewritten pattern.
        """
        written = _HEX_BRACED.sub(lambda m: f"\\U{int(m.group(1), 16):08x}", self.whole_regex())
        try:
            return re.compile(written)
        except (re.error, OverflowError, RecursionError) as error:
            raise Unsupported(f"Python's re refuses the rewritten pattern: {error}") from None


def rlike_tantivy_regex(pattern: str) -> str | None:
    """The Tantivy regex of ``s RLIKE pattern`` over whole terms (None: not rewritten)."""
    try:
        return java_regex(pattern).whole_regex()
    except ValueError:
        return None


def _literal(c: str) -> str:
    if c.isascii() and c.isalnum():
        return c
    if 0xD800 <= ord(c) <= 0xDFFF:
        raise Unsupported("a lone surrogate")
    return f"\\x{{{ord(c):x}}}"


class _Scan:
    def __init__(self, pattern: str) -> None:
        self.p = pattern
        self.i = 0
        self.out: list[str] = []

    def invalid(self, what: str) -> Invalid:
        return Invalid(f"{what} at index {self.i}")

    def unsupported(self, what: str) -> Unsupported:
        return Unsupported(f"{what} at index {self.i}")

    def hex_escape(self, kind: str) -> str:
        """The character of ``\\xhh``, ``\\x{h..}`` or ``\\uhhhh`` (``self.i``: after the
        letter)."""
        p = self.p
        if kind == "x" and p.startswith("{", self.i):
            close = p.find("}", self.i)
            digits = p[self.i + 1 : close] if close > 0 else ""
            self.i = close + 1 if close > 0 else len(p)
        else:
            count = 2 if kind == "x" else 4
            digits = p[self.i : self.i + count]
            self.i += count
            if len(digits) != count:
                digits = ""
        if not digits or len(digits) > 8 or not set(digits) <= _HEX:
            raise self.invalid(f"a malformed \\{kind} escape")
        value = int(digits, 16)
        if value > 0x10FFFF:
            raise self.invalid(f"\\{kind} beyond U+10FFFF")
        return chr(value)

    def escape(self, in_class: bool) -> str:
        """The rewritten escape at ``self.i`` (a backslash), ``self.i`` moved past it."""
        p = self.p
        if self.i + 1 >= len(p):
            raise self.invalid("a trailing backslash")
        c = p[self.i + 1]
        self.i += 2
        lower = c.lower()
        if lower in _CLASS_ITEMS:
            items = _CLASS_ITEMS[lower]
            if c.islower():
                return items if in_class else f"[{items}]"
            if in_class:
                raise self.unsupported(f"\\{c} inside a class")
            return f"[^{items}]"
        if c in _CONTROL:
            return _literal(_CONTROL[c])
        if c in "xu":
            return _literal(self.hex_escape(c))
        if c.isascii() and not c.isalnum():
            return _literal(c)
        raise self.unsupported(f"the escape \\{c}")

    def quoted(self) -> None:
        """``\\Q...\\E`` (``self.i`` at the backslash): each character a literal atom."""
        end = self.p.find("\\E", self.i + 2)
        stop = len(self.p) if end < 0 else end
        self.out.extend(_literal(c) for c in self.p[self.i + 2 : stop])
        self.i = stop if end < 0 else end + 2

    def char_class(self) -> str:
        """The class at ``self.i`` (its ``[``), ``self.i`` moved past its ``]``."""
        p, n = self.p, len(self.p)
        self.i += 1
        parts = ["["]
        if self.i < n and p[self.i] == "^":
            parts.append("^")
            self.i += 1
        if self.i < n and p[self.i] == "]":
            raise self.unsupported("a ] first in a class")
        items = 0
        while True:
            if self.i >= n:
                raise self.invalid("an unclosed class")
            c = p[self.i]
            if c == "]":
                self.i += 1
                break
            if c == "[":
                raise self.unsupported("a nested class")
            if c == "&" and p.startswith("&&", self.i):
                raise self.unsupported("a class intersection")
            if c == "\\" and p.startswith("\\Q", self.i):
                raise self.unsupported("\\Q inside a class")
            low, single = self.class_atom()
            if single is not None and p.startswith("-", self.i) and self.i + 1 < n:
                after = p[self.i + 1]
                if after != "]":
                    self.i += 1
                    if after == "[":
                        raise self.unsupported("a nested class")
                    high_text, high = self.class_atom()
                    if high is None:
                        raise self.invalid("a range ending in a class")
                    if ord(high) < ord(single):
                        raise self.invalid("a range out of order")
                    parts.append(f"{low}-{high_text}")
                    items += 1
                    continue
            parts.append(low)
            items += 1
        if items == 0:
            raise self.invalid("an empty class")
        parts.append("]")
        return "".join(parts)

    def class_atom(self) -> tuple[str, str | None]:
        """One item of a class: its text, and its character when it is a single one."""
        c = self.p[self.i]
        if c != "\\":
            self.i += 1
            return _literal(c), c
        nxt = self.p[self.i + 1] if self.i + 1 < len(self.p) else ""
        if nxt in _CONTROL:
            self.i += 2
            return _literal(_CONTROL[nxt]), _CONTROL[nxt]
        if nxt in ("x", "u"):
            self.i += 2
            char = self.hex_escape(nxt)
            return _literal(char), char
        if nxt.isascii() and nxt and not nxt.isalnum():
            self.i += 2
            return _literal(nxt), nxt
        return self.escape(in_class=True), None

    def repeat(self) -> str:
        """``{n}``, ``{n,}`` or ``{n,m}`` at ``self.i``, checked and moved past."""
        p = self.p
        close = p.find("}", self.i)
        inside = p[self.i + 1 : close] if close > 0 else ""
        low, comma, high = inside.partition(",")
        if not low.isdigit() or (high and not high.isdigit()) or not low.isascii():
            raise self.invalid("an illegal repetition")
        if not high.isascii():
            raise self.invalid("an illegal repetition")
        if int(low) > MAX_REPEAT or (high and int(high) > MAX_REPEAT):
            raise self.unsupported(f"a repetition beyond {MAX_REPEAT}")
        if high and int(high) < int(low):
            raise self.invalid("a repetition range out of order")
        self.i = close + 1
        return "{" + low + comma + high + "}"

    def run(self) -> JavaRegex:
        p, n = self.p, len(self.p)
        start = p.startswith("^")
        end = False
        limit = n
        self.i = 1 if start else 0
        depth = 0
        top_alternation = False
        atom = False  # a quantifier may follow
        while self.i < limit:
            c = p[self.i]
            if c == "\\" and p.startswith("\\Q", self.i):
                self.quoted()
                atom = True
                continue
            if c == "\\":
                self.out.append(self.escape(in_class=False))
                atom = True
                continue
            if c == "[":
                self.out.append(self.char_class())
                atom = True
                continue
            if c == "(":
                if p.startswith("(?", self.i) and not p.startswith("(?:", self.i):
                    raise self.unsupported("a group with flags, a name or a lookaround")
                depth += 1
                if depth > MAX_DEPTH:
                    raise self.unsupported(f"groups nested deeper than {MAX_DEPTH}")
                self.i += 3 if p.startswith("(?:", self.i) else 1
                self.out.append("(?:")
                atom = False
                continue
            if c == ")":
                if depth == 0:
                    raise self.invalid("an unmatched )")
                depth -= 1
                self.i += 1
                self.out.append(")")
                atom = True
                continue
            if c == "|":
                top_alternation = top_alternation or depth == 0
                self.i += 1
                self.out.append("|")
                atom = False
                continue
            if c in "*+?{":
                if not atom:
                    raise self.invalid(f"a dangling {c}")
                if c == "{":
                    self.out.append(self.repeat())
                else:
                    self.out.append(c)
                    self.i += 1
                if self.i < limit and p[self.i] == "+":
                    raise self.unsupported("a possessive quantifier")
                if self.i < limit and p[self.i] == "?":
                    self.i += 1  # lazy: the same strings match
                if self.i < limit and p[self.i] in "*+?{":
                    raise self.unsupported("a quantifier on a quantifier")
                atom = False
                continue
            if c == "$" and self.i == n - 1:
                end = True
                break
            if c in "^$":
                raise self.unsupported(f"the anchor {c} inside the pattern")
            self.out.append(_DOT if c == "." else _literal(c))
            self.i += 1
            atom = True
        if depth:
            raise self.invalid("an unclosed group")
        if top_alternation and (start or end):
            raise self.unsupported("an anchor beside a top-level |")
        return JavaRegex("".join(self.out), start, end)


def java_regex(pattern: str) -> JavaRegex:
    """``pattern`` (a Java regex, as Spark's ``RLIKE`` reads it) rewritten.

    Raises:
        Invalid: Java refuses the pattern.
        Unsupported: a construct outside the subset this module rewrites.
    """
    return _Scan(pattern).run()
