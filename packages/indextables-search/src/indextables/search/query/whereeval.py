"""SQL ``where`` strings evaluated over Arrow batches with Spark's semantics.

Without Spark, nobody re-applies a ``where`` condition after the index narrowed
the rows: :func:`compile_where` gives the exact filter. Its semantics are Spark
SQL's (docs/search.md, "where conditions"): three-valued logic (a comparison
with null is null, and a row is kept only when the whole condition is true),
``NaN = NaN`` and NaN above every other number, ``-0.0 = 0.0``, strings by
their UTF-8 bytes, literals typed and coerced as Spark types them,
timestamps compared as instants. What it cannot evaluate exactly it refuses
at planning, naming the part (:class:`~indextables.search.errors.QuerySyntaxError`),
never guessing.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Final

import pyarrow as pa
import pyarrow.compute as pc

from indextables.search.errors import QuerySyntaxError
from indextables.search.query import wherecompare as wc
from indextables.search.query import wheregrammar as g
from indextables.search.query import wherepairs as wp
from indextables.search.query.rlikepattern import Invalid, Unsupported, java_regex
from indextables.search.schema import columntypes as ct

__all__ = ["WhereFilter", "compile_where"]

Evaluator = Callable[[pa.RecordBatch], pa.Array]


@dataclass(frozen=True, slots=True)
class WhereFilter:
    """A compiled ``where`` condition.

    Attributes:
        text: the condition as given.
        columns: the (schema-cased) columns the condition reads.
        evaluate: batch -> nullable boolean array (Spark's three-valued result).
    """

    text: str
    columns: tuple[str, ...]
    evaluate: Evaluator | None = field(repr=False, compare=False, default=None)

    def mask(self, batch: pa.RecordBatch) -> pa.BooleanArray:
        """True for the rows of ``batch`` the condition keeps (never null)."""
        if self.evaluate is None:
            raise QuerySyntaxError(f"where={self.text!r}: not compiled (use compile_where)")
        result = self.evaluate(batch)
        if isinstance(result, pa.ChunkedArray):
            result = result.combine_chunks()
        filled: pa.BooleanArray = pc.fill_null(result, False)
        return filled


def compile_where(where: str, schema: pa.Schema, *, tree: g.Node | None = None) -> WhereFilter:
    """The filter of ``where`` over rows of ``schema`` (``tree``: ``where`` already parsed
    by :func:`~indextables.search.query.wheregrammar.parse_where`, not parsed again).

    Raises:
        QuerySyntaxError: a condition that does not parse, names a column the
            schema lacks, or that this evaluator cannot answer exactly.
    """
    if tree is None:
        tree = g.parse_where(where)
    compiler = _Compiler(where, schema)
    evaluate = compiler.node(tree)
    return WhereFilter(where, tuple(compiler.used), evaluate)


_FLIPPED: Final = {"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_INT_DIGITS: Final = {8: 3, 16: 5, 32: 10, 64: 20}  # Spark's DecimalType.forType
_MAX_PRECISION: Final = 38
_EXACT_DOUBLE: Final = 2**53
_DATE: Final = re.compile(r"(\d{4})-(\d\d)-(\d\d)")
_TIMESTAMP: Final = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)(?:[ T](\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?(Z|[+-]\d\d:\d\d)?)?"
)
_EPOCH_DAY: Final = dt.date(1970, 1, 1)
_EPOCH: Final = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_UNITS_PER_SECOND: Final = {"s": 1, "ms": 1000, "us": 1_000_000, "ns": 1_000_000_000}

Comparer = Callable[[pa.Array, str], pa.Array]


class _Compiler:
    def __init__(self, where: str, schema: pa.Schema) -> None:
        self.where = where
        self.fields: dict[str, list[pa.Field]] = {}
        for f in schema:
            self.fields.setdefault(f.name.lower(), []).append(f)
        self.used: list[str] = []

    def refuse(self, part: str, reason: str) -> QuerySyntaxError:
        return QuerySyntaxError(f"where={self.where!r}: {part}: {reason}")

    def column(self, ref: g.Column) -> pa.Field:
        if "." in ref.name and not ref.quoted:
            raise self.refuse(ref.name, "nested fields are not supported in where conditions")
        found = self.fields.get(ref.name.lower(), [])
        if not found:
            raise self.refuse(ref.name, "no such column")
        if len(found) > 1:
            raise self.refuse(ref.name, "the name is ambiguous (columns differ only by case)")
        if found[0].name not in self.used:
            self.used.append(found[0].name)
        return found[0]

    def node(self, node: g.Node) -> Evaluator:
        if isinstance(node, g.And | g.Or):
            # One evaluator for the whole chain (a chain is one node: no recursion on its
            # length; nesting is bounded by the grammar's depth limit).
            children = [self.node(child) for child in node.children]
            combine = pc.and_kleene if isinstance(node, g.And) else pc.or_kleene

            def chain(batch: pa.RecordBatch) -> pa.Array:
                result = children[0](batch)
                for child in children[1:]:
                    result = combine(result, child(batch))
                return result

            return chain
        if isinstance(node, g.Not):
            child = self.node(node.child)
            return lambda batch: pc.invert(child(batch))
        if isinstance(node, g.Compare):
            return self.compare(node)
        if isinstance(node, g.InList):
            return self.in_list(node)
        if isinstance(node, g.IsNull):
            name = self.column(self.operand_column(node.operand, "IS NULL")).name
            return lambda batch: pc.is_null(_column(batch, name))
        if isinstance(node, g.Like):
            return self.like(node)
        if isinstance(node, g.Regex):
            return self.regex(node)
        return self.truth(node)

    def operand_column(self, operand: g.Operand, what: str) -> g.Column:
        if not isinstance(operand, g.Column):
            raise self.refuse(f"{operand.text} {what}", "the left side must be a column")
        return operand

    def truth(self, node: g.Truth) -> Evaluator:
        operand = node.operand
        if isinstance(operand, g.Literal):
            if operand.kind not in ("boolean", "null"):
                raise self.refuse(operand.text, "a condition must be boolean")
            value = operand.value

            def constant(batch: pa.RecordBatch) -> pa.Array:
                return pa.array([value] * batch.num_rows, pa.bool_())

            return constant
        f = self.column(operand)
        if not ct.is_boolean(f.type):
            raise self.refuse(operand.name, f"a {ct.type_name(f.type)} column is not a condition")
        name = f.name
        return lambda batch: _column(batch, name)

    def compare(self, node: g.Compare) -> Evaluator:
        left, right, op = node.left, node.right, node.op
        if isinstance(left, g.Literal) and isinstance(right, g.Column):
            left, right, op = right, left, _FLIPPED[op]
        part = f"{_text(node.left)} {node.op} {_text(node.right)}"
        if isinstance(left, g.Column) and isinstance(right, g.Column):
            return self.column_pair(part, left, right, op)
        if not isinstance(left, g.Column) or not isinstance(right, g.Literal):
            raise self.refuse(
                part, "only a column compared with a literal or a column is supported"
            )
        f = self.column(left)
        if _long_out_of_range(f, op, right):
            # Spark (DecimalPrecision) folds an integer column against a decimal beyond the
            # long range into TRUE or FALSE, null rows included.
            value = (right.value > ct.LONG_MAX) == (op in ("<", "<="))
            return lambda batch: pa.array([value] * batch.num_rows, pa.bool_())
        comparer = self.comparer(part, f, right, _ListShape.of((right,)))
        name = f.name
        if op == "<>":
            return lambda batch: pc.invert(comparer(_column(batch, name), "="))
        return lambda batch: comparer(_column(batch, name), op)

    def column_pair(self, part: str, left: g.Column, right: g.Column, op: str) -> Evaluator:
        """``left op right`` for two columns of one kind (:mod:`.wherepairs`)."""
        a, b = self.column(left), self.column(right)
        try:
            compare = wp.pair_comparer(a.type, b.type)
        except wp.PairRefused as refused:
            raise self.refuse(part, str(refused)) from None
        first, second = a.name, b.name
        if op == "<>":
            return lambda batch: pc.invert(
                compare(_column(batch, first), _column(batch, second), "=")
            )
        return lambda batch: compare(_column(batch, first), _column(batch, second), op)

    def in_list(self, node: g.InList) -> Evaluator:
        """``x IN (...)``: one membership test (``pc.is_in``) for the list, in time linear
        in its length, where equality is Arrow's on a key of each literal; otherwise the
        OR of the equalities. Spark's result either way: null for a null ``x``, true on a
        match, else null when the list holds a NULL, else false."""
        column = self.operand_column(node.operand, "IN (...)")
        f = self.column(column)
        part = f"{column.name} IN ({_listed(node.values)})"
        shape = _ListShape.of(node.values)
        name = f.name
        keyed = self.in_keys(part, f, node.values, shape)
        if keyed is not None:
            domain, keys, has_null = keyed
            value_set = pa.array(keys, domain.type)
            unknown = pa.scalar(None if has_null else False, pa.bool_())

            def member(batch: pa.RecordBatch) -> pa.Array:
                values = domain.of(_column(batch, name))
                found = pc.is_in(values, value_set=value_set, skip_nulls=True)
                found = pc.if_else(found, True, unknown)
                return pc.if_else(pc.is_valid(values), found, pa.scalar(None, pa.bool_()))

            return member
        comparers = [self.comparer(part, f, v, shape) for v in node.values]

        def evaluate(batch: pa.RecordBatch) -> pa.Array:
            values = _column(batch, name)
            result = comparers[0](values, "=")
            for comparer in comparers[1:]:
                result = pc.or_kleene(result, comparer(values, "="))
            return result

        return evaluate

    def in_keys(
        self, part: str, f: pa.Field, values: tuple[g.Literal, ...], shape: _ListShape
    ) -> tuple[_Domain, list[object], bool] | None:
        """The domain where ``f``'s equality with each literal is Arrow equality, the keys
        of the literals there (literals equal to no value left out), and whether a NULL
        is listed; None for a column compared otherwise (floating values: ``-0.0 = 0.0``)."""
        t = f.type
        if ct.is_floating(t) or shape.has_double:
            return None
        domain: _Domain
        if ct.is_integral(t) or pa.types.is_timestamp(t):
            domain = _Domain(pa.int64())
        elif pa.types.is_string_view(t):
            domain = _Domain(pa.large_string())  # is_in has no string_view kernel
        elif ct.is_decimal(t) or ct.is_string(t):
            domain = _Domain(t)
        elif ct.is_boolean(t):
            domain = _Domain(pa.int8())
        elif ct.is_date(t):
            domain = _Domain(pa.int32(), via=pa.date32())
        else:
            return None
        has_null = any(literal.kind == "null" for literal in values)
        listed = [literal for literal in values if literal.kind != "null"]
        if ct.is_integral(t):
            keys = self.integer_keys(part, f, listed, shape)
        else:
            found = (self.in_key(part, f, literal, shape) for literal in listed)
            keys = [key for key in found if key is not _NEVER]
        return domain, keys, has_null

    def integer_keys(
        self, part: str, f: pa.Field, listed: list[g.Literal], shape: _ListShape
    ) -> list[object]:
        """:meth:`in_key` of each literal for an integral column, in one loop (the common
        long IN list)."""
        self.check_widening(part, f, shape)
        keys: list[object] = []
        low, high = ct.LONG_MIN, ct.LONG_MAX
        for literal in listed:
            kind = literal.kind
            if kind == "integer":
                value = literal.value
                if low <= value <= high:
                    keys.append(value)
            elif kind == "decimal":
                exact: Fraction = literal.value
                if exact.denominator == 1 and low <= exact <= high:
                    keys.append(int(exact))
            else:
                raise self.refuse(part, self.mismatch(f, literal))
        return keys

    def in_key(self, part: str, f: pa.Field, literal: g.Literal, shape: _ListShape) -> object:
        """The key of ``literal`` in :meth:`in_keys`' domain of ``f`` (``_NEVER``: equal to
        no value); refuses as :meth:`comparer` does."""
        t = f.type
        if ct.is_integral(t) or ct.is_decimal(t):
            self.check_exact(part, f, literal, shape)
            exact = Fraction(literal.value)
            if ct.is_integral(t):
                in_range = exact.denominator == 1 and ct.LONG_MIN <= exact <= ct.LONG_MAX
                return int(exact) if in_range else _NEVER
            key = wc.decimal_key(t, exact)
            return _NEVER if key is None else key
        if ct.is_string(t):
            if literal.kind != "string":
                raise self.refuse(part, self.mismatch(f, literal))
            _check_utf8(self, part, literal.value)
            return literal.value
        if ct.is_boolean(t):
            if literal.kind != "boolean":
                raise self.refuse(part, self.mismatch(f, literal))
            return int(literal.value)
        if ct.is_date(t):
            return self.date_literal(part, f, literal)
        instant = self.timestamp_literal(part, f, literal)
        return int(instant) if instant.denominator == 1 else _NEVER

    def pattern_column(self, operand: g.Operand, pattern: g.Literal, what: str) -> tuple[str, str]:
        """The string column a ``LIKE``/``RLIKE`` (``what``) tests and the condition's
        text for messages, once the column is a string and the pattern valid UTF-8."""
        column = self.operand_column(operand, what)
        f = self.column(column)
        part = f"{column.name} {what} {pattern.text}"
        if not ct.is_string(f.type):
            raise self.refuse(
                part, f"{what} needs a string column, {f.name} is {ct.type_name(f.type)}"
            )
        _check_utf8(self, part, pattern.value)
        return f.name, part

    def like(self, node: g.Like) -> Evaluator:
        name, part = self.pattern_column(node.operand, node.pattern, "LIKE")
        regex = self.like_regex(part, node.pattern.value)
        return lambda batch: pc.match_substring_regex(_column(batch, name), regex)

    def regex(self, node: g.Regex) -> Evaluator:
        """``RLIKE``: Spark's Java regex as a find, evaluated with RE2 once rewritten
        (:mod:`.rlikepattern`: the subset where the dialects agree; the rest is refused)."""
        name, part = self.pattern_column(node.operand, node.pattern, "RLIKE")
        try:
            regex = java_regex(node.pattern.value).find_regex()
        except Invalid as exc:
            raise self.refuse(part, f"the pattern is not a valid Java regex ({exc})") from None
        except Unsupported as exc:
            raise self.refuse(
                part,
                f"the pattern uses a construct evaluated only by Spark's Java regex ({exc}); "
                "see docs/search.md, RLIKE",
            ) from None
        try:  # RE2 bounds a program's size (nested repetitions): refused here, not per batch
            pc.match_substring_regex(pa.array([""], pa.string()), regex)
        except pa.ArrowInvalid as exc:
            raise self.refuse(part, f"the pattern is too large to evaluate ({exc})") from None
        return lambda batch: pc.match_substring_regex(_column(batch, name), regex)

    def like_regex(self, part: str, pattern: str) -> str:
        """Spark's LIKE (escape ``\\``) as an anchored RE2 pattern."""
        out: list[str] = []
        i = 0
        while i < len(pattern):
            c = pattern[i]
            if c == "\\":
                if i + 1 == len(pattern) or pattern[i + 1] not in "%_\\":
                    raise self.refuse(
                        part, "the escape \\ must precede %, _ or \\ (Spark refuses it too)"
                    )
                out.append(_regex_char(pattern[i + 1]))
                i += 2
                continue
            out.append(".*" if c == "%" else "." if c == "_" else _regex_char(c))
            i += 1
        return r"\A(?s:" + "".join(out) + r")\z"

    def comparer(self, part: str, f: pa.Field, literal: g.Literal, shape: _ListShape) -> Comparer:
        """How ``f`` compares with ``literal`` (``shape``: of all literals of the IN list)."""
        t = f.type
        if literal.kind == "null":
            return lambda values, op: wc.constant(values, None)
        if ct.is_integral(t) or ct.is_decimal(t):
            return self.exact_number(part, f, literal, shape)
        if ct.is_floating(t):
            value = self.double_literal(part, f, literal)
            return lambda values, op: wc.compare_floats(values, op, value)
        if ct.is_string(t):
            if literal.kind != "string":
                raise self.refuse(part, self.mismatch(f, literal))
            _check_utf8(self, part, literal.value)
            text = literal.value
            return lambda values, op: wc.compare_ordered(values, op, pa.scalar(text, values.type))
        if ct.is_boolean(t):
            if literal.kind != "boolean":
                raise self.refuse(part, self.mismatch(f, literal))
            flag = int(literal.value)
            return lambda values, op: wc.compare_ordered(pc.cast(values, pa.int8()), op, flag)
        if ct.is_date(t):
            day = self.date_literal(part, f, literal)
            return lambda values, op: wc.compare_ordered(
                pc.cast(pc.cast(values, pa.date32()), pa.int32()), op, day
            )
        if pa.types.is_timestamp(t):
            instant = self.timestamp_literal(part, f, literal)
            return lambda values, op: wc.compare_integers(pc.cast(values, pa.int64()), op, instant)
        raise self.refuse(part, f"{ct.type_name(t)} columns are not supported in where conditions")

    def mismatch(self, f: pa.Field, literal: g.Literal) -> str:
        return (
            f"{f.name} is {ct.type_name(f.type)} and {literal.text} is a {literal.kind} "
            "literal; "
            "Spark casts one side (and may fail under ANSI mode), which this evaluator does not do"
        )

    def exact_number(
        self, part: str, f: pa.Field, literal: g.Literal, shape: _ListShape
    ) -> Comparer:
        t = f.type
        # Spark compares an IN list in its widest type: one double makes every item a double.
        if literal.kind == "double" or shape.has_double:
            if ct.is_decimal(t) and t.precision > 15:
                raise self.refuse(
                    part,
                    f"{f.name} is {ct.type_name(t)}: Spark compares it as a double, whose "
                    "rounding of more than 15 digits this evaluator does not reproduce; "
                    "write a decimal literal",
                )
            value = self.double_literal(part, f, literal)
            if ct.is_integral(t):
                return lambda values, op: wc.compare_floats(
                    pc.cast(values, pa.float64(), safe=False), op, value
                )
            return lambda values, op: wc.compare_floats(wc.decimal_as_double(values), op, value)
        self.check_exact(part, f, literal, shape)
        exact = Fraction(literal.value)
        if ct.is_integral(t):
            return lambda values, op: wc.compare_integers(values, op, exact)
        return lambda values, op: wc.compare_decimal(values, op, exact)

    def check_exact(self, part: str, f: pa.Field, literal: g.Literal, shape: _ListShape) -> None:
        """Refuse what an integral or decimal ``f`` cannot compare with ``literal`` exactly
        (an IN list with no double)."""
        if literal.kind not in ("integer", "decimal"):
            raise self.refuse(part, self.mismatch(f, literal))
        self.check_widening(part, f, shape)

    def check_widening(self, part: str, f: pa.Field, shape: _ListShape) -> None:
        """Refuse a comparison Spark makes in a decimal of more than 38 digits (rounded)."""
        t = f.type
        # Spark widens both sides to one decimal type; beyond 38 digits it loses digits.
        int_digits, scale = _decimal_shape(t)
        int_digits = max(int_digits, shape.decimal_digits)
        scale = max(scale, shape.scale)
        if ct.is_decimal(t):
            int_digits = max(int_digits, shape.integer_digits)
        if int_digits + scale > _MAX_PRECISION:
            raise self.refuse(
                part,
                f"Spark compares these as decimal({int_digits + scale},{scale}), beyond 38 digits, "
                "and rounds; this evaluator refuses rather than guess",
            )

    def double_literal(self, part: str, f: pa.Field, literal: g.Literal) -> float:
        """The double a float/double column is compared with."""
        if literal.kind == "double":
            return float(literal.value)
        if literal.kind == "integer":
            # Spark 4 (ANSI type coercion) compares a float column with an integer as doubles.
            return float(literal.value)
        if literal.kind == "decimal":
            value: Fraction = literal.value
            unscaled = abs(value.numerator) * (10**literal.scale // value.denominator)
            if unscaled > _EXACT_DOUBLE or literal.scale > 22:
                raise self.refuse(
                    part,
                    f"the decimal {literal.text} has too many digits to convert to a double "
                    "exactly",
                )
            return float(value)
        raise self.refuse(part, self.mismatch(f, literal))

    def date_literal(self, part: str, f: pa.Field, literal: g.Literal) -> int:
        if literal.kind not in ("string", "date"):
            raise self.refuse(part, self.mismatch(f, literal))
        match = _DATE.fullmatch(literal.value)
        day = _valid_date(match) if match else None
        if day is None:
            raise self.refuse(part, f"{literal.text} is not a date of the form 'yyyy-MM-dd'")
        return (day - _EPOCH_DAY).days

    def timestamp_literal(self, part: str, f: pa.Field, literal: g.Literal) -> Fraction:
        """The literal in ``f``'s units since the epoch (instant or wall clock)."""
        if literal.kind not in ("string", "timestamp", "timestamp_ntz", "timestamp_ltz"):
            raise self.refuse(part, self.mismatch(f, literal))
        aware = ct.is_timestamp(f.type)
        if not aware and literal.kind in ("timestamp", "timestamp_ltz"):
            raise self.refuse(
                part,
                "a TIMESTAMP literal is an instant, which Spark converts in the session time "
                "zone; write a string or TIMESTAMP_NTZ '...'",
            )
        if aware and literal.kind == "timestamp_ntz":
            raise self.refuse(
                part,
                "Spark converts a TIMESTAMP_NTZ literal to an instant in the session time zone; "
                "write a string or TIMESTAMP literal with an offset",
            )
        match = _TIMESTAMP.fullmatch(literal.value)
        moment = _valid_timestamp(match) if match else None
        if moment is None:
            raise self.refuse(
                part, f"{literal.text} is not a timestamp 'yyyy-MM-dd HH:mm:ss[.ffffff]'"
            )
        has_zone = moment.tzinfo is not None
        if aware and not has_zone:
            raise self.refuse(
                part,
                "Spark reads a timestamp without a zone in the session time zone; give an offset "
                "('2024-01-01 00:00:00Z' or '+02:00')",
            )
        if not aware and has_zone:
            raise self.refuse(part, f"{f.name} is timestamp_ntz: give the time without a zone")
        if not has_zone:
            moment = moment.replace(tzinfo=dt.UTC)
        delta = moment - _EPOCH
        micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
        return Fraction(micros * _UNITS_PER_SECOND[f.type.unit], 1_000_000)


@dataclass(frozen=True, slots=True)
class _ListShape:
    """What the literals of an IN list (or one compared literal) make of the common type:
    any double among them, the widest integer digits of their decimals, their widest
    scale, the most digits of their integers (each computed once, whatever the length)."""

    has_double: bool
    decimal_digits: int
    scale: int
    integer_digits: int

    @staticmethod
    def of(literals: tuple[g.Literal, ...]) -> _ListShape:
        has_double = False
        decimal_digits = scale = 0
        widest = -1  # the largest magnitude of an integer literal (-1: none)
        for literal in literals:
            kind = literal.kind
            if kind == "integer":
                widest = max(widest, abs(literal.value))
            elif kind == "double":
                has_double = True
            elif kind == "decimal":
                decimal_digits = max(decimal_digits, literal.precision - literal.scale)
                scale = max(scale, literal.scale)
        integer_digits = len(str(widest)) if widest >= 0 else 0
        return _ListShape(has_double, decimal_digits, scale, integer_digits)


@dataclass(frozen=True, slots=True)
class _Domain:
    """The Arrow type a column's values are compared in (``via``: a cast on the way)."""

    type: pa.DataType
    via: pa.DataType | None = None

    def of(self, values: pa.Array) -> pa.Array:
        if self.via is not None:
            values = pc.cast(values, self.via)
        return values if values.type == self.type else pc.cast(values, self.type)


_NEVER: Final = object()


def _listed(values: tuple[g.Literal, ...], limit: int = 20) -> str:
    """The literals of an IN list as written (the first ``limit`` of a long one)."""
    shown = ", ".join(v.text for v in values[:limit])
    return shown if len(values) <= limit else f"{shown}, ... ({len(values)} values)"


def _long_out_of_range(f: pa.Field, op: str, literal: g.Literal) -> bool:
    """An integer column ordered against a decimal literal beyond Spark's long range."""
    return (
        ct.is_integral(f.type)
        and op in ("<", "<=", ">", ">=")
        and literal.kind in ("integer", "decimal")
        and not ct.LONG_MIN <= literal.value <= ct.LONG_MAX
    )


def _column(batch: pa.RecordBatch, name: str) -> pa.Array:
    values = batch.column(batch.schema.get_field_index(name))
    return values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values


def _text(operand: g.Operand) -> str:
    return operand.text if isinstance(operand, g.Literal) else operand.name


def _decimal_shape(t: pa.DataType) -> tuple[int, int]:
    """Integer digits and scale of the decimal Spark makes of a column type."""
    if ct.is_decimal(t):
        return t.precision - t.scale, t.scale
    return _INT_DIGITS[t.bit_width], 0


def _regex_char(c: str) -> str:
    return c if (c.isalnum() and c.isascii()) or ord(c) > 127 else f"\\x{{{ord(c):x}}}"


def _check_utf8(compiler: _Compiler, part: str, text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise compiler.refuse(part, "the literal holds a lone surrogate (not UTF-8)") from None


def _valid_date(match: re.Match[str]) -> dt.date | None:
    try:
        return dt.date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        return None


def _valid_timestamp(match: re.Match[str]) -> dt.datetime | None:
    try:
        fraction = (match[7] or "").ljust(6, "0")
        moment = dt.datetime(
            int(match[1]),
            int(match[2]),
            int(match[3]),
            int(match[4] or 0),
            int(match[5] or 0),
            int(match[6] or 0),
            int(fraction or 0),
        )
    except ValueError:
        return None
    zone = match[8]
    if zone is None:
        return moment
    if zone == "Z":
        return moment.replace(tzinfo=dt.UTC)
    sign = 1 if zone[0] == "+" else -1
    hours, minutes = int(zone[1:3]), int(zone[4:6])
    if hours > 18 or minutes > 59:
        return None
    offset = dt.timedelta(hours=hours, minutes=minutes) * sign
    return moment.replace(tzinfo=dt.timezone(offset))
