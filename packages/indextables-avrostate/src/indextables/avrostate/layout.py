"""Where the state's files live under ``_transaction_log/`` (store keys)."""

from __future__ import annotations

import re
from typing import Final

__all__ = [
    "LOG_DIR",
    "MANIFESTS_DIR",
    "manifest_key",
    "parse_state_key",
    "state_dir",
    "state_json_key",
    "state_key",
]

LOG_DIR: Final = "_transaction_log"
MANIFESTS_DIR: Final = f"{LOG_DIR}/manifests/"
STATE_PREFIX: Final = f"{LOG_DIR}/state-v"
STATE_AVRO: Final = "_manifest.avro"
STATE_JSON: Final = "_manifest.json"
_STATE_KEY: Final = re.compile(
    r"^" + re.escape(STATE_PREFIX) + r"(\d{20})/(_manifest\.avro|_manifest\.json)$"
)


def state_dir(version: int) -> str:
    """The key prefix (with trailing ``/``) of a state's directory."""
    return f"{STATE_PREFIX}{version:020d}/"


def state_key(version: int) -> str:
    """The key of a state's root record (``_manifest.avro``)."""
    return state_dir(version) + STATE_AVRO


def state_json_key(version: int) -> str:
    """The key of the older JSON form of a state's root record."""
    return state_dir(version) + STATE_JSON


def parse_state_key(key: str) -> tuple[int, str] | None:
    """``(version, file name)`` of a state root key, or ``None`` for other keys."""
    match = _STATE_KEY.match(key)
    return None if match is None else (int(match.group(1)), match.group(2))


def manifest_key(path: str, state_version: int) -> str:
    """Resolve a ManifestInfo path to a store key.

    ``manifests/x.avro`` and the legacy ``state-vN/manifest-x.avro`` are
    relative to ``_transaction_log``; a bare ``manifest-x.avro`` is relative
    to the state's own directory.
    """
    if "/" in path:
        return f"{LOG_DIR}/{path}"
    return state_dir(state_version) + path
