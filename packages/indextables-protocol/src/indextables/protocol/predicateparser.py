"""Tokenizer and recursive-descent parser for partition filter strings.

Grammar (case-insensitive keywords)::

    expr    := term (OR term)*
    term    := factor (AND factor)*
    factor  := NOT factor | '(' expr ')' | cond
    cond    := column op literal | column [NOT] IN '(' literal (',' literal)* ')'
             | column IS [NOT] NULL | column [NOT] LIKE string
             | column [NOT] BETWEEN literal AND literal

The parser builds nodes through callbacks so it does not depend on the
predicate classes (:mod:`indextables.protocol.predicates` wires them in).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from indextables.protocol.errors import InvalidPredicateError

__all__ = ["Token", "parse_tokens", "tokenize"]

_TOKEN: Final = re.compile(
    r"""\s*(?:
        (?P<string>'(?:[^']|'')*')
      | (?P<quoted>`[^`]+`|"[^"]+")
      | (?P<number>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)
      | (?P<op><=|>=|<>|!=|==|=|<|>)
      | (?P<punct>[(),])
      | (?P<word>[A-Za-z_][A-Za-z0-9_.]*)
    )""",
    re.VERBOSE,
)
_KEYWORDS: Final = frozenset({"AND", "OR", "NOT", "IN", "IS", "NULL", "LIKE", "BETWEEN"})


@dataclass(frozen=True, slots=True)
class Token:
    """One lexical token: ``kind`` is string, name, number, op, punct or keyword."""

    kind: str
    text: str
    position: int


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
        if kind == "string":
            value = value[1:-1].replace("''", "'")
        elif kind == "quoted":
            kind, value = "name", value[1:-1]
        elif kind == "word":
            kind = "keyword" if value.upper() in _KEYWORDS else "name"
            value = value.upper() if kind == "keyword" else value
        tokens.append(Token(kind, value, match.start(group)))
        position = match.end()
    return tokens


Builders = Mapping[str, Callable[..., Any]]


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
        node = self.term()
        while self.accept("keyword", "OR"):
            node = self.build["or"](node, self.term())
        return node

    def term(self) -> Any:
        node = self.factor()
        while self.accept("keyword", "AND"):
            node = self.build["and"](node, self.factor())
        return node

    def factor(self) -> Any:
        if self.accept("keyword", "NOT"):
            return self.build["not"](self.factor())
        if self.accept("punct", "("):
            node = self.expr()
            self.expect("punct", ")")
            return node
        return self.condition()

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
        body = pattern[:-1] if pattern.endswith("%") else pattern
        if "%" in body or "_" in body:
            raise self.fail(f"only 'prefix%' LIKE patterns are supported, not {pattern!r}")
        if body == pattern:
            return self.build["cmp"]("=", column, pattern)
        return self.build["startswith"](column, body)


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
