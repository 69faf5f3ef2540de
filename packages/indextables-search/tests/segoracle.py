"""One segment of the same rows written by tantivy-py and by the segment writer.

The segment-writer tests build both sides the same way: an empty index of the test's
schema (``make_empty``), tantivy-py adding each row as a document (``adders`` names the
``Document.add_*`` method of each column; a list value adds each non-null item), and
:func:`write_segment` writing the same rows as Arrow columns (``arrow_types``).
"""

from __future__ import annotations

import glob
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import tantivy

from indextables.search.schema.tokenizers import register_tokenizers
from indextables.search.write.segwriter.metajson import SegmentEntry, list_segments, read_meta
from indextables.search.write.segwriter.segment import (
    SEGMENT_EXTENSIONS,
    segment_fields,
    write_segment,
)

Rows = Mapping[str, Sequence[Any]]


def tantivy_segment(
    directory: Path,
    make_empty: Callable[[Path], None],
    rows: Rows,
    count: int,
    adders: Mapping[str, str],
) -> tantivy.Index:
    """tantivy-py's one-segment index of ``rows`` (one writer thread, merges waited for)."""
    make_empty(directory)
    index = register_tokenizers(tantivy.Index.open(str(directory)))
    writer = index.writer(200_000_000, 1)
    for row in range(count):
        doc = tantivy.Document()
        for name, values in rows.items():
            value = values[row]
            if value is None:
                continue
            add = getattr(doc, adders[name])
            for item in value if isinstance(value, list) else [value]:
                if item is not None:
                    add(name, item)
        writer.add_document(doc)
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    return index


def our_segment(
    directory: Path,
    make_empty: Callable[[Path], None],
    rows: Rows,
    count: int,
    arrow_types: Mapping[str, pa.DataType],
) -> str:
    """The segment writer's segment of ``rows``, listed in the index's ``meta.json``."""
    make_empty(directory)
    fields = segment_fields(read_meta(str(directory))["schema"])
    columns = {name: pa.array(values, arrow_types[name]) for name, values in rows.items()}
    segment_id = write_segment(str(directory), fields, columns, count, block_size=4096)
    list_segments(str(directory), [SegmentEntry(segment_id, count)])
    return segment_id


def segment_files(directory: Path) -> dict[str, bytes]:
    """The bytes of the index's one segment, by file extension."""
    out = {}
    for ext in SEGMENT_EXTENSIONS:
        (path,) = glob.glob(str(directory / f"*.{ext}"))
        out[ext] = Path(path).read_bytes()
    return out
