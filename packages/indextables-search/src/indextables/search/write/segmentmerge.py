"""MERGE SPLITS without re-indexing: the sources' segments, as they are, in one index.

A Tantivy index holds any number of segments; ``meta.json`` lists them. The
merged split is one directory holding every source's segment files unchanged
(their names are their segment ids, UUIDs, so they cannot collide), a
``meta.json`` listing every source's segments in order (same schema and index
settings: planning groups splits by doc mapping, and anything else is refused
here), a ``.managed.json`` naming those files, and the sources' Arrow copies
one after the other, marked with each segment's record batch offset (see
:mod:`indextables.search.read.rowcopy`) since a source's row keys count its
own batches. Term dictionaries stay in the form the sources carry (the
reference's SSTable form). The cost is copying bytes: no document is built and
nothing is indexed. The reference and tantivy-py read multi-segment splits (a
split written here already holds one segment per writer flush).

What this cannot take (some sources with an Arrow copy and others without, a
copy not reached by row keys, or sources whose schemas differ) raises
:class:`SegmentMergeRefused`; MERGE SPLITS then re-indexes the group's rows.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from indextables.search.read.rowcopy import (
    ROW_KEYS_LAYOUT,
    ROW_KEYS_METADATA,
    ROW_KEYS_SEGMENTED,
    segment_batches,
    segment_key,
    segmented_metadata,
)
from indextables.search.splits.splitcache import write_checksums
from indextables.search.write.splitwriter import ROWS_FILE

_MANAGED = ".managed.json"
_META = "meta.json"
# Bundled beside the index by the companion builder: such splits hold no rows.
_COMPANION_MANIFEST = "_parquet_manifest.json"


class SegmentMergeRefused(Exception):
    """The sources cannot be merged segment by segment (the message says why)."""


@dataclass(frozen=True, slots=True)
class _Source:
    directory: str
    meta: dict[str, Any]
    segments: tuple[str, ...]
    copy_schema: pa.Schema | None  # None: no Arrow copy (indexWriter.arrowCopy)


def merge_segments(sources: Sequence[str], target: str) -> int:
    """Build in the empty directory ``target`` one index holding the segments of ``sources``.

    ``sources`` are unbundled splits (their files are moved out of them).

    Returns:
        The number of documents in the merged index.

    Raises:
        SegmentMergeRefused: the sources cannot be merged this way.
    """
    found = [_source(d) for d in sources]
    _check_alike(found)
    copied = found[0].copy_schema is not None
    if copied:
        _write_copy(found, os.path.join(target, ROWS_FILE))
    segments: list[dict[str, Any]] = []
    files: list[str] = [_META]
    for source in found:
        wanted = set(source.segments)
        for name in sorted(os.listdir(source.directory)):
            if name.split(".", 1)[0] in wanted:
                os.replace(os.path.join(source.directory, name), os.path.join(target, name))
                files.append(name)
        segments.extend(source.meta["segments"])
    meta = dict(found[0].meta)
    meta["segments"] = segments
    meta["opstamp"] = max(int(s.meta.get("opstamp") or 0) for s in found)
    _write_json(os.path.join(target, _META), meta, indent=2)
    _write_json(os.path.join(target, _MANAGED), sorted(files))
    write_checksums(target, [ROWS_FILE] if copied else [])
    return sum(int(s["max_doc"]) for s in segments)


def _source(directory: str) -> _Source:
    if os.path.exists(os.path.join(directory, _COMPANION_MANIFEST)):
        raise SegmentMergeRefused("a source is a companion split")
    try:
        with open(os.path.join(directory, _META), encoding="utf-8") as handle:
            meta = json.load(handle)
        segments = tuple(segment_key(str(s["segment_id"])) for s in meta["segments"])
        deleted = any(s.get("deletes") for s in meta["segments"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        raise SegmentMergeRefused(f"a source's meta.json is unreadable: {error}") from None
    if deleted:
        raise SegmentMergeRefused("a source segment has deleted documents")
    path = os.path.join(directory, ROWS_FILE)
    if not os.path.exists(path):
        # Nothing copied (indexWriter.arrowCopy): the segments' doc stores hold every row.
        return _Source(directory, meta, segments, None)
    with pa.memory_map(path) as handle:
        schema = pa.ipc.open_file(handle).schema
    layout = (schema.metadata or {}).get(ROW_KEYS_METADATA)
    if layout not in (ROW_KEYS_LAYOUT, ROW_KEYS_SEGMENTED):
        raise SegmentMergeRefused("a source's Arrow copy is not reached by row keys")
    try:
        segment_batches(schema.metadata)
    except (ValueError, TypeError) as error:
        raise SegmentMergeRefused(
            f"a source's segment batch offsets are unreadable: {error}"
        ) from None
    return _Source(directory, meta, segments, schema)


def _check_alike(sources: Sequence[_Source]) -> None:
    first = sources[0]
    seen: set[str] = set()
    for source in sources:
        if source.meta.get("schema") != first.meta.get("schema"):
            raise SegmentMergeRefused("the sources' Tantivy schemas differ")
        if _settings(source.meta) != _settings(first.meta):
            raise SegmentMergeRefused("the sources' index settings differ")
        if (source.copy_schema is None) != (first.copy_schema is None):
            raise SegmentMergeRefused("some sources have an Arrow copy and others none")
        if source.copy_schema is not None and not source.copy_schema.equals(
            first.copy_schema, check_metadata=False
        ):
            raise SegmentMergeRefused("the sources' Arrow copies have different columns")
        if seen & set(source.segments):
            raise SegmentMergeRefused("two sources hold the same segment")
        seen.update(source.segments)


def _settings(meta: dict[str, Any]) -> dict[str, Any]:
    """A source's index settings that must agree, i.e. all but the doc-store block size.

    The block size only tells a writer when to close a block: Tantivy's reader finds
    every block through the store's own skip index (``StoreReader::block_checkpoint``),
    and each block ends with its documents' offsets (``block_read_index``), so one
    index may hold segments written with different block sizes (Tantivy's own merger
    stacks a segment's blocks unchanged into a store of another size:
    ``StoreWriter::stack``). ``indexWriter.docStoreBlockSize`` changed default
    (16K -> 4K, ``options.DEFAULT_DOCSTORE_BLOCK_SIZE``): older and newer splits merge
    by segments. The merged ``meta.json`` keeps the first source's value.
    """
    settings = dict(meta.get("index_settings") or {})
    settings.pop("docstore_blocksize", None)
    return settings


def _write_copy(sources: Sequence[_Source], path: str) -> dict[str, int]:
    """Concatenate the sources' Arrow copies into ``path``; return each segment's batch offset."""
    offsets: dict[str, int] = {}
    counts: list[int] = []
    base = 0
    for source in sources:
        assert source.copy_schema is not None
        own = segment_batches(source.copy_schema.metadata)
        for segment in source.segments:
            if own is not None and segment not in own:
                raise SegmentMergeRefused("a merged source's Arrow copy misses a segment")
            offsets[segment] = base + (own[segment] if own is not None else 0)
        with pa.memory_map(os.path.join(source.directory, ROWS_FILE)) as handle:
            count = pa.ipc.open_file(handle).num_record_batches
        counts.append(count)
        base += count
    assert sources[0].copy_schema is not None
    schema = sources[0].copy_schema.with_metadata(segmented_metadata(offsets))
    options = pa.ipc.IpcWriteOptions(compression="zstd")
    with pa.ipc.new_file(path, schema, options=options) as writer:
        for source, count in zip(sources, counts, strict=True):
            with pa.memory_map(os.path.join(source.directory, ROWS_FILE)) as handle:
                reader = pa.ipc.open_file(handle)
                for number in range(count):
                    batch = reader.get_batch(number)
                    writer.write_batch(pa.RecordBatch.from_arrays(batch.columns, schema=schema))
    return offsets


def _write_json(path: str, value: Any, *, indent: int | None = None) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(value, handle, indent=indent)
