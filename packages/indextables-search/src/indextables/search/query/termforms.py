"""Wildcard and fuzzy forms in query text, which Tantivy's parser does not support.

tantivy-py 0.27 parses ``msg:hel*``, ``msg:hel?`` and ``msg:hello~1`` without
complaint but not as a reader of Lucene syntax means them: on a text field the
tokenizer drops the ``*``/``?`` (``hel*`` finds the word ``hel`` only, not
``hello``) or splits at ``~``; on an exact field the term is the literal text
``hel*``. Each silently finds other rows than asked for, so
:func:`check_term_forms` refuses an unquoted term holding a ``*``,
``?`` or ``~`` (escaped too: Tantivy keeps the backslash of ``a\\*b`` in the
term), naming the option and the term. A lone ``*`` (every document), ``f:*``
(the field has a value), range bounds (``[* TO 5]``) and quoted phrases with a
slop (``"a b"~2``) are left alone, and
IP wildcard forms (``ip:10.0.*.*``) are rewritten into ranges before this runs, as are
the wildcard, fuzzy and phrase-prefix terms :mod:`~indextables.search.query.termexpand`,
:mod:`~indextables.search.query.fuzzyterms` and
:mod:`~indextables.search.query.phraseprefix` answer (``msg:hel*``, ``hel*``,
``msg:web-1*``, ``host:a\\*b``, ``msg:helo~1``): what reaches this check is a form they
leave (a fuzzy term over several tokens, a pattern on an ``en_stem`` or JSON field).
"""

from __future__ import annotations

import re
from typing import Final

from indextables.search.errors import QuerySyntaxError
from indextables.search.query.querytext import skip_space, token_end

__all__ = ["check_term_forms"]

# A wildcard or fuzzy mark in an unquoted term value. Escaping does not help: Tantivy
# keeps the backslash of ``a\*b`` in the term.
_MARK: Final = re.compile(r"([*?~])")
_OPERATORS: Final = frozenset({"AND", "OR", "NOT", "&&", "||", "-", "+", "*"})


def check_term_forms(text: str, option: str, shown: str | None = None) -> None:
    """Raise for the first unquoted term with a wildcard or fuzzy mark (module doc);
    ``shown`` is the text as the user wrote it, for the message (``text`` by default).

    Raises:
        QuerySyntaxError: naming the option and the term.
    """
    if not any(mark in text for mark in "*?~"):
        return
    position = 0
    while position < len(text):
        position = skip_space(text, position)
        if position >= len(text):
            return
        if text[position] in "()":
            position += 1
            continue
        end = token_end(text, position)
        _check_token(text[position:end], text if shown is None else shown, option)
        position = max(end, position + 1)


def _check_token(token: str, text: str, option: str) -> None:
    if token in _OPERATORS:
        return
    value = token.lstrip("+-")
    field, colon, rest = value.partition(":")
    if colon and re.fullmatch(r"[A-Za-z_][\w.\-]*", field):
        value = rest.lstrip()
    if not value or value == "*" or value[0] in '"[{<>/' or value.startswith("IN"):
        return  # exists, a phrase, a range, a comparison, a regex or a term set
    value = re.sub(r"\^[\d.]+$", "", value)  # a boost
    found = _MARK.search(value)
    if found is None:
        return
    kind = "a fuzzy term (~)" if found.group(1) == "~" else f"a wildcard ({found.group(1)})"
    raise QuerySyntaxError(
        f"option {option}={text!r}: {token!r} is {kind}, which the index does not support: "
        "Tantivy would read it as a plain term and find other rows than asked for. Quote "
        'the term to search its characters literally (msg:"what?"), or filter with a '
        "where condition (msg LIKE 'hel%')"
    )
