"""A companion manifest's source file paths never leave the source table."""

from __future__ import annotations

import pytest

from indextables.search.companion.manifest import (
    ParquetFileEntry,
    ParquetManifest,
    SegmentRowRange,
    manifest_from_bytes,
    manifest_to_bytes,
)
from indextables.search.errors import CompanionError


def _manifest(*paths: str) -> ParquetManifest:
    files = tuple(
        ParquetFileEntry(relative_path=path, file_size_bytes=100, row_offset=10 * n, num_rows=10)
        for n, path in enumerate(paths)
    )
    return ParquetManifest(
        fast_field_mode="disabled",
        segment_row_ranges=(SegmentRowRange(0, 0, 10 * len(paths)),),
        parquet_files=files,
        column_mapping=(),
        total_rows=10 * len(paths),
    )


def test_safe_paths_read_back() -> None:
    paths = ("part-0.parquet", "date=2024-01-01/part-1.parquet", "a b/ü.parquet")
    back = manifest_from_bytes(manifest_to_bytes(_manifest(*paths)))
    assert tuple(f.relative_path for f in back.parquet_files) == paths


@pytest.mark.parametrize(
    "path",
    [
        "../../../x",
        "date=1/../../outside.parquet",
        "/etc/passwd",
        "s3://other-bucket/x.parquet",
        "file:/tmp/x.parquet",
        "C:/x.parquet",
        "",
        "a\x00b.parquet",
    ],
)
def test_an_unsafe_path_is_refused_by_name(path: str) -> None:
    data = manifest_to_bytes(_manifest("ok.parquet", path))
    with pytest.raises(CompanionError, match="unsafe source file path"):
        manifest_from_bytes(data)
