"""Wildcard terms in query text (``f:pre*``, ``f:*suf``, ``f:*mid*``, ``f:a*b``,
``f:h?llo``, bare ``hel*``), answered over the field's term dictionary.

Tantivy's parser reads ``msg:hel*`` as the plain term ``hel`` (its analyzer drops
the ``*``). :func:`rewrite_prefix_terms` writes each wildcard term as Tantivy
regex clauses over whole terms (``f:/hel[\\s\\S]*/``; ``*`` is any characters,
``?`` one character), which the caller parses with regexes allowed. A term is a
pattern when it holds a ``*`` or ``?``, escaped or not; ``\\*``, ``\\?`` and
``\\\\`` stand for the character itself. The pattern is cut into tokens by the
field's tokenizer rules, the wildcards counting as token characters:

- on a ``text`` field with the ``default`` analyzer, at every other character
  than a letter or digit (an escaped ``*`` too: the tokenizer drops it), each
  token lowercased as the analyzer lowercases (character by character);
- on a ``text`` field with the ``whitespace`` analyzer, at escaped spaces,
  lowercased the same way;
- on an exact (``string``) field not at all: the pattern covers the whole value,
  case-sensitive (``host:web-*`` finds the values starting ``web-``).

Each token becomes one regex clause, and a pattern of several tokens requires
them all (``msg:web-1*`` is ``msg:/web/ AND msg:/1[\\s\\S]*/``: a row with a token
``web`` and a token starting ``1``, anywhere in the field, as the reference's
one clause per token joined by AND). A token of ``*`` alone next to others is
dropped (every token of a row with the others matches it). A term without a
field (``hel*``) searches the default fields (those a bare term searches), one
group per field joined by OR; a boost (``hel*^2``) is kept on every clause. A
bare regex (``/h[ae]llo/``) is written per default field the same way.

Other forms (``en_stem`` and JSON fields, a quote or ``~`` inside a term) are
left to :func:`~indextables.search.query.termforms.check_term_forms`, which
refuses them. A token matching more terms of a split than the expansion limit
(``max_term_expansions``, :data:`MAX_TERM_EXPANSIONS` by default) is refused
with a :class:`~indextables.search.errors.QuerySyntaxError` naming the term and
the limit (``count_terms`` counts them on the split's index, over the terms
starting with the token's literal prefix: a leading wildcard walks the field's
whole term dictionary).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from enum import Enum
from typing import Final

from indextables.search.errors import ArgumentError, QuerySyntaxError
from indextables.search.query.querytext import clause_spans, regex_end, splice_clauses
from indextables.search.query.tokenless import NOTHING
from indextables.search.schema.mapping import FieldKind, FieldSpec

__all__ = [
    "call_expansion_limit",
    "MAX_TERM_EXPANSIONS",
    "check_expansion_limit",
    "has_regex_terms",
    "rewrite_prefix_terms",
    "wildcard_regex",
]

MAX_TERM_EXPANSIONS: Final = 100_000
"""The default of the most terms of one split a wildcard, fuzzy or phrase-prefix term may
stand for (the ``max_term_expansions`` option)."""

_FIELD: Final = re.compile(r"([A-Za-z_][\w.\-]*):")
_FIELD_REGEX: Final = re.compile(r"(?:[A-Za-z_][\w.\-]*:\s*)?/")
_BOOST: Final = re.compile(r"\^\d+(?:\.\d+)?$")
_OPERATORS: Final = frozenset({"AND", "OR", "NOT", "&&", "||", "-", "+", "*"})
_ASCII_WORD: Final = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")

CountTerms = Callable[[str, str, "re.Pattern[str] | None", int], int]
"""``(field, prefix, pattern, most)`` -> how many of the split's terms of ``field`` start
with ``prefix`` and fully match ``pattern`` (every one when None), counting at most
``most``."""


InfixTerms = Callable[[str, str, bool, int], "list[str] | None"]
"""``(field, literal, suffix, most)`` -> the split's terms of ``field`` holding ``literal``
(ending with it when ``suffix``), at most ``most``; None when the split cannot say (the
token is then written as a regex)."""


class Wild(Enum):
    """A wildcard of a pattern token: ``*`` any characters, ``?`` one character."""

    ANY = "*"
    ONE = "?"


Atom = str | Wild
"""One character of a pattern token, or a wildcard."""


def check_expansion_limit(limit: object, option: str = "max_term_expansions") -> int:
    """``limit`` as the expansion limit: an int of at least 1.

    Raises:
        QuerySyntaxError: naming the option and the value.
    """
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise QuerySyntaxError(f"option {option}={limit!r} must be an integer of at least 1")
    return limit


def call_expansion_limit(value: object) -> int | None:
    """A call's ``max_term_expansions=`` checked: None (the option's limit) or an int >= 1.

    Raises:
        ArgumentError: naming the argument and the value.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ArgumentError(
            f"max_term_expansions={value!r} must be None or an int >= 1 (the most terms of "
            "one split a wildcard, fuzzy or phrase-prefix term may stand for)"
        )
    return value


def rewrite_prefix_terms(
    text: str,
    fields: Mapping[str, FieldSpec],
    count_terms: CountTerms | None,
    option: str,
    defaults: Sequence[str] = (),
    limit: int = MAX_TERM_EXPANSIONS,
    infix: InfixTerms | None = None,
) -> tuple[str, bool]:
    """``text`` with each answerable wildcard term (and each bare regex) as regex clauses
    (module doc), and whether any was rewritten (the caller then parses with regexes
    allowed). ``defaults``: the names of the fields a term without a field searches.

    Raises:
        QuerySyntaxError: a token more terms match than ``limit``.
    """
    if "*" not in text and "?" not in text and "/" not in text:
        return text, False

    def rewrite(token: str, clause: str) -> tuple[str, bool] | None:
        if token in _OPERATORS:
            return None
        written = _bare_regex(clause, fields, defaults)
        if written is None:
            written = _infix_regex(clause, fields, infix, limit)
        if written is None:
            written = _pattern_text(clause, fields, defaults, count_terms, option, limit, infix)
        return None if written is None else (written, True)

    written, replaced, _ = splice_clauses(text, rewrite)
    return written, replaced


def has_regex_terms(text: str) -> bool:
    """Whether ``text`` holds a regex clause (``f:/re/``, Tantivy's regex over whole terms),
    which the caller then parses with regexes allowed."""
    if "/" not in text:
        return False
    return any(_FIELD_REGEX.match(text, body) is not None for _, body, _ in clause_spans(text))


def _bare_regex(
    clause: str, fields: Mapping[str, FieldSpec], defaults: Sequence[str]
) -> str | None:
    """``/re/`` (a boost after it kept) as the regex on every default field, else None."""
    if not clause.startswith("/") or not defaults:
        return None
    end = regex_end(clause, 0)
    rest = clause[end:]
    if end < 2 or clause[end - 1] != "/" or (rest and _BOOST.fullmatch(rest) is None):
        return None
    names = [fields[d.lower()].name for d in defaults if d.lower() in fields]
    if not names:
        return None
    return _any_of([f"{name}:{clause}" for name in names])


_INFIX_REGEX: Final = re.compile(
    r"([A-Za-z_][\w.\-]*):/\[\\s\\S\]\*((?:[A-Za-z0-9]|\\x\{[0-9a-f]{1,6}\})+)"
    r"(\[\\s\\S\]\*)?/"
)
_HEX_ESCAPE: Final = re.compile(r"\\x\{([0-9a-f]{1,6})\}")


def _infix_regex(
    clause: str, fields: Mapping[str, FieldSpec], infix: InfixTerms | None, limit: int
) -> str | None:
    """A regex clause ``f:/[\\s\\S]*lit[\\s\\S]*/`` or ``f:/[\\s\\S]*lit/`` (as
    ``str.contains`` writes them) as the term set of the split's terms holding (ending
    with) the literal; None when not of that form, when the split cannot say, or past
    ``limit`` terms (the regex then stays)."""
    found = _INFIX_REGEX.fullmatch(clause) if infix is not None else None
    spec = None if found is None else fields.get(found.group(1).lower())
    if found is None or infix is None or spec is None or not spec.indexed:
        return None
    literal = _HEX_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), found.group(2))
    if any(0xD800 <= ord(c) <= 0xDFFF for c in literal):
        return None
    terms = infix(spec.name, literal, found.group(3) is None, limit + 1)
    if terms is None or len(terms) > limit:
        return None
    return held_clause(spec, terms, "")


def _any_of(clauses: Sequence[str]) -> str:
    return clauses[0] if len(clauses) == 1 else "(" + " OR ".join(clauses) + ")"


def _pattern_text(
    clause: str,
    fields: Mapping[str, FieldSpec],
    defaults: Sequence[str],
    count_terms: CountTerms | None,
    option: str,
    limit: int,
    infix: InfixTerms | None = None,
) -> str | None:
    """The regex clauses of a wildcard clause (module doc), or None when it is none or
    not answerable."""
    found = _FIELD.match(clause)
    value = clause[found.end() :] if found else clause
    boost = _BOOST.search(value)
    suffix = boost.group(0) if boost else ""
    value = value[: len(value) - len(suffix)]
    if value in ("", "*") or not any(c in value for c in "*?"):
        return None
    if value[0] in '[{<>/("-+' or any(c in value for c in '~"^'):
        return None
    if found is None and ":" in value:
        return None  # ``1:b*``: no field name Tantivy reads
    names = [found.group(1)] if found else list(defaults)
    if not names:
        return None  # no default field: left to the check, which names the term
    groups = []
    for name in names:
        spec = fields.get(name.lower())
        tokens = None if spec is None else pattern_tokens(spec, value)
        if spec is None or tokens is None:
            return None
        leaves = []
        for atoms in tokens:
            held = _held_terms(spec, atoms, infix, limit)
            if held is not None:
                if len(held) > limit:
                    raise _too_many(option, clause, limit, spec.name)
                leaves.append(held_clause(spec, held, suffix))
                continue
            if count_terms is not None:
                prefix, python = _counting_form(atoms)
                if count_terms(spec.name, prefix, python, limit + 1) > limit:
                    raise _too_many(option, clause, limit, spec.name)
            leaves.append(f"{spec.name}:/{atoms_regex(atoms)}/{suffix}")
        groups.append(leaves[0] if len(leaves) == 1 else "(" + " AND ".join(leaves) + ")")
    return _any_of(groups)


def _too_many(option: str, clause: str, limit: int, name: str) -> QuerySyntaxError:
    return QuerySyntaxError(
        f"option {option}: the wildcard term {clause!r} stands for more "
        f"than {limit:,} terms of column {name!r} in one split "
        "(max_term_expansions): write a longer literal prefix, or raise "
        "the limit"
    )


def infix_form(atoms: Sequence[Atom]) -> tuple[str, bool] | None:
    """(literal, suffix) of a token ``*literal*`` (suffix False) or ``*literal`` (True):
    a literal of at least one character after one or more leading ``*``; else None."""
    at = 0
    while at < len(atoms) and atoms[at] is Wild.ANY:
        at += 1
    end = len(atoms)
    while end > at and atoms[end - 1] is Wild.ANY:
        end -= 1
    middle = atoms[at:end]
    if at == 0 or not middle or any(isinstance(a, Wild) for a in middle):
        return None
    return "".join(middle), end == len(atoms)  # type: ignore[arg-type]


def _held_terms(
    spec: FieldSpec, atoms: Sequence[Atom], infix: InfixTerms | None, limit: int
) -> list[str] | None:
    if infix is None:
        return None
    form = infix_form(atoms)
    if form is None:
        return None
    return infix(spec.name, form[0], form[1], limit + 1)


def held_clause(spec: FieldSpec, terms: list[str], boost: str) -> str:
    """The clause matching exactly ``terms`` of ``spec``'s field."""
    return term_set(spec.name, terms, spec.is_tokenized, boost)[0]


def pattern_tokens(spec: FieldSpec, value: str) -> list[list[Atom]] | None:
    """The tokens of pattern ``value`` on ``spec``'s field (module doc): each a list of
    characters (lowercased where the analyzer lowercases) and wildcards; None when the
    field takes no patterns or a backslash ends ``value``."""
    if not spec.indexed or spec.kind not in (FieldKind.STRING, FieldKind.TEXT):
        return None
    if spec.kind is FieldKind.TEXT and spec.tokenizer not in ("default", "whitespace", "raw"):
        return None
    items: list[tuple[str, bool]] = []  # (character, is a wildcard)
    position = 0
    while position < len(value):
        char = value[position]
        if char == "\\":
            if position + 1 >= len(value):
                return None
            items.append((value[position + 1], False))
            position += 2
            continue
        items.append((char, char in "*?"))
        position += 1
    if spec.is_exact:
        return [[Wild(c) if wild else c for c, wild in items]]
    whitespace = spec.tokenizer == "whitespace"
    tokens: list[list[Atom]] = [[]]
    for char, wild in items:
        if wild:
            tokens[-1].append(Wild(char))
        elif char.isspace() if whitespace else not char.isalnum():
            tokens.append([])
        else:
            tokens[-1].extend(char.lower())
    tokens = [t for t in tokens if t]
    if not tokens:
        return None
    meaningful = [t for t in tokens if any(a is not Wild.ANY for a in t)]
    return meaningful or tokens[:1]


def _counting_form(atoms: list[Atom]) -> tuple[str, re.Pattern[str] | None]:
    """(the token's literal prefix, a Python regex of the whole token, or None when the
    token is that prefix and one ``*``)."""
    prefix = ""
    for atom in atoms:
        if isinstance(atom, Wild):
            break
        prefix += atom
    rest = atoms[len(prefix) :]
    if rest == [Wild.ANY]:
        return prefix, None
    python = "".join(
        ".*" if a is Wild.ANY else "." if a is Wild.ONE else re.escape(a) for a in atoms
    )
    return prefix, re.compile(python, re.DOTALL)


def atoms_regex(atoms: Sequence[Atom]) -> str:
    """Tantivy's regex (in query text) of the terms a pattern token matches: ASCII letters
    and digits as themselves, every other character as ``\\x{hex}``, and no parenthesis
    (the text's scans read it as one token)."""
    parts = []
    for atom in atoms:
        if atom is Wild.ANY:
            parts.append("[\\s\\S]*")
        elif atom is Wild.ONE:
            parts.append("[\\s\\S]")
        elif atom in _ASCII_WORD:
            parts.append(atom)
        else:
            parts.append(f"\\x{{{ord(atom):x}}}")
    return "".join(parts)


def analyzed_term(spec: FieldSpec | None, text: str, literals: str) -> str | None:
    """``text`` as the field's analyzer leaves one term of it (exact strings as written,
    the default and whitespace analyzers lowercasing each character on its own, as
    Tantivy's filter does: no final-sigma rule), or None when ``spec`` is no indexed field
    of those kinds or ``literals`` (``text`` without its pattern characters) would not
    stay one token."""
    if spec is None or not spec.indexed:
        return None
    if spec.kind is FieldKind.STRING:
        return text
    if spec.kind is not FieldKind.TEXT:
        return None
    if spec.tokenizer == "default":
        if not all(c.isalnum() for c in literals):
            return None  # more than one token, or characters the analyzer drops
    elif spec.tokenizer != "whitespace" or any(c.isspace() for c in literals):
        return None
    return "".join(c.lower() for c in text)


def wildcard_regex(pattern: str) -> str:
    """The regex (Tantivy's dialect, in query text) of every term ``pattern`` matches
    (``*`` any characters, ``?`` one, every other character itself)."""
    return atoms_regex([Wild(c) if c in "*?" else c for c in pattern])


def term_set(name: str, terms: list[str], tokenized: bool, boost: str) -> tuple[str, bool]:
    """The clause matching exactly ``terms`` of field ``name``, and whether it holds regex
    clauses: a term set, with each term an analyzer would split again (on a tokenized
    field, a term with a character other than a letter or digit, as ``İ`` lowercases to
    ``i`` and a combining dot) as a regex clause of its own."""
    if not terms:
        return NOTHING, False
    plain = [t for t in terms if not tokenized or all(c.isalnum() for c in t)]
    kept = set(plain)
    regexes = [f"{name}:/{atoms_regex(list(t))}/{boost}" for t in terms if t not in kept]
    quoted = ['"' + t.replace("\\", "\\\\").replace('"', '\\"') + '"' for t in sorted(plain)]
    if any("]" in t or "}" in t for t in plain):
        # The text's scans read a bracket inside quotes as the set's end: a disjunction.
        clauses = [f"{name}:{q}{boost}" for q in quoted]
    else:
        clauses = [f"{name}: IN [{' '.join(quoted)}]{boost}"] if quoted else []
    clauses += regexes
    text = clauses[0] if len(clauses) == 1 else "(" + " OR ".join(clauses) + ")"
    return text, bool(regexes)
