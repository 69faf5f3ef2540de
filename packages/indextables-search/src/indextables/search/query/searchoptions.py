"""Search options: the ``query``, ``textsearch.<column>`` and ``fieldmatch.<column>`` options.

The reference offers ``col indexquery '...'`` in SQL; a Python data source
receives no custom expressions, so searches travel as read options:

- ``query``: Tantivy query syntax over the whole table (fields by name,
  unqualified terms search every tokenized text field);
- ``textsearch.<column>``: a query on one tokenized (``text``) column;
- ``fieldmatch.<column>``: an exact value of one exact (``string``) column, or an
  address, CIDR or ``a.b.*.*`` form on an ``ip`` column.

Options are part of the relation, so unlike pushed filters they are never
subject to the 4.3.0 plan-reuse defect. Validation (field kinds, query
syntax) runs while Spark plans the read, before any task.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime

import pyarrow as pa
import tantivy

from indextables.search.errors import (
    FieldKindError,
    FieldLayoutError,
    InexactDateBoundError,
    OptionError,
    QuerySyntaxError,
)
from indextables.search.query import parsecache, termexpand
from indextables.search.query.datequery import (
    clauses,
    edge_date_literals,
    exact_date_terms,
    inexact_date_literals,
)
from indextables.search.query.floatquery import spark_float_clauses
from indextables.search.query.parsecache import parse_text
from indextables.search.query.parsedform import exists_fields, string_terms
from indextables.search.query.termexpand import check_expansion_limit
from indextables.search.query.tokenless import nothing_for_missing_fields
from indextables.search.query.validationindex import validation_index
from indextables.search.read.convert import TANTIVY_MAX_DATE, TANTIVY_MIN_DATE
from indextables.search.schema import columntypes as ct
from indextables.search.schema.mapping import FieldKind, FieldSpec


@dataclass(frozen=True, slots=True)
class SearchSpec:
    """The option-level search of one read (picklable, shipped to tasks).

    Attributes:
        query: the ``query`` option.
        text_search: column -> query for tokenized columns.
        field_match: column -> exact value for exact columns (an address, CIDR or
            trailing-wildcard form for ip columns).
        max_term_expansions: the most terms of one split a wildcard, fuzzy or
            phrase-prefix term may stand for (``termexpand``; None:
            :data:`~indextables.search.query.termexpand.MAX_TERM_EXPANSIONS`); more is
            refused.
    """

    query: str | None = None
    text_search: Mapping[str, str] = field(default_factory=dict)
    field_match: Mapping[str, str] = field(default_factory=dict)
    max_term_expansions: int | None = None

    def __post_init__(self) -> None:
        """Refuse query text beyond the size and nesting limits (``querylimits``) before
        any rewrite or parser reads it.

        Raises:
            QuerySyntaxError: naming the option and the limit.
        """
        from indextables.search.query.querylimits import check_query_limits

        if self.max_term_expansions is not None:
            check_expansion_limit(self.max_term_expansions)
        if self.query:
            check_query_limits(self.query, "query")
        for column, text in self.text_search.items():
            check_query_limits(text, f"textsearch.{column}")

    @property
    def is_empty(self) -> bool:
        """True when the read searches nothing (every row is returned)."""
        return not (self.query or self.text_search or self.field_match)


def whole_second_dates(schema: pa.Schema) -> frozenset[str]:
    """Lowercase names of the ``date`` columns of ``schema``: their values are whole days,
    which second-precision date terms hold exactly."""
    return frozenset(f.name.lower() for f in schema if ct.is_date(f.type))


def validate(
    spec: SearchSpec,
    fields: Mapping[str, FieldSpec],
    *,
    whole_dates: Collection[str] = frozenset(),
    partition_columns: Collection[str] = (),
) -> None:
    """Check field kinds and query syntax against the table's fields.

    ``whole_dates``: :func:`whole_second_dates` of the table's schema;
    ``partition_columns``: the table's, named in the error for a query clause on one.

    Raises:
        FieldKindError: textsearch on a non-tokenized field, fieldmatch on a field neither
            exact nor ip, or a column the table does not have (the closest one is named).
        OptionError: a fieldmatch value, or a ``query``/``textsearch`` term on an exact or
            JSON field, longer than Tantivy indexes (it could find nothing).
        QuerySyntaxError: a query that Tantivy cannot parse, or a fieldmatch value on an ip
            field that is no address, CIDR or trailing-wildcard form.
        InexactDateBoundError: a date bound on a date field that is not fast (see
            :func:`build_query`).
    """
    for column in spec.text_search:
        found = _field(fields, column, "textsearch")
        _check_indexed(found, "textsearch")
        if not found.is_tokenized:
            raise FieldKindError(
                f"textsearch on column {column!r} needs a tokenized text field, but it is "
                f"indexed as {found.kind.value!r}; use fieldmatch.{column} for exact fields"
            )
    for column in spec.field_match:
        found = _field(fields, column, "fieldmatch")
        _check_indexed(found, "fieldmatch")
        if not (found.is_exact or found.kind is FieldKind.IP):
            raise FieldKindError(
                f"fieldmatch on column {column!r} needs an exact (string) or ip field, but it "
                f"is indexed as {found.kind.value!r}; use textsearch.{column} for text fields"
            )
        _check_indexable(column, spec.field_match[column])
    if not spec.is_empty:
        specs = tuple(fields.values())
        with validation_index(specs) as index:
            shapes: list[str] = []
            try:
                _build(index, spec, fields, whole_dates=whole_dates, shapes=shapes)
            except QuerySyntaxError as error:
                raise _with_field_hint(error, fields, partition_columns) from None
            _check_query_terms(index, spec, specs)
        _check_exists("\n".join(shapes), fields)


def _check_exists(shape: str, fields: Mapping[str, FieldSpec]) -> None:
    """Refuse ``f:*`` on a field that is not fast: every split would fail to read."""
    for printed in exists_fields(shape):
        name = printed.split(".")[0]
        spec = fields.get(name.lower())
        if spec is not None and not spec.fast:
            raise FieldLayoutError(
                f"the search clause {spec.name}:* (or {spec.name}:[* TO *]) asks whether "
                f"column {spec.name!r} has a value, which the index answers from fast fields "
                f'only, and it is not fast: filter with a where condition ("{spec.name} IS '
                'NOT NULL") or add it to spark.indextables.indexing.fastfields when writing'
            )


_MISSING_FIELD = re.compile(r"Field does not exist: '([^']*)'")


def _with_field_hint(
    error: QuerySyntaxError, fields: Mapping[str, FieldSpec], partition_columns: Collection[str]
) -> QuerySyntaxError:
    """``error`` with a hint when it names a field the index does not have: a partition
    column (splits do not index them) or a misspelling of an indexed one."""
    found = _MISSING_FIELD.search(str(error))
    if found is None:
        return error
    name = found.group(1)
    if name.lower() in {c.lower() for c in partition_columns}:
        hint = (
            f"column {name!r} is a partition column, which the splits do not index: filter "
            "it with a where condition (it prunes whole partitions)"
        )
    else:
        close = difflib.get_close_matches(name.lower(), list(fields), n=1)
        if not close:
            return error
        hint = f"did you mean {fields[close[0]].name!r}?"
    return QuerySyntaxError(f"{error}; {hint}")


def _check_indexed(found: FieldSpec, helper: str) -> None:
    if not found.indexed:
        kind = (
            "fast-only (spark.indextables.indexing.fastonlyfields: filter it with a where "
            "condition)"
            if found.fast and not found.stored
            else "store-only (spark.indextables.indexing.storeonlyfields)"
        )
        raise FieldKindError(
            f"{helper} on column {found.name!r}: the column is {kind}, so it cannot be searched"
        )


def _check_indexable(column: str, value: str) -> None:
    from indextables.search.query.tantivyquery import MAX_TERM_BYTES

    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise OptionError(
            f"option fieldmatch.{column}: the value {value!r} holds a lone surrogate, which "
            "is not UTF-8 and no indexed value can hold"
        ) from None
    size = len(value.encode("utf-8"))
    if size > MAX_TERM_BYTES:
        raise OptionError(
            f"option fieldmatch.{column}: the value is {size:,} UTF-8 bytes, but Tantivy "
            f"indexes values of at most {MAX_TERM_BYTES:,} bytes, so the index cannot find it; "
            f'filter with DataFrame.where("{column} = ...") instead'
        )


def _check_query_terms(
    index: tantivy.Index, spec: SearchSpec, specs: tuple[FieldSpec, ...]
) -> None:
    """Refuse a ``query``/``textsearch`` term longer than Tantivy indexes.

    Tokenized fields drop long tokens on both sides, but an exact (raw) or JSON field's
    term is the whole value: a longer one is never in the index, so the query would
    silently find nothing where Spark's ``=`` finds the row. Only option text longer than
    the limit can hold such a term, so shorter text costs one length check.
    """
    from indextables.search.query.tantivyquery import MAX_TERM_BYTES

    texts = [("query", spec.query)] if spec.query else []
    texts += [(f"textsearch.{c}", t) for c, t in spec.text_search.items()]
    for option, text in texts:
        if len(text.encode("utf-8", "surrogatepass")) <= MAX_TERM_BYTES:
            continue
        names = [s.name for s in specs]
        shapes: list[str] = []
        _build(index, SearchSpec(query=text), {s.name.lower(): s for s in specs}, shapes=shapes)
        for ordinal, term in string_terms("\n".join(shapes)):
            size = len(term.encode("utf-8", "surrogatepass"))
            if size > MAX_TERM_BYTES:
                column = names[ordinal]
                raise OptionError(
                    f"option {option}: a term on column {column!r} is {size:,} UTF-8 bytes, "
                    f"but Tantivy indexes values of at most {MAX_TERM_BYTES:,} bytes, so the "
                    f'index cannot find it; filter with DataFrame.where("{column} = ...") '
                    "instead"
                )


def _field(fields: Mapping[str, FieldSpec], column: str, helper: str) -> FieldSpec:
    found = fields.get(column.lower())
    if found is None:
        names = sorted(f.name for f in fields.values())
        close = difflib.get_close_matches(column.lower(), [n.lower() for n in names], n=1)
        hint = f"; did you mean {fields[close[0]].name!r}?" if close else ""
        raise FieldKindError(
            f"{helper} names column {column!r}, which the table does not have or index"
            f"{hint} (indexed columns: {', '.join(names)})"
        )
    return found


def build_query(
    index: tantivy.Index,
    spec: SearchSpec,
    fields: Mapping[str, FieldSpec],
    *,
    exact_dates: Collection[str] | None = None,
    whole_dates: Collection[str] = frozenset(),
    missing_match_nothing: bool = False,
) -> tantivy.Query | None:
    """The Tantivy query of the search options (None when there is none).

    ``missing_match_nothing``: ``index`` is one split's, searched after :func:`validate`
    checked the text against the table's fields; a clause on a field this split's index
    lacks (a column a schema change added after it was written, null in its every row)
    then matches nothing (``tokenless.nothing_for_missing_fields``). Without it such a
    clause is a ``QuerySyntaxError`` naming the field.

    ``exact_dates`` names (lowercase) the date fields whose range queries
    compare microseconds on the split searched (``SplitTraits.exact_dates``);
    without it (planning) a fast date field is taken to be one, as this
    package writes them. ``whole_dates`` names (lowercase) the date fields
    holding whole-second values only (Spark ``date`` columns): exact either way.

    Raises:
        QuerySyntaxError: a query Tantivy cannot parse.
        InexactDateBoundError: a date bound the index cannot decide exactly
            (:func:`_date_safe`).
    """
    return _build(
        index,
        spec,
        fields,
        exact_dates=exact_dates,
        whole_dates=whole_dates,
        missing_match_nothing=missing_match_nothing,
    )


def _build(
    index: tantivy.Index,
    spec: SearchSpec,
    fields: Mapping[str, FieldSpec],
    *,
    exact_dates: Collection[str] | None = None,
    whole_dates: Collection[str] = frozenset(),
    missing_match_nothing: bool = False,
    shapes: list[str] | None = None,
) -> tantivy.Query | None:
    """:func:`build_query`; ``shapes`` (when given) gets the Debug text of each parsed
    part (the parts built without parsing, term queries and the match-nothing query, hold
    no exists clause and no term longer than their option text)."""
    parts: list[tantivy.Query] = []
    searchable = [f for f in fields.values() if f.indexed]
    defaults = [f.name for f in searchable if f.is_tokenized] or [
        f.name for f in searchable if f.is_exact
    ]
    dated = [f for f in fields.values() if f.kind is FieldKind.DATE]
    dates = {f.name for f in dated}
    coarse = {
        f.name
        for f in dated
        if f.name.lower() not in whole_dates
        and not (f.fast if exact_dates is None else f.name.lower() in exact_dates)
    }
    doubles = {f.name for f in fields.values() if f.kind is FieldKind.F64}
    token_limit = min(
        [f.token_length for f in fields.values() if f.is_tokenized] + [_EN_STEM_TOKEN_LIMIT]
    )
    missing = _missing_fields(index, fields) if missing_match_nothing else _no_field_missing
    if spec.query:
        from indextables.search.query.ipforms import rewrite_ip_forms

        present = nothing_for_missing_fields(spec.query, missing)
        ip_dated = _date_safe(rewrite_ip_forms(present, fields), dates, coarse, "query")
        safe = spark_float_clauses(_open_ranges(ip_dated, doubles), doubles)
        parts.append(
            _parse(
                index,
                safe,
                defaults,
                "query",
                spec.query,
                token_limit=token_limit,
                fields=fields,
                limit=spec.max_term_expansions,
                shapes=shapes,
            )
        )
    for column in (*spec.text_search, *spec.field_match):
        if column.lower() not in fields:
            # A column added to the table after this split was written: null in every
            # row here, so it matches nothing (validated against the table's fields).
            return _nothing()
    for column, text in spec.text_search.items():
        name = fields[column.lower()].name
        option = f"textsearch.{column}"
        safe = _date_safe(nothing_for_missing_fields(text, missing), dates, coarse, option)
        safe = spark_float_clauses(_open_ranges(safe, doubles), doubles)
        parts.append(
            _parse(
                index,
                safe,
                [name],
                option,
                text,
                token_limit=token_limit,
                fields=fields,
                limit=spec.max_term_expansions,
                shapes=shapes,
            )
        )
    for column, value in spec.field_match.items():
        found = fields[column.lower()]
        if found.kind is FieldKind.IP:
            parts.append(_ip_match(index, found.name, column, value, shapes))
        else:
            parts.append(tantivy.Query.term_query(index.schema, found.name, value))
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    return tantivy.Query.boolean_query([(tantivy.Occur.Must, p) for p in parts])


# Tantivy's refusal of a clause on a field its index lacks.
_NO_SUCH_FIELD = "Field does not exist"


def _no_field_missing(name: str) -> bool:
    return False


def _missing_fields(index: tantivy.Index, fields: Mapping[str, FieldSpec]) -> Callable[[str], bool]:
    """Whether a field name written in a query is absent from ``index`` (``tokenless``):
    a column a schema change added after the split was written. A name is present when
    it or a dotted prefix of it (a JSON path) is one of ``fields``; any other name is
    asked of the split's parser (a split listed without its doc mapping has no
    ``fields``). Names the table does not have at all were refused by :func:`validate`,
    whose index holds every field of the table."""
    known: dict[str, bool] = {}

    def missing(name: str) -> bool:
        parts = name.lower().split(".")
        if any(".".join(parts[:n]) in fields for n in range(1, len(parts) + 1)):
            return False
        if name not in known:
            try:
                # ``name:*`` parses on any name
                parsecache.tantivy_parse(index, f"{name}:x", [], False)
            except ValueError as error:
                known[name] = _NO_SUCH_FIELD in str(error)
            else:
                known[name] = False
        return known[name]

    return missing


# A range open at both ends: ``f:[* TO *]``, any brackets.
_OPEN_RANGE = re.compile(r"([A-Za-z_][\w.\-]*):\s*[\[{]\s*\*\s+TO\s+\*\s*[\]}]")


def _open_ranges(text: str, floats: Collection[str]) -> str:
    """``f:[* TO *]`` written ``f:*`` (the field has a value): Tantivy parses a range open
    at both ends as a query matching nothing. Float fields are left to
    :func:`~indextables.search.query.floatquery.spark_float_clauses` (NaN rules)."""
    if "*" not in text:
        return text
    out: list[str] = []
    position = 0
    for match in clauses(text, (_OPEN_RANGE,)):
        if match.group(1) in floats:
            continue
        out.append(text[position : match.start()])
        out.append(f"{match.group(1)}:*")
        position = match.end()
    out.append(text[position:])
    return "".join(out)


def _ip_match(
    index: tantivy.Index, name: str, column: str, value: str, shapes: list[str] | None = None
) -> tantivy.Query:
    """``fieldmatch`` on an ip field: one address, or every address of a CIDR
    (``10.0.0.0/8``) or trailing-wildcard (``10.1.*.*``) form, as ``query`` takes them."""
    from indextables.search.query.ipforms import range_query_text

    option = f"fieldmatch.{column}"
    try:
        text = range_query_text(name, value)
    except QuerySyntaxError as error:
        raise QuerySyntaxError(f"option {option}: {error}") from None
    if text is not None:
        return _parse(index, text, [name], option, shapes=shapes)
    try:
        return tantivy.Query.term_query(index.schema, name, value)
    except ValueError:
        raise QuerySyntaxError(
            f"option {option}={value!r} is not an IP address, a CIDR (10.0.0.0/8) or a "
            "trailing-wildcard form (10.1.*.*)"
        ) from None


def _nothing() -> tantivy.Query:
    """A query that matches no document."""
    return tantivy.Query.boolean_query([(tantivy.Occur.MustNot, tantivy.Query.all_query())])


def _date_safe(text: str, dates: set[str], coarse: set[str], option: str) -> str:
    """``text`` with exact date terms, refused where a date bound would not be exact.

    A bound at or beyond an end of Tantivy's date span would match the rows
    clamped there; on ``coarse`` date fields (whose ranges read second-precision
    terms) only whole-second bounds of the right side are exact
    (:func:`~indextables.search.query.datequery.inexact_date_literals`).
    """
    rewritten = exact_date_terms(text, dates)
    edges = edge_date_literals(rewritten, dates)
    if edges:
        field, literal = edges[0]
        raise QuerySyntaxError(
            f"option {option}: the date bound {literal!r} on column {field!r} is at or beyond "
            f"an end of the span Tantivy can index ({_iso(TANTIVY_MIN_DATE)} .. "
            f"{_iso(TANTIVY_MAX_DATE)}), where the index cannot tell values apart; "
            "filter such dates with a Spark filter (where=/.filter) instead"
        )
    inexact = inexact_date_literals(rewritten, coarse)
    if inexact:
        field, literal = inexact[0]
        raise InexactDateBoundError(
            f"option {option}: the date bound {literal!r} on column {field!r} cannot be "
            "matched exactly: the column is not a fast field at microsecond precision here, "
            "so Tantivy compares its dates at whole seconds (truncated toward 1970). Make it "
            "fast (spark.indextables.indexing.fastfields), use a whole-second inclusive lower "
            "bound or exclusive upper bound after 1970 (ts:[a TO b}), or filter with a Spark "
            "filter (where=/.filter)"
        )
    return rewritten


def _iso(value: datetime) -> str:
    return value.isoformat().replace("+00:00", "Z")


# Tantivy's refusal of a query whose clauses all exclude.
_ONLY_EXCLUSIONS = "Only excluding terms given"
# Tantivy's refusal of a regex (a wildcard term's) whose automaton is too large.
_REGEX_TOO_LARGE = "Compiled regex exceeds size limit"
# Tantivy's en_stem analyzer drops tokens of 40 bytes or more, whatever the options say.
_EN_STEM_TOKEN_LIMIT = 40


def _parse(
    index: tantivy.Index,
    text: str,
    defaults: list[str],
    option: str,
    given: str | None = None,
    *,
    token_limit: int = 1,
    fields: Mapping[str, FieldSpec] | None = None,
    limit: int | None = None,
    shapes: list[str] | None = None,
) -> tantivy.Query:
    """Parse ``text`` (the option's text as rewritten); errors quote ``given``, the text
    the user wrote, when there is one. ``token_limit``: the shortest token length limit of
    the fields (``tokenless``; 1 parses every clause alone to check it); ``fields``: the
    fields by lowercase name, for wildcard, fuzzy and phrase-prefix terms (``termexpand``,
    ``fuzzyterms``, ``phraseprefix``; none without them), ``limit`` the most terms of the
    split each may stand for (None: ``termexpand.MAX_TERM_EXPANSIONS``); ``shapes`` gets
    the parsed query's Debug text. Tantivy's parse is kept per schema and rewritten text
    (``parsecache``)."""
    from indextables.search.query.fuzzyterms import rewrite_fuzzy_terms
    from indextables.search.query.negation import exclusion_only_groups, rewrite_negations
    from indextables.search.query.phraseprefix import rewrite_phrase_prefixes
    from indextables.search.query.termexpand import has_regex_terms, rewrite_prefix_terms
    from indextables.search.query.termforms import check_term_forms
    from indextables.search.query.tokenless import nothing_for_tokenless
    from indextables.search.splits.nearterms import near_terms_of
    from indextables.search.splits.termbuffer import infix_terms_of

    shown = text if given is None else given
    regexes = False
    if fields is not None:
        written = text
        limit = termexpand.MAX_TERM_EXPANSIONS if limit is None else limit
        counter = _term_counter(index)
        text, regexes = rewrite_phrase_prefixes(
            text, fields, _prefix_lister(index), option, defaults, limit
        )
        text, wildcards = rewrite_prefix_terms(
            text, fields, counter, option, defaults, limit, infix_terms_of(index)
        )
        text, fuzzy_regexes = rewrite_fuzzy_terms(
            text, fields, _term_lister(index), option, defaults, limit, near_terms_of(index)
        )
        regexes = regexes or wildcards or fuzzy_regexes or has_regex_terms(written)
    check_term_forms(text, option, shown)
    rewritten = nothing_for_tokenless(
        rewrite_negations(text, option),
        functools.partial(_parses_empty, index, defaults),
        token_limit,
    )
    try:
        try:
            parsed = parse_text(index, rewritten, defaults, regexes=regexes)
        except ValueError as error:
            if _ONLY_EXCLUSIONS not in str(error):
                raise
            # Only exclusions (NOT b, -b -c): every document without them.
            parsed = parse_text(index, f"* AND {rewritten}", defaults, regexes=regexes)
    except ValueError as error:
        layout = layout_error(str(error), option, shown)
        if layout is not None:
            raise layout from None
        if regexes and _REGEX_TOO_LARGE in str(error):
            raise QuerySyntaxError(
                f"option {option}={shown!r}: a wildcard term is too complex for the index "
                f"({error}): use fewer wildcards, or filter with a where condition (LIKE)"
            ) from None
        raise QuerySyntaxError(
            f"option {option}={shown!r} is not a valid Tantivy query: {error}"
        ) from None
    if exclusion_only_groups(parsed.shape):
        raise QuerySyntaxError(
            f"option {option}={shown!r}: an exclusion (NOT x, -x) stands alone in a group "
            "or after OR, where the index matches nothing for it; write it next to what it "
            "excludes from (a AND -b, a AND NOT (b OR c)) or use a where condition"
        )
    if shapes is not None:
        shapes.append(parsed.shape)
    return parsed.query


def _term_counter(index: tantivy.Index) -> Callable[[str, str, re.Pattern[str] | None, int], int]:
    """How many terms of a field of ``index`` start with a prefix and match a pattern (at
    most ``most``; ``termexpand.CountTerms``)."""
    searchers: list[tantivy.Searcher] = []

    def count(name: str, prefix: str, pattern: re.Pattern[str] | None, most: int) -> int:
        if not searchers:
            searchers.append(index.searcher())
        if pattern is None:
            return len(searchers[0].terms_with_prefix(name, prefix, limit=most))
        found = 0
        for term, _ in searchers[0].terms_with_prefix(name, prefix):
            if pattern.fullmatch(term):
                found += 1
                if found >= most:
                    break
        return found

    return count


def _prefix_lister(index: tantivy.Index) -> Callable[[str, str, int], list[str]]:
    """The terms of a field of ``index`` starting with a prefix, at most ``most``
    (``phraseprefix.PrefixTerms``)."""

    def terms(name: str, prefix: str, most: int) -> list[str]:
        found = index.searcher().terms_with_prefix(name, prefix, limit=most)
        return [term for term, _ in found]

    return terms


def _term_lister(index: tantivy.Index) -> Callable[[str], list[str]]:
    """Every term of a field of ``index`` (``fuzzyterms.ListTerms``)."""

    def terms(name: str) -> list[str]:
        return [term for term, _ in index.searcher().terms_with_prefix(name, "")]

    return terms


def _parses_empty(index: tantivy.Index, defaults: list[str], clause: str) -> bool:
    """Whether ``clause`` alone parses to Tantivy's empty query (its analyzer yields no
    token); a clause Tantivy refuses is left for the whole query's parse to report."""
    try:
        return parse_text(index, clause, defaults).shape == "Query(EmptyQuery)"
    except ValueError:
        return False


# Tantivy's refusals of a query the field's layout cannot answer, each with our explanation
# of it ({name}: the column, {option}/{text}: the option given).
_LAYOUT_REFUSALS = (
    (
        re.compile(r"The field '([^']+)' does not have positions indexed"),
        "option {option}={text!r}: a phrase query on column {name!r}, whose index holds "
        "no positions (it was built with spark.indextables.indexing.indexrecordoption."
        "{name}=basic or freq, or spark.indextables.indexing.text.indexRecordOption): "
        "search the words without quotes, or build with indexrecordoption.{name}=position",
    ),
    (
        re.compile(r"The field '([^']+)' is not declared as indexed"),
        "option {option}={text!r}: column {name!r} is not indexed (a fast-only column, "
        "spark.indextables.indexing.fastonlyfields, or store-only): filter it with a range "
        "({name}:[v TO v]) or a where condition instead of a term",
    ),
)


def layout_error(message: str, option: str, text: str) -> FieldLayoutError | None:
    """The clear error for Tantivy's refusal of a query the field's layout cannot answer
    (a phrase without positions, a term on a fast-only field), or None for other errors."""
    for pattern, explanation in _LAYOUT_REFUSALS:
        found = pattern.search(message)
        if found:
            return FieldLayoutError(
                explanation.format(option=option, text=text, name=found.group(1))
            )
    return None
