"""SQL ``where`` strings -> a small expression tree with Spark-typed literals.

The tokens are the protocol's (:func:`indextables.protocol.predicateparser.tokenize`:
single-quoted strings unescaped as Spark's parser does, back-quoted names); the
grammar is the protocol's predicate grammar (OR, AND, NOT, parentheses,
comparisons, ``[NOT] IN``, ``IS [NOT] NULL``, ``[NOT] LIKE``, ``[NOT] BETWEEN``),
extended with what user conditions need and the partition grammar does not parse:
any ``LIKE`` pattern (``ESCAPE 'c'`` rewritten to the default ``\\`` escapes), a
literal on either side, ``NULL``/``TRUE``/``FALSE``, ``DATE '...'``/
``TIMESTAMP[_NTZ|_LTZ] '...'`` literals, a bare boolean operand, and Spark's
``startswith``/``endswith``/``contains(col, 's')`` (read as the ``LIKE`` they equal),
``[NOT] RLIKE``/``[NOT] REGEXP`` and ``rlike``/``regexp``/``regexp_like(col, 're')``
(:class:`Regex`: a Java regex, a find).

Numeric literals are typed as Spark's parser types them: an integer is an
``int``/``bigint``/``decimal(p,0)`` (kept as an exact ``int``), a number with a
point and no exponent a ``decimal(p,s)`` (kept as a ``Fraction`` with its
precision and scale), one with an exponent a ``double``.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Final

from indextables.search.errors import QuerySyntaxError
from indextables.search.schema import columntypes as ct

__all__ = [
    "MAX_DEPTH",
    "And",
    "Column",
    "Compare",
    "InList",
    "IsNull",
    "Like",
    "Literal",
    "Node",
    "Not",
    "Or",
    "Regex",
    "all_of",
    "any_of",
    "depth",
    "negated",
    "parse_tokens",
    "parse_where",
]

# Spark's string functions read as the LIKE pattern they equal: what goes before and after
# the escaped operand.
_STRING_TESTS: Final = {"STARTSWITH": ("", "%"), "ENDSWITH": ("%", ""), "CONTAINS": ("%", "%")}
# Spark's regex functions (``regexp_like(col, 're')``), the same as ``col RLIKE 're'``.
_REGEX_TESTS: Final = frozenset({"RLIKE", "REGEXP", "REGEXP_LIKE"})
# Spark's regex operators: ``col RLIKE 're'`` and ``col REGEXP 're'``.
_REGEX_OPS: Final = frozenset({"RLIKE", "REGEXP"})
_MAX_DECIMAL_DIGITS: Final = 38
# Type suffixes of numeric literals read here (Spark's ``S``, ``Y`` and ``F`` are refused).
_SUFFIXES: Final = frozenset({"D", "BD", "L"})


@dataclass(frozen=True, slots=True)
class Column:
    """A column reference as written (``quoted``: it was back-quoted)."""

    name: str
    quoted: bool = False


@dataclass(frozen=True, slots=True)
class Literal:
    """A typed literal.

    Attributes:
        kind: ``integer``, ``decimal``, ``double``, ``string``, ``boolean``, ``null``,
            ``date`` (a ``DATE '...'`` literal), ``timestamp`` (``TIMESTAMP '...'``),
            ``timestamp_ntz`` or ``timestamp_ltz`` (``TIMESTAMP_NTZ '...'``,
            ``TIMESTAMP_LTZ '...'``).
        value: int, Fraction, float, str, bool, None, or the literal's text (date, timestamp).
        text: the literal as written.
        precision: for ``decimal``, the digits; ``scale``: its fraction digits.
    """

    kind: str
    value: Any
    text: str
    precision: int = 0
    scale: int = 0


Operand = Column | Literal


@dataclass(frozen=True, slots=True)
class Compare:
    """``left op right`` with op one of ``=``, ``<>``, ``<``, ``<=``, ``>``, ``>=``."""

    op: str
    left: Operand
    right: Operand


@dataclass(frozen=True, slots=True)
class InList:
    """``operand IN (values)``."""

    operand: Operand
    values: tuple[Literal, ...]


@dataclass(frozen=True, slots=True)
class IsNull:
    """``operand IS NULL``."""

    operand: Operand


@dataclass(frozen=True, slots=True)
class Like:
    """``operand LIKE pattern`` (the pattern as a string value, escapes still in it)."""

    operand: Operand
    pattern: Literal


@dataclass(frozen=True, slots=True)
class Regex:
    """``operand RLIKE pattern``: Spark's Java regex, true when it matches anywhere in the
    value (the pattern as a string value)."""

    operand: Operand
    pattern: Literal


@dataclass(frozen=True, slots=True)
class Not:
    """``NOT child``."""

    child: Node


@dataclass(frozen=True, slots=True)
class And:
    """``children[0] AND children[1] AND ...`` (two or more; none of them an ``And``)."""

    children: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Or:
    """``children[0] OR children[1] OR ...`` (two or more; none of them an ``Or``)."""

    children: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Truth:
    """A bare operand used as a condition (a boolean column, TRUE, FALSE, NULL)."""

    operand: Operand


Node = Compare | InList | IsNull | Like | Regex | Not | And | Or | Truth


MAX_DEPTH: Final = 256
"""The deepest tree a ``where`` may make: ``AND``, ``OR`` and ``NOT`` nodes nested in one
another (chains of one operator are one node, ``NOT NOT x`` is ``x``, parentheses alone
add nothing)."""


def parse_where(where: str) -> Node:
    """The tree of ``where``.

    The parser and every consumer of the tree work without recursion on the
    length of a chain: ``a OR b OR ...`` is one :class:`Or` of all its terms
    (10,000 of them are fine); any number of parentheses is read; nesting is
    bounded by :data:`MAX_DEPTH`.

    Raises:
        QuerySyntaxError: the text does not parse, or uses a form Spark reads
            differently from this grammar (a double-quoted text), or an integer
            literal of more than 38 digits (Spark refuses it too), or the tree
            nests deeper than :data:`MAX_DEPTH`.
    """
    from indextables.protocol.errors import ProtocolError
    from indextables.protocol.predicateparser import tokenize

    try:
        tokens = tokenize(where)
    except ProtocolError as exc:
        raise QuerySyntaxError(f"where={where!r}: {exc}") from None
    return parse_tokens(tokens, where)


def parse_tokens(tokens: list[Any], where: str) -> Node:
    """The tree of ``tokens``, all or a run of the tokens of ``where`` (named in errors).

    Raises:
        QuerySyntaxError: as :func:`parse_where`.
    """
    if not tokens:
        raise QuerySyntaxError(f"where={where!r}: the condition is empty")
    parser = _Parser(tokens, where)
    node = parser.expr()
    if parser.peek() is not None:
        raise parser.fail("unexpected text")
    found = depth(node)
    if found > MAX_DEPTH:
        raise QuerySyntaxError(
            f"where={_shortened(where)}: the condition nests {found} levels of AND, OR and NOT; "
            f"the limit is {MAX_DEPTH}"
        )
    return node


def depth(node: Node) -> int:
    """How many ``And``/``Or``/``Not`` nodes nest in ``node`` at its deepest (0: a leaf);
    without recursion."""
    deepest = 0
    pending: list[tuple[Node, int]] = [(node, 0)]
    while pending:
        current, level = pending.pop()
        if isinstance(current, And | Or):
            pending.extend((child, level + 1) for child in current.children)
        elif isinstance(current, Not):
            pending.append((current.child, level + 1))
        else:
            deepest = max(deepest, level)
    return deepest


def all_of(children: list[Node]) -> Node:
    """``children`` AND-ed (one child: itself), an ``And`` among them merged in."""
    return _joined(And, children)


def any_of(children: list[Node]) -> Node:
    """``children`` OR-ed (one child: itself), an ``Or`` among them merged in."""
    return _joined(Or, children)


def _joined(kind: type[And] | type[Or], children: list[Node]) -> Node:
    if len(children) == 1:
        return children[0]
    flat: list[Node] = []
    for child in children:
        if isinstance(child, kind):
            flat.extend(child.children)
        else:
            flat.append(child)
    return kind(tuple(flat))


def negated(node: Node, times: int = 1) -> Node:
    """``node`` under ``times`` NOTs (``NOT NOT x`` is ``x`` in three-valued logic too)."""
    if times % 2 == 0:
        return node
    return node.child if isinstance(node, Not) else Not(node)


def _shortened(where: str, limit: int = 200) -> str:
    return repr(where) if len(where) <= limit else f"{where[:limit]!r}... ({len(where)} characters)"


@dataclass(slots=True)
class _Group:
    """An open parenthesis (or the whole text): its finished OR terms, the AND factors
    of the term being read, and the NOTs written before the parenthesis."""

    nots: int
    terms: list[Node]
    factors: list[Node]


_COMPARE_OPS: Final = {
    "=": "=",
    "==": "=",
    "<>": "<>",
    "!=": "<>",
    "<": "<",
    "<=": "<=",
    ">": ">",
    ">=": ">=",
}


class _Parser:
    def __init__(self, tokens: list[Any], text: str) -> None:
        self.tokens = tokens
        self.text = text
        self.index = 0

    def fail(self, message: str) -> QuerySyntaxError:
        token = self.peek()
        at = f"at {token.text!r} (position {token.position})" if token else "at the end"
        return QuerySyntaxError(f"where={_shortened(self.text)}: {message} {at}")

    def peek(self, ahead: int = 0) -> Any:
        i = self.index + ahead
        return self.tokens[i] if i < len(self.tokens) else None

    def accept(self, kind: str, text: str | None = None) -> Any:
        token = self.peek()
        if token is not None and token.kind == kind and (text is None or token.text == text):
            self.index += 1
            return token
        return None

    def expect(self, kind: str, text: str | None = None) -> Any:
        token = self.accept(kind, text)
        if token is None:
            raise self.fail(f"expected {text or kind}")
        return token

    def expr(self) -> Node:
        """``term (OR term)*``, ``term := factor (AND factor)*``, ``factor := NOT factor |
        '(' expr ')' | predicate``, read with a stack of open parentheses (no recursion)."""
        groups: list[_Group] = []
        group = _Group(0, [], [])
        while True:
            nots = 0
            while True:  # the prefixes of a factor: NOTs and opening parentheses
                if self.accept("keyword", "NOT"):
                    nots += 1
                elif self.accept("punct", "("):
                    groups.append(group)
                    group = _Group(nots, [], [])
                    nots = 0
                else:
                    break
            node = negated(self.predicate(), nots)
            while True:  # after a factor: AND, OR, or the end of groups
                group.factors.append(node)
                if self.accept("keyword", "AND"):
                    break
                group.terms.append(all_of(group.factors))
                group.factors = []
                if self.accept("keyword", "OR"):
                    break
                node = any_of(group.terms)
                if not groups:
                    return node
                self.expect("punct", ")")
                node = negated(node, group.nots)
                group = groups.pop()

    def function_call(self, names: Collection[str]) -> str | None:
        """The name of the function about to be called when the next tokens are an
        unquoted name of ``names`` (compared upper-cased) and ``(``; else None."""
        token, following = self.peek(), self.peek(1)
        if (
            token is not None
            and token.kind == "name"
            and not token.quote
            and token.text.upper() in names
            and following is not None
            and following.kind == "punct"
            and following.text == "("
        ):
            return str(token.text)
        return None

    def predicate(self) -> Node:
        name = self.function_call(_STRING_TESTS)
        if name is not None:
            return self.string_test(name)
        name = self.function_call(_REGEX_TESTS)
        if name is not None:
            return self.regex_test(name)
        left = self.operand()
        op = self.accept("op")
        if op is not None:
            return Compare(_COMPARE_OPS[op.text], left, self.operand())
        if self.accept("keyword", "IS"):
            negative = self.accept("keyword", "NOT") is not None
            self.expect("keyword", "NULL")
            node: Node = IsNull(left)
            return Not(node) if negative else node
        negative = self.accept("keyword", "NOT") is not None
        if self.accept("keyword", "IN"):
            self.expect("punct", "(")
            values = self.in_values()
            self.expect("punct", ")")
            node = InList(left, tuple(values))
        elif self.accept("keyword", "LIKE"):
            token = self.expect("string")
            node = Like(left, self.like_pattern(token.text))
        elif self.regex_operator():
            token = self.expect("string")
            node = Regex(left, Literal("string", token.text, _quoted(token.text)))
        elif self.accept("keyword", "BETWEEN"):
            low = self.operand()
            self.expect("keyword", "AND")
            high = self.operand()
            node = And((Compare(">=", left, low), Compare("<=", left, high)))
        elif negative:
            raise self.fail("expected IN, LIKE, RLIKE or BETWEEN after NOT")
        else:
            return Truth(left)
        return Not(node) if negative else node

    def string_test(self, name: str) -> Like:
        """``startswith(col, 's')``, ``endswith(...)``, ``contains(...)`` as the ``LIKE``
        Spark's functions are equal to: ``'s%'``, ``'%s'``, ``'%s%'`` (``s`` escaped); a
        null on either side gives null in both, ``''`` matches every value."""
        self.index += 2
        column = self.operand()
        if not isinstance(column, Column):
            raise self.fail(f"{name}() takes a column first")
        self.expect("punct", ",")
        operand = self.operand()
        if not (isinstance(operand, Literal) and operand.kind == "string"):
            raise self.fail(f"{name}() takes a string literal second")
        self.expect("punct", ")")
        escaped = "".join("\\" + c if c in "%_\\" else c for c in operand.value)
        before, after = _STRING_TESTS[name.upper()]
        pattern = before + escaped + after
        return Like(column, Literal("string", pattern, _quoted(pattern)))

    def regex_operator(self) -> bool:
        """Whether ``RLIKE`` or ``REGEXP`` (an unquoted name) is next (consumed)."""
        token = self.peek()
        if (
            token is not None
            and token.kind == "name"
            and not token.quote
            and token.text.upper() in _REGEX_OPS
        ):
            self.index += 1
            return True
        return False

    def regex_test(self, name: str) -> Regex:
        """``rlike(col, 're')``, ``regexp(...)``, ``regexp_like(...)``: ``col RLIKE 're'``."""
        self.index += 2
        column = self.operand()
        if not isinstance(column, Column):
            raise self.fail(f"{name}() takes a column first")
        self.expect("punct", ",")
        operand = self.operand()
        if not (isinstance(operand, Literal) and operand.kind == "string"):
            raise self.fail(f"{name}() takes a string literal second")
        self.expect("punct", ")")
        return Regex(column, operand)

    def like_pattern(self, pattern: str) -> Literal:
        """The pattern of ``LIKE 'pattern' [ESCAPE 'c']``, written with Spark's default
        escape ``\\`` (so every reader of :class:`Like` sees one form)."""
        token, following = self.peek(), self.peek(1)
        if not (
            token is not None
            and token.kind == "name"
            and not token.quote
            and token.text.upper() == "ESCAPE"
        ):
            return Literal("string", pattern, _quoted(pattern))
        if following is None or following.kind != "string":
            raise self.fail("expected a one-character string after ESCAPE")
        self.index += 2
        escape = following.text
        if len(escape) != 1:
            raise self.fail(f"the ESCAPE character must be one character, not {escape!r}")
        text = f"{_quoted(pattern)} ESCAPE {_quoted(escape)}"
        return Literal("string", self.unescaped(pattern, escape, text), text)

    def unescaped(self, pattern: str, escape: str, text: str) -> str:
        """``pattern`` with the escape ``escape`` rewritten to ``\\`` escapes, as Spark reads
        it: the escape before ``%``, ``_`` or itself is that character, before anything
        else (or last) an error."""
        out: list[str] = []
        i, end = 0, len(pattern)
        while i < end:
            c = pattern[i]
            if c == escape:
                if i + 1 == end:
                    raise self.fail(f"LIKE {text}: the pattern ends with the escape character")
                c = pattern[i + 1]
                if c not in "%_" and c != escape:
                    raise self.fail(f"LIKE {text}: the escape character may not precede {c!r}")
                out.append("\\" + c if c in "%_\\" else c)
                i += 2
                continue
            out.append("\\\\" if c == "\\" else c)
            i += 1
        return "".join(out)

    def in_values(self) -> list[Literal]:
        """The literals of an IN list, up to its closing parenthesis (not consumed).

        One loop over the tokens: a number followed by a comma or a parenthesis (so
        without a type suffix) is read at once, anything else as :meth:`literal` reads it.
        """
        tokens, end = self.tokens, len(self.tokens)
        values: list[Literal] = []
        while True:
            i = self.index
            token = tokens[i] if i < end else None
            following = tokens[i + 1] if i + 1 < end else None
            if (
                token is not None
                and token.kind == "number"
                and following is not None
                and following.kind == "punct"
            ):
                self.index = i + 1
                values.append(self.number(token.text))
            else:
                values.append(self.literal())
            i = self.index
            if i < end and tokens[i].kind == "punct" and tokens[i].text == ",":
                self.index = i + 1
            else:
                return values

    def literal(self) -> Literal:
        operand = self.operand()
        if not isinstance(operand, Literal):
            raise self.fail("expected a literal")
        return operand

    def operand(self) -> Operand:
        token = self.peek()
        if token is None:
            raise self.fail("expected a column or a literal")
        if token.kind == "string":
            self.index += 1
            return Literal("string", token.text, _quoted(token.text))
        if token.kind == "number":
            self.index += 1
            suffix = self.suffix(token)
            return self.number(token.text) if not suffix else self.suffixed(token.text, suffix)
        if token.kind == "keyword" and token.text == "NULL":
            self.index += 1
            return Literal("null", None, "NULL")
        if token.kind == "name" and token.quote == '"':
            raise self.fail(
                "a double-quoted text is a string to Spark; write it in single quotes "
                '("..." is not read)'
            )
        if token.kind == "name" and not token.quote:
            upper = token.text.upper()
            if upper in ("TRUE", "FALSE"):
                self.index += 1
                return Literal("boolean", upper == "TRUE", upper)
            following = self.peek(1)
            if (
                upper in ("DATE", "TIMESTAMP", "TIMESTAMP_NTZ", "TIMESTAMP_LTZ")
                and following is not None
                and following.kind == "string"
            ):
                self.index += 2
                return Literal(upper.lower(), following.text, f"{upper} {_quoted(following.text)}")
        if token.kind == "name":
            self.index += 1
            return Column(token.text, bool(token.quote))
        raise self.fail("expected a column or a literal")

    def suffix(self, number: Any) -> str:
        """The type suffix written right after ``number`` (``D``, ``BD``, ``L``; consumed),
        or ``""``."""
        following = self.peek()
        if (
            following is None
            or following.kind != "name"
            or following.quote
            or following.position != number.position + len(number.text)
            or following.text.upper() not in _SUFFIXES
        ):
            return ""
        self.index += 1
        return str(following.text.upper())

    def suffixed(self, text: str, suffix: str) -> Literal:
        """A literal with a type suffix: ``1.5D`` a double, ``7L`` a bigint, ``2.50BD`` a
        decimal (as Spark types them)."""
        body = text.lstrip("+")
        written = text + suffix
        if suffix == "D":
            value = float(body)
            if not math.isfinite(value):
                raise self.fail(
                    f"the double literal {written} is out of range (Spark refuses it too)"
                )
            return Literal("double", value, written)
        if "e" in body.lower() or (suffix == "L" and "." in body):
            raise self.fail(f"the literal {written} is not supported; write it without the suffix")
        if suffix == "L":
            value_int = int(body)
            if not ct.LONG_MIN <= value_int <= ct.LONG_MAX:
                raise self.fail(
                    f"the bigint literal {written} is out of range (Spark refuses it too)"
                )
            return Literal("integer", value_int, written)
        return self.decimal(body, written)

    def number(self, text: str) -> Literal:
        body = text.lstrip("+")
        if "e" in body.lower():
            value = float(body)
            if not math.isfinite(value):
                raise self.fail(f"the double literal {text} is out of range (Spark refuses it too)")
            return Literal("double", value, text)
        mantissa = body.lstrip("-")
        if "." not in mantissa:
            digits = len(mantissa.lstrip("0"))
            if digits > _MAX_DECIMAL_DIGITS:
                raise self.fail(
                    f"the integer literal {text} has {digits} digits; Spark refuses integer "
                    f"literals beyond DECIMAL({_MAX_DECIMAL_DIGITS}) "
                    "(DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION). "
                    "Write it as a double (1e40)"
                )
            return Literal("integer", int(body), text)
        return self.decimal(body, text)

    def decimal(self, body: str, text: str) -> Literal:
        """The DECIMAL literal ``body`` (digits with or without a point), written ``text``."""
        whole, _, fraction = body.lstrip("-").partition(".")
        scale = len(fraction)
        unscaled = (whole + fraction).lstrip("0")
        precision = max(len(unscaled), scale, 1)
        if precision > _MAX_DECIMAL_DIGITS:
            raise self.fail(
                f"the decimal literal {text} has {precision} digits; Spark refuses decimals beyond "
                f"DECIMAL({_MAX_DECIMAL_DIGITS}) (DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION)"
            )
        return Literal("decimal", Fraction(body), text, precision, scale)


def _quoted(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace("'", "\\'")
    return f"'{escaped}'"
