"""``AND NOT`` in query text, as a reader of the query means it.

Tantivy's parser (tantivy-py 0.27) reads ``a AND NOT b`` as ``+a +(-b)``: the
inner group holds only an exclusion, which matches no document, so the whole
query silently matched nothing. ``a AND -b`` is the same question in the form
Tantivy answers (every ``a`` without ``b``), so :func:`rewrite_negations`
rewrites the one into the other outside quoted phrases. ``a OR NOT b`` (``a``,
or anything without ``b``) has no such form in Tantivy's grammar and is
refused naming the option, rather than answered as ``a`` alone.
"""

from __future__ import annotations

import re
from typing import Final

from indextables.search.errors import QuerySyntaxError

__all__ = ["rewrite_negations"]

# Quoted phrases (with backslash escapes) are kept as they are.
_QUOTED: Final = re.compile(r'("(?:\\.|[^"\\])*")')
_AND_NOT: Final = re.compile(r"(?<![\w\\])(AND|&&)(\s+)NOT\s+")
_OR_NOT: Final = re.compile(r"(?<![\w\\])(OR|\|\|)\s+NOT\s+")


def rewrite_negations(text: str, option: str) -> str:
    """``text`` with each ``AND NOT x`` written ``AND -x``.

    Raises:
        QuerySyntaxError: the text holds ``OR NOT``, which Tantivy cannot answer.
    """
    if "NOT" not in text:
        return text
    parts = _QUOTED.split(text)
    for i in range(0, len(parts), 2):  # the unquoted parts
        if _OR_NOT.search(parts[i]):
            raise QuerySyntaxError(
                f"option {option}={text!r}: 'OR NOT' cannot be answered by the index "
                "(Tantivy matches nothing for a group that only excludes); write the "
                "exclusion with AND (a AND -b) or use a where condition"
            )
        parts[i] = _AND_NOT.sub(r"\1\2-", parts[i])
    return "".join(parts)
