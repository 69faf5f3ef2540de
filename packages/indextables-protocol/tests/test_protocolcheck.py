"""Protocol checks for readers and writers."""

from __future__ import annotations

import pytest

from indextables.protocol.actions import ProtocolAction
from indextables.protocol.errors import UnsupportedProtocolError
from indextables.protocol.protocolcheck import check_readable, check_writable, new_table_protocol


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_supported_versions_pass(version: int) -> None:
    protocol = ProtocolAction(version, version)
    check_readable(protocol)
    check_writable(protocol)


def test_new_tables_are_v4() -> None:
    assert new_table_protocol() == ProtocolAction(4, 4)


def test_known_features_pass() -> None:
    protocol = ProtocolAction(
        4, 4, reader_features=("avroState", "schemaDeduplication"), writer_features=("checkpoint",)
    )
    check_writable(protocol)


@pytest.mark.parametrize(
    ("protocol", "readable", "fragment"),
    [
        (ProtocolAction(5, 4), False, "reader version 5"),
        (ProtocolAction(4, 5), True, "writer version 5"),
        (ProtocolAction(4, 4, reader_features=("deletionVectors",)), False, "deletionVectors"),
        (ProtocolAction(4, 4, writer_features=("rowTracking",)), True, "rowTracking"),
        (ProtocolAction(0, 4), False, "invalid"),
    ],
)
def test_unsupported_protocols_are_refused(
    protocol: ProtocolAction, readable: bool, fragment: str
) -> None:
    if readable:
        check_readable(protocol, path="s3://b/t")
    else:
        with pytest.raises(UnsupportedProtocolError, match=fragment):
            check_readable(protocol, path="s3://b/t")
    with pytest.raises(UnsupportedProtocolError, match=f"s3://b/t: .*{fragment}"):
        check_writable(protocol, path="s3://b/t")
