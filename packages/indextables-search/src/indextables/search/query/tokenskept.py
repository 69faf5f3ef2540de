"""The split tag naming the text columns none of whose tokens a split's index dropped.

A tokenized (``text``) field's analyzer drops every token whose lowercased UTF-8
form reaches the field's token length limit (:mod:`.write.segwriter.tokenize`). A
search that must find every row holding some text (a substring test answered
through the term dictionary) is only complete on a split whose index dropped no
token of that column. The writer records that fact per split, with the analyzer
the column was tokenized with, as one tag::

    indextables.python.tokensKept={"message": "default"}

A split without the tag (older splits, the reference's, companion splits) says
nothing: a reader treats every column of it as possibly missing tokens.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

__all__ = ["TOKENS_KEPT_TAG", "merged_tokens_kept", "tokens_kept", "tokens_kept_tag"]

TOKENS_KEPT_TAG: Final = "indextables.python.tokensKept="


def tokens_kept_tag(columns: Mapping[str, str]) -> str:
    """The tag recording that no token of ``columns`` (name -> tokenizer name) was dropped."""
    return TOKENS_KEPT_TAG + json.dumps(dict(sorted(columns.items())), ensure_ascii=True)


def tokens_kept(split_tags: Iterable[str] | None) -> dict[str, str]:
    """The columns (lowercase name -> tokenizer name) a split's tags say kept every token
    (none without the tag, or when the tag does not parse)."""
    found: dict[str, str] = {}
    for tag in split_tags or ():
        if not tag.startswith(TOKENS_KEPT_TAG):
            continue
        try:
            recorded = json.loads(tag[len(TOKENS_KEPT_TAG) :])
        except ValueError:
            return {}
        if not isinstance(recorded, dict):
            return {}
        for name, tokenizer in recorded.items():
            if isinstance(name, str) and isinstance(tokenizer, str):
                found[name.lower()] = tokenizer
    return found


def merged_tokens_kept(tags: Sequence[Iterable[str] | None]) -> dict[str, str]:
    """The columns kept whole in every one of several splits, with the same tokenizer in
    each (a split merged from them drops no token of those either)."""
    if not tags:
        return {}
    kept = [tokens_kept(t) for t in tags]
    first = kept[0]
    return {
        name: tokenizer
        for name, tokenizer in first.items()
        if all(other.get(name) == tokenizer for other in kept[1:])
    }
