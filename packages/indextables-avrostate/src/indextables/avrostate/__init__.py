"""indextables.avrostate: the V4 Avro state format (manifests, decoding, pruning, compaction).

The public surface: :class:`AvroStateFormat` (the protocol's ``StateFormat``),
:class:`StateOptions`, the lazy :class:`FileEntries` sequence, manifest and
state codecs, garbage collection, and the errors. Which decoder runs
(Cython or pure Python) is reported by :data:`CYTHON_MODULE`.
"""

from indextables.avrostate.entries import FileEntries
from indextables.avrostate.errors import (
    AvroStateError,
    CorruptAvroFileError,
    DuplicateAddError,
    MissingManifestError,
    SchemaMismatchError,
    StateNotFoundError,
    UnsafeManifestPathError,
    UnsupportedCodecError,
    UnsupportedStateVersionError,
)
from indextables.avrostate.format import AvroStateFormat
from indextables.avrostate.gc import GcReport, collect_garbage
from indextables.avrostate.impl import CYTHON_MODULE, IMPL_NAME
from indextables.avrostate.manifest_reader import read_manifest, read_manifest_entries
from indextables.avrostate.manifest_writer import encode_manifest
from indextables.avrostate.options import StateOptions
from indextables.avrostate.state_file import decode_state, encode_state
from indextables.avrostate.state_reader import read_state, state_versions
from indextables.avrostate.state_writer import write_state
from indextables.avrostate.version import __version__

__all__ = [
    "AvroStateError",
    "AvroStateFormat",
    "CYTHON_MODULE",
    "CorruptAvroFileError",
    "DuplicateAddError",
    "FileEntries",
    "GcReport",
    "IMPL_NAME",
    "MissingManifestError",
    "SchemaMismatchError",
    "StateNotFoundError",
    "StateOptions",
    "UnsafeManifestPathError",
    "UnsupportedCodecError",
    "UnsupportedStateVersionError",
    "__version__",
    "collect_garbage",
    "decode_state",
    "encode_manifest",
    "encode_state",
    "read_manifest",
    "read_manifest_entries",
    "read_state",
    "state_versions",
    "write_state",
]
