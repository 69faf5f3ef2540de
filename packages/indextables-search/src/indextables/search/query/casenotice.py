"""A notice when a ``query`` term on an exact ``string`` field matches nothing in a
split while another case of it (``error`` / ``ERROR`` / ``Error``) is in the split's
term dictionary.

Exact (raw-tokenized) string fields are case-sensitive, as in the reference: the
semantics stay. The check runs only for a split where the whole query found no
row, so a query whose terms match costs nothing; each (query, field, term) is
reported once per process, as a :class:`CaseMismatchWarning` (a Python
``UserWarning``) and a logging warning of ``indextables.search.query.casenotice``.
"""

from __future__ import annotations

import logging
import re
import warnings
from collections.abc import Mapping
from typing import Any

from indextables.search.schema.mapping import FieldKind, FieldSpec

_LOG = logging.getLogger(__name__)

# field:term or field:"phrase" (a range, regex, wildcard or fuzzy term is left alone)
_TERM = re.compile(
    r'(?<![\w.])([A-Za-z_][\w.]*):("(?:[^"\\]|\\.)*"|[^\s()"\[\]{}^~*?/]+)(?=[\s()]|$)'
)
_SEEN: set[tuple[str, str, str]] = set()


class CaseMismatchWarning(UserWarning):
    """A query term on an exact string field matched nothing; another case of it exists."""


def _exact(spec: FieldSpec | None) -> bool:
    if spec is None:
        return False
    return spec.kind is FieldKind.STRING or (
        spec.kind is FieldKind.TEXT and (spec.tokenizer or "").lower() == "raw"
    )


def _cases(term: str) -> list[str]:
    forms = dict.fromkeys((term.lower(), term.upper(), term.capitalize(), term.title()))
    return [form for form in forms if form != term]


def notice_case_mismatch(searcher: Any, query: str | None, fields: Mapping[str, FieldSpec]) -> None:
    """Warn once per (query, field, term) when a term of ``query`` on an exact string
    field is absent from this split's index while another case of it is present.

    Call it only for a split where the query found no row.
    """
    if not query:
        return
    for name, raw in _TERM.findall(query):
        spec = fields.get(name.lower())
        if not _exact(spec):
            continue
        assert spec is not None
        term = raw[1:-1].replace('\\"', '"') if raw.startswith('"') else raw
        key = (query, spec.name, term)
        if not term or key in _SEEN or searcher.doc_freq(spec.name, term) > 0:
            continue
        found = next((f for f in _cases(term) if searcher.doc_freq(spec.name, f) > 0), None)
        if found is None:
            continue
        _SEEN.add(key)
        message = (
            f"query {query!r}: {spec.name}:{term} matches nothing, but {found!r} is in the "
            f"index; `string` fields are exact and case-sensitive (try {spec.name}:{found})"
        )
        _LOG.warning(message)
        warnings.warn(message, CaseMismatchWarning, stacklevel=2)
