"""Tokenizer and parser for partition filter strings.

Grammar (case-insensitive keywords)::

    expr    := term (OR term)*
    term    := factor (AND factor)*
    factor  := NOT factor | '(' expr ')' | cond
    cond    := column op literal | column [NOT] IN '(' literal (',' literal)* ')'
             | column IS [NOT] NULL | column [NOT] LIKE string
             | column [NOT] BETWEEN literal AND literal

String literals are single-quoted and read as Spark's SQL parser reads
them with its default settings (``spark.sql.parser.escapedStringLiterals``
false): see :func:`unescape_string`. Double-quoted and back-quoted texts are
names here (Spark reads a double-quoted text as a string literal); such
tokens are marked (:attr:`Token.quote`) so callers that must agree with
Spark can refuse them.

The parser builds nodes through callbacks so it does not depend on the
predicate classes (:mod:`indextables.protocol.predicates` wires them in).
It reads with an explicit stack, never recursing on the text: a chain of
one operator is one n-ary node (``build["or"](*terms)``), any number of
parentheses and ``NOT`` s is read, and trees nested deeper than
:data:`MAX_DEPTH` are refused.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

from indextables.protocol.errors import InvalidPredicateError

__all__ = ["MAX_DEPTH", "Token", "like_prefix", "parse_tokens", "tokenize", "unescape_string"]

_TOKEN: Final = re.compile(
    r"""\s*(?:
        (?P<string>'(?:[^'\\]|\\.|'')*')
      | (?P<quoted>`[^`]+`|"[^"]+")
      | (?P<number>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)
      | (?P<op><=|>=|<>|!=|==|=|<|>)
      | (?P<punct>[(),])
      | (?P<word>[A-Za-z_][A-Za-z0-9_.]*)
    )""",
    re.VERBOSE | re.DOTALL,
)
_KEYWORDS: Final = frozenset({"AND", "OR", "NOT", "IN", "IS", "NULL", "LIKE", "BETWEEN"})


class Token(NamedTuple):
    """One lexical token: ``kind`` is string, name, number, op, punct or keyword.

    A named tuple (immutable): a long ``IN`` list makes two tokens a value, and a
    tuple is built several times faster than a frozen dataclass.
    """

    kind: str
    text: str
    position: int
    quote: str = ""


def tokenize(text: str) -> list[Token]:
    """Split ``text`` into tokens.

    Raises:
        InvalidPredicateError: an unexpected character.
    """
    tokens: list[Token] = []
    position = 0
    stripped_end = len(text.rstrip())
    while position < stripped_end:
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            raise InvalidPredicateError(f"unexpected character at {position} in {text!r}")
        group = match.lastgroup or ""
        kind, value = group, match.group(group)
        quote = ""
        if kind == "string":
            quote, value = "'", unescape_string(value[1:-1])
        elif kind == "quoted":
            kind, quote, value = "name", value[0], value[1:-1]
        elif kind == "word":
            kind = "keyword" if value.upper() in _KEYWORDS else "name"
            value = value.upper() if kind == "keyword" else value
        tokens.append(Token(kind, value, match.start(group), quote))
        position = match.end()
    return tokens


# Spark's escapes of one character (other characters lose their backslash;
# ``\\%`` and ``\\_`` keep it, for LIKE patterns).
_SIMPLE_ESCAPES: Final = {
    "0": "\0",
    "b": "\b",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "Z": "\x1a",
    "%": "\\%",
    "_": "\\_",
}
_HEX: Final = frozenset("0123456789abcdefABCDEF")


def _is_hex(text: str) -> bool:
    return bool(text) and all(c in _HEX for c in text)


def unescape_string(body: str) -> str:
    """The value of a single-quoted SQL string literal whose text between the quotes is ``body``.

    As Spark's SQL parser reads it by default: ``''`` is a quote; a
    backslash escapes the next character: ``\\uXXXX`` (a UTF-16 unit; a
    surrogate pair makes one character) and ``\\UXXXXXXXX`` (a code point),
    a three-digit octal escape whose first digit is 0 or 1, ``\\0``, ``\\b``,
    ``\\n``, ``\\r``, ``\\t``, ``\\Z`` (U+001A); ``\\%`` and ``\\_`` keep
    their backslash; any other character stands for itself (``\\'``,
    ``\\"``, ``\\\\``, ``\\a`` -> ``a``). A lone surrogate stays in the
    result as such.
    """
    if "\\" not in body and "''" not in body:
        return body
    units: list[str] = []
    i, end = 0, len(body)
    while i < end:
        c = body[i]
        if c == "'" and i + 1 < end and body[i + 1] == "'":
            units.append("'")
            i += 2
        elif c != "\\" or i + 1 == end:
            units.append(c)
            i += 1
        else:
            i += 1
            nxt = body[i]
            if nxt == "u" and i + 5 <= end and _is_hex(body[i + 1 : i + 5]):
                units.append(chr(int(body[i + 1 : i + 5], 16)))
                i += 5
            elif nxt == "U" and i + 9 <= end and _is_hex(body[i + 1 : i + 9]):
                units.extend(_utf16_units(int(body[i + 1 : i + 9], 16)))
                i += 9
            elif i + 3 <= end and _is_octal3(body[i : i + 3]):
                units.append(chr(int(body[i : i + 3], 8)))
                i += 3
            else:
                units.append(_SIMPLE_ESCAPES.get(nxt, nxt))
                i += 1
    # Java strings are UTF-16: escaped surrogate pairs join into one character.
    return "".join(units).encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def _is_octal3(text: str) -> bool:
    return text[0] in "01" and text[1] in "01234567" and text[2] in "01234567"


def _utf16_units(code_point: int) -> list[str]:
    """The UTF-16 units Spark makes of a ``\\U`` escape (it keeps the low 32 bits)."""
    if code_point < 0x10000:
        return [chr(code_point)]
    high = (code_point - 0x10000) // 0x400 + 0xD800
    low = (code_point - 0x10000) % 0x400 + 0xDC00
    return [chr(high & 0xFFFF), chr(low & 0xFFFF)]


Builders = Mapping[str, Callable[..., Any]]

MAX_DEPTH: Final = 256
"""The deepest tree a predicate may make: ``AND``, ``OR`` and ``NOT`` nodes nested in one
another (a chain of one operator is one node, ``NOT NOT x`` is ``x``, parentheses alone
add nothing)."""


class _Item(NamedTuple):
    """A built node, what made it (``and``, ``or``, ``not``, ``leaf``) and its depth."""

    node: Any
    kind: str
    depth: int


@dataclass(slots=True)
class _Group:
    """An open parenthesis (or the whole text): the NOTs written before it, its finished
    OR terms and the AND factors of the term being read."""

    nots: int
    terms: list[_Item] = field(default_factory=list)
    factors: list[_Item] = field(default_factory=list)


class _Parser:
    def __init__(self, tokens: list[Token], text: str, build: Builders) -> None:
        self.tokens = tokens
        self.text = text
        self.build = build
        self.index = 0

    def fail(self, message: str) -> InvalidPredicateError:
        token = self.peek()
        where = f"at {token.position}" if token else "at end"
        return InvalidPredicateError(f"{message} {where} in {self.text!r}")

    def peek(self) -> Token | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def accept(self, kind: str, text: str | None = None) -> Token | None:
        token = self.peek()
        if token and token.kind == kind and (text is None or token.text == text):
            self.index += 1
            return token
        return None

    def expect(self, kind: str, text: str | None = None) -> Token:
        token = self.accept(kind, text)
        if token is None:
            raise self.fail(f"expected {text or kind}")
        return token

    def expr(self) -> Any:
        """``term (OR term)*``, ``term := factor (AND factor)*``, ``factor := NOT factor |
        '(' expr ')' | cond``, read with a stack of open parentheses (no recursion).

        A chain of one operator is built as one n-ary node (``build["or"](*terms)``),
        ``NOT NOT x`` as ``x``; nodes are kept with their nesting depth, which may not
        pass :data:`MAX_DEPTH`.
        """
        groups: list[_Group] = []
        group = _Group(0)
        while True:
            nots = 0
            while True:  # the prefixes of a factor: NOTs and opening parentheses
                if self.accept("keyword", "NOT"):
                    nots += 1
                elif self.accept("punct", "("):
                    groups.append(group)
                    group = _Group(nots)
                    nots = 0
                else:
                    break
            item = self.negated(_Item(self.condition(), "leaf", 0), nots)
            while True:  # after a factor: AND, OR, or the end of groups
                group.factors.append(item)
                if self.accept("keyword", "AND"):
                    break
                group.terms.append(self.joined("and", group.factors))
                group.factors = []
                if self.accept("keyword", "OR"):
                    break
                item = self.joined("or", group.terms)
                if not groups:
                    return item.node
                self.expect("punct", ")")
                item = self.negated(item, group.nots)
                group = groups.pop()

    def joined(self, kind: str, items: list[_Item]) -> _Item:
        if len(items) == 1:
            return items[0]
        # A part of the same kind is merged into the node: it adds no level.
        depth = 1 + max(item.depth - (item.kind == kind) for item in items)
        return self.checked(_Item(self.build[kind](*(item.node for item in items)), kind, depth))

    def negated(self, item: _Item, times: int) -> _Item:
        if times % 2 == 0:
            return item
        return self.checked(_Item(self.build["not"](item.node), "not", item.depth + 1))

    def checked(self, item: _Item) -> _Item:
        if item.depth > MAX_DEPTH:
            raise self.fail(
                f"the predicate nests more than {MAX_DEPTH} levels of AND, OR and NOT "
                f"(the limit is {MAX_DEPTH})"
            )
        return item

    def literal(self) -> str:
        token = self.accept("string") or self.accept("number")
        if token is None:
            raise self.fail("expected a literal")
        return token.text

    def condition(self) -> Any:
        column = self.expect("name").text
        op = self.accept("op")
        if op is not None:
            value = self.literal()
            if op.text in ("!=", "<>"):
                return self.build["ne"](column, value)
            return self.build["cmp"](op.text, column, value)
        if self.accept("keyword", "IS"):
            negated = self.accept("keyword", "NOT") is not None
            self.expect("keyword", "NULL")
            return self.build["isnotnull" if negated else "isnull"](column)
        negated = self.accept("keyword", "NOT") is not None
        node = self.positive_condition(column)
        return self.build["not"](node) if negated else node

    def positive_condition(self, column: str) -> Any:
        if self.accept("keyword", "IN"):
            self.expect("punct", "(")
            values = [self.literal()]
            while self.accept("punct", ","):
                values.append(self.literal())
            self.expect("punct", ")")
            return self.build["in"](column, values)
        if self.accept("keyword", "LIKE"):
            return self.like(column, self.expect("string").text)
        if self.accept("keyword", "BETWEEN"):
            low = self.literal()
            self.expect("keyword", "AND")
            high = self.literal()
            return self.build["and"](
                self.build["cmp"](">=", column, low), self.build["cmp"]("<=", column, high)
            )
        raise self.fail("expected an operator")

    def like(self, column: str, pattern: str) -> Any:
        found = like_prefix(pattern)
        if found is None:
            raise self.fail(f"only 'prefix%' LIKE patterns are supported, not {pattern!r}")
        body, wildcard = found
        if not wildcard:
            return self.build["cmp"]("=", column, body)
        return self.build["startswith"](column, body)


def like_prefix(pattern: str) -> tuple[str, bool] | None:
    """A LIKE pattern (a string literal's value) as ``(text, wildcard)`` when it matches
    the values equal to ``text`` (no wildcard) or starting with it (one trailing ``%``);
    None for any other pattern.

    LIKE's escape character is the backslash: ``\\%``, ``\\_`` and ``\\\\`` stand for
    themselves; a ``_``, an inner ``%`` or another backslash makes the pattern
    anything but a prefix.
    """
    literal: list[str] = []
    i, end = 0, len(pattern)
    while i < end:
        c = pattern[i]
        if c == "\\" and i + 1 < end and pattern[i + 1] in "%_\\":
            literal.append(pattern[i + 1])
            i += 2
        elif c == "%" and i == end - 1:
            return "".join(literal), True
        elif c in "%_\\":
            return None
        else:
            literal.append(c)
            i += 1
    return "".join(literal), False


def parse_tokens(tokens: list[Token], text: str, build: Builders) -> Any:
    """Parse ``tokens`` (of ``text``) into a tree built with ``build``.

    Raises:
        InvalidPredicateError: empty input, trailing tokens, or a syntax error.
    """
    parser = _Parser(tokens, text, build)
    if not tokens:
        raise InvalidPredicateError(f"empty predicate {text!r}")
    node = parser.expr()
    if parser.peek() is not None:
        raise parser.fail("unexpected token")
    return node
