"""Version files ``_transaction_log/%020d.json``: one action per line.

Each line is one action object followed by ``\\n``; the file is framed by
:mod:`indextables.protocol.compression` (gzip with the ``0x01 0x01`` prefix by
default).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from indextables.protocol.actions import Action, action_from_json, action_to_json
from indextables.protocol.compression import compress_log_bytes, decompress_log_bytes
from indextables.protocol.errors import CorruptFileError

__all__ = [
    "decode_json_lines",
    "decode_version_file",
    "encode_json_lines",
    "encode_version_file",
    "parse_version_file_name",
    "version_file_name",
]

_VERSION_NAME = re.compile(r"^(\d{20})\.json$")


def version_file_name(version: int) -> str:
    """Return the file name of ``version`` (``00000000000000000007.json``)."""
    if version < 0:
        raise ValueError(f"version must be >= 0, got {version}")
    return f"{version:020d}.json"


def parse_version_file_name(name: str) -> int | None:
    """Return the version a file name denotes, or ``None`` if it is no version file."""
    match = _VERSION_NAME.match(name.rsplit("/", 1)[-1])
    return int(match.group(1)) if match else None


def encode_json_lines(actions: Iterable[Action]) -> bytes:
    """Return the uncompressed text of ``actions``, one line each, UTF-8."""
    return "".join(action_to_json(a) + "\n" for a in actions).encode("utf-8")


def encode_version_file(actions: Iterable[Action], *, compress: bool = True) -> bytes:
    """Return the bytes of a version file holding ``actions``.

    Args:
        actions: the actions, in order.
        compress: write ``0x01 0x01`` + gzip (level 6); ``False`` writes plain JSON.

    An empty commit (compaction commits one) is one newline in plain JSON, never
    0 bytes: a 0-byte version file is a damaged one.
    """
    return compress_log_bytes(encode_json_lines(actions) or b"\n", compress=compress)


def decode_json_lines(text: bytes, *, path: str) -> list[Action]:
    """Parse uncompressed JSON-lines bytes into actions (empty lines skipped)."""
    try:
        decoded = text.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CorruptFileError(path, f"not UTF-8: {exc}") from None
    return [
        action_from_json(line, path=path, line_number=number)
        for number, line in enumerate(decoded.split("\n"), start=1)
        if line.strip()
    ]


def decode_version_file(data: bytes, *, path: str) -> list[Action]:
    """Decode a version file in any framing into its actions.

    Raises:
        CorruptFileError: bad framing, truncated gzip, invalid JSON on a line.
        UnknownActionError: a line holds an unknown action type.
        MissingFieldError: an action lacks a required field.
        UnsafePathError: an add/remove path escapes the table root.
    """
    if not data:
        raise CorruptFileError(path, "the version file is empty (0 bytes)")
    return decode_json_lines(decompress_log_bytes(data, path=path), path=path)
