"""Keep credentials out of everything the command line prints.

Storage options carry secrets (``secret_access_key``, SAS tokens, ...). The
command line never echoes their values: option mappings are shown redacted,
and any text that could quote one (error messages from a store, a typo'd
``-S account_key:SECRET``) is scrubbed before it reaches the terminal.

The rules live in :mod:`indextables.storage.redaction`, shared by every
package; this module keeps the command line's historical names.
"""

from __future__ import annotations

from indextables.storage.redaction import (
    REDACTED,
    is_secret_key,
    redact_name,
    redact_options,
    redact_text,
    redact_uri,
)

__all__ = [
    "REDACTED",
    "is_secret_key",
    "redact_name",
    "redact_options",
    "redact_text",
    "redact_uri",
]
