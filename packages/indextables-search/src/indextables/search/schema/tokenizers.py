"""The reference's text analyzers, registered on every Tantivy index this package opens.

The reference (tantivy4java) replaces two of Tantivy's built-in analyzers:
``default`` and ``whitespace`` both lowercase and drop tokens longer than 255
UTF-8 bytes (Tantivy's own ``default`` drops them from 40 bytes, and its
``whitespace`` keeps case). A text field with another limit names its
analyzer ``<base>_limit_<bytes>`` in the split's schema (``default_limit_40``),
and every reader registers that name from the schema. Splits written here use
the same names and analyzers, so either implementation searches the other's
splits with the analyzer they were written with.

``raw`` and ``en_stem`` are Tantivy's own in both implementations. The
reference turns ``en_stem_limit_<n>`` and ``raw_limit_<n>`` into a plain
lowercasing analyzer (stemming or exactness lost), so a token length option
does not apply to those fields here; :func:`limit_ignored_reason` says so.
"""

from __future__ import annotations

import os
import re

import tantivy

REFERENCE_TOKEN_LENGTH = 255
#: Tokenizers whose token length the indexing options may change.
LIMITED_TOKENIZERS = ("default", "whitespace")
_LIMIT_NAME = re.compile(r"^(?P<base>[a-z_]+?)_limit_(?P<limit>\d+)$")


def with_limit(tokenizer: str, limit: int) -> str:
    """The tokenizer name recorded for ``tokenizer`` limited to ``limit`` bytes."""
    if tokenizer not in LIMITED_TOKENIZERS or limit == REFERENCE_TOKEN_LENGTH:
        return tokenizer
    return f"{tokenizer}_limit_{limit}"


def split_limit(name: str | None) -> tuple[str | None, int]:
    """``default_limit_40`` -> (``default``, 40); a plain name keeps the 255-byte limit."""
    if name is None:
        return None, REFERENCE_TOKEN_LENGTH
    match = _LIMIT_NAME.match(name)
    if match is None:
        return name, REFERENCE_TOKEN_LENGTH
    return match.group("base"), int(match.group("limit"))


def analyzer(base: str, limit: int) -> tantivy.TextAnalyzer:
    """The reference's analyzer for ``base`` (default, simple, whitespace) at ``limit`` bytes."""
    tokenizer = (
        tantivy.Tokenizer.whitespace() if base == "whitespace" else tantivy.Tokenizer.simple()
    )
    builder = tantivy.TextAnalyzerBuilder(tokenizer).filter(tantivy.Filter.lowercase())
    return builder.filter(tantivy.Filter.remove_long(limit)).build()


def register_tokenizers(index: tantivy.Index, names: tuple[str, ...] = ()) -> tantivy.Index:
    """Register the reference's analyzers on ``index``, plus every ``*_limit_<n>`` in ``names``.

    Both the indexing and the fast-field tokenizer managers get them (a fast
    text field normalizes its values with its tokenizer).
    """
    wanted = {"default": analyzer("default", REFERENCE_TOKEN_LENGTH)}
    wanted["simple"] = analyzer("simple", REFERENCE_TOKEN_LENGTH)
    wanted["whitespace"] = analyzer("whitespace", REFERENCE_TOKEN_LENGTH)
    for name in names:
        base, limit = split_limit(name)
        if base is not None and name != base:
            wanted[name] = analyzer(base, limit)
    for name, built in wanted.items():
        index.register_tokenizer(name, built)
        index.register_fast_field_tokenizer(name, built)
    return index


def schema_tokenizers(directory: str) -> tuple[str, ...]:
    """Every tokenizer name the index in ``directory`` uses (from its ``meta.json``)."""
    import json

    with open(os.path.join(directory, "meta.json"), encoding="utf-8") as handle:
        meta = json.load(handle)
    names: set[str] = set()
    for entry in meta.get("schema", []):
        options = entry.get("options", {})
        indexing = options.get("indexing") or {}
        if indexing.get("tokenizer"):
            names.add(str(indexing["tokenizer"]))
        fast = options.get("fast")
        if isinstance(fast, dict) and fast.get("with_tokenizer"):
            names.add(str(fast["with_tokenizer"]))
    return tuple(sorted(names))


def open_index(directory: str) -> tantivy.Index:
    """``tantivy.Index.open`` with the reference's analyzers registered."""
    return register_tokenizers(tantivy.Index.open(directory), schema_tokenizers(directory))


def limit_ignored_reason(tokenizer: str) -> str:
    """Why a token length option has no effect on a field with ``tokenizer``."""
    if tokenizer == "raw":
        return "a raw field indexes each value as one whole term, with no length filter"
    return (
        f"the {tokenizer} tokenizer keeps Tantivy's own filter in both implementations "
        "(the reference would drop stemming for a limited en_stem field)"
    )
