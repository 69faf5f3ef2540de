"""The reference's ``spark.indextables.*`` keys that have no effect here, and why.

A pipeline moved over from the Scala reference keeps its settings: a key the
reference reads or documents never fails a read or write here. Keys this
package or the engine honour are listed in ``docs/migration.md``; the keys
below are accepted and each logs one warning per process naming the key and
the reason (never its value). A ``spark.indextables.*`` key that is neither
(a typo, most likely) logs one warning too. Store keys (``aws.*``, ``azure.*``,
``s3.*``) are checked by ``indextables.storage``, which refuses unknown ones.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

PREFIX = "spark.indextables."

_ARROW = (
    "rows reach Tantivy from Arrow batches in Python; this tunes the reference's "
    "JVM-to-native transfer"
)
_TEMP = "temporary index directories come from Python's tempfile: set TMPDIR on the executors"
_SHUFFLE = (
    "a Python data source cannot ask Spark for a shuffle before a write; repartition the "
    "DataFrame yourself (df.repartition(n) or by the partition columns) before writing"
)
_OPTIMIZE = (
    "there is no size estimate to tune: itp.write repartitions the rows to the executors' "
    "cores (write.optimizeWrite.enabled) and balanced writers roll splits at maxSplitSize"
)
_MOW = (
    "merge-on-write runs its groups as one Spark job after the commit; "
    "mergeOnWrite.minSplitsToMerge decides when it runs"
)
_MERGE_IO = "a merge task reads its source splits through the split cache and uploads one split"
_PURGE = "PURGE deletes from the driver, one request per file"
_READ_MODE = (
    "reads always return every matching row (the reference's read.mode=complete); "
    "Spark applies LIMIT after the scan"
)
_BATCH = "a read task fetches whole splits (two requests each), not document byte ranges"
_AGG = "PySpark's Python data source API has no aggregate pushdown; Spark aggregates the rows"
_FILTERS = (
    "string filters are translated whenever the field allows it, and Spark re-checks "
    "every returned row"
)
_PRUNING = "partition pruning plans from the log's partition bounds; there is nothing to tune"
_DISK_CACHE = (
    "the split cache is a local-disk cache of whole splits, set with cache.directoryPath "
    "and cache.maxSize"
)
_PREWARM = (
    "PySpark's Python data source cannot place tasks on hosts, so a cache cannot be prewarmed"
)
_LOG_CACHE = "log reads use a per-table-handle snapshot cache (transaction.cache.expirationSeconds)"
_STATE = (
    "the Avro state is written with the reference's defaults (zstd level 3, 50,000 entries "
    "per manifest, compaction at 10% tombstones or 20 manifests); the admin CLI can change them"
)
_STATS = "statistics are kept for every numeric, string and date column, truncated at 32 characters"
_PROTOCOL = "protocol checks always run: reading or writing an unknown protocol would be unsafe"
_NATIVE = "tantivy4java's native memory pool has no counterpart in tantivy-py"
_COMPANION = (
    "companion indexes are built with BUILD INDEXTABLES COMPANION (Delta, Iceberg, Parquet); "
    "of the companion.* keys only companion.parquetTableRoot (reads), "
    "companion.streaming.maxCycles (WITH STREAMING), companion.buildParallelism "
    "(builds) and the source's own storage keys companion.parquet.aws.*, "
    "companion.parquet.azure.* and companion.aws.accessKey/secretKey/sessionToken are read"
)
_UC = (
    "Unity Catalog credential vending is not built; use static keys, a profile or "
    "the default credential chain"
)
_GCP = "Google Cloud Storage is not supported (the reference does not route gs:// either)"
_CLOUD = "use storage.connect_timeout, storage.read_timeout and storage.max_attempts"

#: Exact keys (lowercase) -> why they have no effect.
IGNORED: Mapping[str, str] = {
    "indexwriter.maxbatchbuffersize": _ARROW,
    "indexwriter.usebatch": _ARROW,
    "indexwriter.tempdirectorypath": _TEMP,
    "merge.tempdirectorypath": _TEMP,
    "splitconversion.maxparallelism": "a split is bundled by the task that wrote its index",
    "merge.maxconcurrentbatches": "merge.batchSize jobs run one after the other",
    "merge.maxpasses": "a merge is one pass: each group becomes one split",
    "merge.schedulerpool": "merge jobs run in the caller's scheduler pool",
    "merge.debug": "no debug output exists for merges",
    "merge.skipsplitthreshold": "every split below TARGET SIZE may join a group",
    "merge.upload.maxconcurrency": _MERGE_IO,
    "purge.parallelism": _PURGE,
    "purge.maxfilestodelete": _PURGE,
    "purge.deleteretries": "each delete is retried by the store's own retry policy",
    "purge.minretentionhours": (
        "the floor is fixed at 24 hours; purge.retentionCheckEnabled=false lifts it"
    ),
    "read.mode": _READ_MODE,
    "read.defaultlimit": _READ_MODE,
    "read.columnar.enabled": "reads are always columnar (Arrow batches)",
    "read.requireaggregatepushdown": _AGG,
    "read.companion.requireaggregatepushdown": _AGG,
    "filter.stringpattern.pushdown": _FILTERS,
    "filter.stringstartswith.pushdown": _FILTERS,
    "filter.stringendswith.pushdown": _FILTERS,
    "filter.stringcontains.pushdown": _FILTERS,
    "cache.coalescemaxgap": _DISK_CACHE,
    "cache.querycache": _DISK_CACHE,
    "cache.maxconcurrentloads": _DISK_CACHE,
    "cache.name": _DISK_CACHE,
    "cache.prewarm.enabled": _PREWARM,
    "transaction.maxconcurrentreads": _LOG_CACHE,
    "transaction.allowdirectusage": "the log is always read through the engine",
    "state.format": "the state is always written in the Avro format (JSON checkpoints are read)",
    "state.compression": _STATE,
    "state.compressionlevel": _STATE,
    "state.entriespermanifest": _STATE,
    "state.read.parallelism": _STATE,
    "state.retry.maxattempts": "state writes use transaction.retry.* like every commit",
    "stats.truncation.enabled": _STATS,
    "stats.truncation.maxlength": _STATS,
    "dataskippingstatscolumns": _STATS,
    "dataskippingnumindexedcols": _STATS,
    "skippedfiles.trackingenabled": "failed merge groups are always recorded as merge skips",
    "skippedfiles.cooldownduration": "merge skips keep a 24-hour cooldown",
    "native.memory.enabled": _NATIVE,
    "indexquery.indexall.maxunqualifiedfields": (
        "unqualified query terms search every tokenized field, with no cap"
    ),
    "schema.filteremptyobjects": "empty JSON objects are kept as written",
    "bloom.filters.enabled": "no counterpart here",
    "storage.force.standard": "no counterpart here",
    "logretention.duration": (
        "use purgeOnWrite.txLogRetentionHours or PURGE ... TRANSACTION LOG RETENTION"
    ),
}

#: Key prefixes (lowercase) -> why every key under them has no effect.
IGNORED_PREFIXES: Mapping[str, str] = {
    "write.optimizewrite.": _OPTIMIZE,
    "autosize.": _SHUFFLE,
    "write.arrowffi.": _ARROW,
    "docbatch.": _ARROW,
    "merge.download.": _MERGE_IO,
    "read.batchoptimization.": _BATCH,
    "read.adaptivetuning.": _BATCH,
    "read.aggregate.": _AGG,
    "read.aggregation.": _AGG,
    "partitionpruning.": _PRUNING,
    "cache.disk.": _DISK_CACHE,
    "prewarm.": _PREWARM,
    "transaction.cache.": _LOG_CACHE,
    "state.compaction.": _STATE,
    "protocol.": _PROTOCOL,
    "companion.": _COMPANION,
    "iceberg.": _COMPANION,
    "databricks.": _UC,
    "gcp.": _GCP,
    "cloud.": _CLOUD,
}

# The companion source's own storage keys (companion/sourcecreds.py).
_SOURCE_AWS = ("accesskey", "secretkey", "sessiontoken", "region", "endpoint", "pathstyleaccess")
_SOURCE_AZURE = ("accountname", "accountkey", "connectionstring", "sastoken", "endpoint")

#: Keys (lowercase, without the prefix) honoured by this package or its engine.
HONOURED = frozenset(
    {
        "indexwriter.heapsize",
        "indexwriter.batchsize",
        "indexwriter.arrowcopy",
        "indexwriter.docstoreblocksize",
        "indexwriter.threads",
        "indexwriter.feed",
        "companion.parquettableroot",
        "companion.streaming.maxcycles",
        "companion.buildparallelism",
        *(f"companion.parquet.aws.{k}" for k in _SOURCE_AWS),
        *(f"companion.aws.{k}" for k in ("accesskey", "secretkey", "sessiontoken")),
        *(f"companion.parquet.azure.{k}" for k in _SOURCE_AZURE),
        "write.optimizewrite.enabled",
        "write.optimizewrite.distributionmode",
        "write.optimizewrite.maxsplitsize",
        "read.splitspertask",
        "read.maxsplitspertask",
        "read.docstorethreads",
        "read.companionthreads",
        "read.splitthreads",
        "query.maxtermexpansions",
        "cache.directorypath",
        "cache.maxsize",
        "merge.heapsize",
        "merge.batchsize",
        "merge.maxsourcesplitspermerge",
        "checkpoint.interval",
        "checkpoint.enabled",
        "transaction.compression.enabled",
        "transaction.cache.expirationseconds",
        "transaction.retry.maxattempts",
        "transaction.retry.basedelayms",
        "transaction.retry.maxdelayms",
        "state.compaction.aftermerge",
        "state.retention.versions",
        "state.retention.hours",
        "state.gc.minmanifestagehours",
        "purge.defaultretentionhours",
        "purge.txlogretentionhours",
        "purge.retentioncheckenabled",
        "onwrite.deferred",
        "search.mode",
        "search.localmaxsplits",
        "search.localmaxrows",
    }
)
#: Prefixes of keys honoured here (validated by their own parsers) or by the store.
HONOURED_PREFIXES = (
    "indexing.",
    "mergeonwrite.",
    "purgeonwrite.",
    "aws.",
    "azure.",
    "s3.",
)
# mergeOnWrite's tuning keys of the reference: accepted by parse_on_write, no effect.
_MOW_KEYS = (
    "batchcpufraction",
    "maxconcurrentbatches",
    "minbatchestotrigger",
    "shutdowntimeoutms",
    "mergegroupmultiplier",
    "mindiskspacegb",
    "maxconcurrentmergesperworker",
    "memoryoverheadfactor",
)

#: The reason given for a key that neither this package nor the reference reads.
TYPO_REASON = "neither this package nor the reference reads this key (a typo?)"
_LOG = logging.getLogger("indextables.search")
_WARNED: set[str] = set()


def ignored_reason(key: str) -> str | None:
    """Why the ``spark.indextables.*`` ``key`` has no effect here, or None when it does.

    A key that is neither honoured nor a reference key gets a reason too (it
    is most likely a typo).
    """
    lowered = key.lower()
    if not lowered.startswith(PREFIX):
        return None
    name = lowered[len(PREFIX) :]
    if name.startswith("mergeonwrite.") and name[len("mergeonwrite.") :] in _MOW_KEYS:
        return _MOW
    if name in IGNORED:
        return IGNORED[name]
    for prefix, reason in IGNORED_PREFIXES.items():
        if name.startswith(prefix) and name not in HONOURED:
            return reason
    if name in HONOURED or name.startswith(HONOURED_PREFIXES):
        return None
    return TYPO_REASON


def warn_ignored(keys: Iterable[str]) -> list[str]:
    """Log one warning per process for each key among ``keys`` that has no effect.

    Returns:
        The keys warned about by this call (lowercase).
    """
    warned: list[str] = []
    for key in keys:
        reason = ignored_reason(key)
        lowered = key.lower()
        if reason is None or lowered in _WARNED:
            continue
        warn_once(key, reason)
        warned.append(lowered)
    return warned


def warn_once(key: str, reason: str) -> None:
    """Log that ``key`` has no effect, once per process and key."""
    lowered = key.lower()
    if lowered in _WARNED:
        return
    _WARNED.add(lowered)
    _LOG.warning("%s has no effect in indextables for Python: %s", key, reason)
