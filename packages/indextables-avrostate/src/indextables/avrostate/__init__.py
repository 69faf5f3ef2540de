"""indextables.avrostate: the V4 Avro state format (manifests, decoding, pruning, compaction)."""

from indextables.avrostate.errors import AvroStateError
from indextables.avrostate.version import __version__

__all__ = ["AvroStateError", "__version__"]
