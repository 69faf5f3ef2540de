"""Typed, validated views of the data source options (reference option keys).

Spark hands options over case-insensitively; every parser here lowercases keys
first. Validation happens in the DataSource constructor paths that Spark runs
while planning, so a bad value fails before any task is scheduled.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from indextables.search.errors import OptionError
from indextables.search.read.docstore.pool import DecoderThreads

PREFIX = "spark.indextables."
INDEXING = PREFIX + "indexing."
TYPEMAP = INDEXING + "typemap."
TOKENIZER = INDEXING + "tokenizer."
FIELD_TYPES = ("string", "text", "json", "ip")
TOKENIZERS = ("default", "raw", "en_stem", "whitespace")

RECORD_OPTION = INDEXING + "indexrecordoption."
TOKEN_LENGTH = INDEXING + "tokenlength."
DEFAULT_RECORD_OPTION_KEY = INDEXING + "text.indexrecordoption"
MAX_TOKEN_LENGTH_KEY = INDEXING + "text.maxtokenlength"
JSON_MODE_KEY = INDEXING + "json.mode"
#: Ours (the reference has no such key): companion columns kept as fast fields only, not
#: indexed (numbers and dates in FASTFIELDS MODE HYBRID/DISABLED; see docs/companion.md).
FAST_ONLY_KEY = INDEXING + "fastonlyfields"
RECORD_OPTIONS = ("basic", "freq", "position")
JSON_MODES = ("full", "minimal")
# The reference's named token lengths (bytes); tokens longer than the limit are dropped.
TOKEN_LENGTH_NAMES = {"tantivy_max": 65530, "default": 255, "legacy": 40, "min": 1}
DEFAULT_TOKEN_LENGTH = 255
MAX_TOKEN_LENGTH = 65530

_KNOWN_INDEXING = {
    INDEXING + "fastfields",
    INDEXING + "nonfastfields",
    INDEXING + "storeonlyfields",
    INDEXING + "indexonlyfields",
    FAST_ONLY_KEY,
    JSON_MODE_KEY,
    DEFAULT_RECORD_OPTION_KEY,
    MAX_TOKEN_LENGTH_KEY,
}
_SIZE = re.compile(r"^\s*(\d+)\s*([kmg]?)b?\s*$", re.IGNORECASE)
_SIZE_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def lower_keys(options: Mapping[str, str]) -> dict[str, str]:
    """Options with lowercase keys (Spark treats option keys case-insensitively)."""
    return {str(k).lower(): str(v) for k, v in options.items()}


def parse_size(key: str, value: str) -> int:
    """Parse a byte size such as ``50000000``, ``64M`` or ``1g``.

    Raises:
        OptionError: the value is not a size.
    """
    match = _SIZE.match(value)
    if match is None:
        raise OptionError(f"option {key}={value!r} is not a size (examples: 64M, 1G, 50000000)")
    return int(match.group(1)) * _SIZE_UNITS[match.group(2).lower()]


def parse_heap_size(key: str, value: str) -> int:
    """Parse an index writer heap size within Tantivy's bounds (15M to just under 4G).

    Raises:
        OptionError: not a size, or outside :data:`MIN_HEAP_SIZE`..:data:`MAX_HEAP_SIZE`.
    """
    heap = parse_size(key, value)
    if heap < MIN_HEAP_SIZE:
        raise OptionError(f"option {key}={value!r} is below Tantivy's minimum 15M")
    if heap > MAX_HEAP_SIZE:
        raise OptionError(
            f"option {key}={value!r} is above Tantivy's maximum of {MAX_HEAP_SIZE} bytes "
            "(just under 4G) per index writer"
        )
    return heap


def parse_int(key: str, value: str, *, minimum: int = 0) -> int:
    """Parse an integer option no smaller than ``minimum``."""
    try:
        number = int(value)
    except ValueError:
        raise OptionError(f"option {key}={value!r} is not an integer") from None
    if number < minimum:
        raise OptionError(f"option {key}={value!r} must be >= {minimum}")
    return number


def split_names(value: str) -> tuple[str, ...]:
    """A comma-separated list of column names, lowercased, blanks dropped."""
    return tuple(n.strip().lower() for n in value.split(",") if n.strip())


@dataclass(frozen=True, slots=True)
class IndexingOptions:
    """Write-side field options (the reference's ``spark.indextables.indexing.*`` keys).

    Attributes:
        typemap: lowercase column -> field type (string, text, json, ip).
        tokenizers: lowercase column -> tokenizer name.
        fast_fields: columns that get a fast field in addition to the defaults.
        non_fast_fields: columns taken out of the default fast fields.
        store_only_fields: columns stored but not indexed.
        index_only_fields: columns indexed but not stored (cannot be read back).
        record_options: lowercase column -> what a text field's postings hold
            (basic, freq, position).
        default_record_option: the same for text fields not named there.
        token_lengths: lowercase column -> the longest token (bytes) a text
            field indexes; longer tokens are dropped.
        default_token_length: the same for text fields not named there.
        json_mode: ``full`` gives JSON fields a fast field, ``minimal`` does not.
        fast_only_fields: ``fastonlyfields``: columns kept as fast fields only, not
            indexed (companion builds only; a table write refuses it).
    """

    typemap: Mapping[str, str] = field(default_factory=dict)
    tokenizers: Mapping[str, str] = field(default_factory=dict)
    fast_fields: frozenset[str] = frozenset()
    non_fast_fields: frozenset[str] = frozenset()
    store_only_fields: frozenset[str] = frozenset()
    index_only_fields: frozenset[str] = frozenset()
    record_options: Mapping[str, str] = field(default_factory=dict)
    default_record_option: str = "position"
    token_lengths: Mapping[str, int] = field(default_factory=dict)
    default_token_length: int = DEFAULT_TOKEN_LENGTH
    json_mode: str = "full"
    fast_only_fields: frozenset[str] = frozenset()

    def named_fields(self) -> dict[str, tuple[str, ...]]:
        """Every option that names columns, with the columns it names."""
        named = {
            INDEXING + "fastfields": tuple(self.fast_fields),
            INDEXING + "nonfastfields": tuple(self.non_fast_fields),
            INDEXING + "storeonlyfields": tuple(self.store_only_fields),
            INDEXING + "indexonlyfields": tuple(self.index_only_fields),
            FAST_ONLY_KEY: tuple(self.fast_only_fields),
        }
        named.update({TYPEMAP + c: (c,) for c in self.typemap})
        named.update({TOKENIZER + c: (c,) for c in self.tokenizers})
        named.update({RECORD_OPTION + c: (c,) for c in self.record_options})
        named.update({TOKEN_LENGTH + c: (c,) for c in self.token_lengths})
        return named


def parse_indexing(options: Mapping[str, str]) -> IndexingOptions:
    """Parse and validate the ``spark.indextables.indexing.*`` options.

    The keys that map columns to a value take both of the reference's forms:
    per column (``tokenizer.title=en_stem``) and per value, listing columns
    (``tokenizer.en_stem="title,body"``).

    Raises:
        OptionError: an unknown indexing key, a bad field type, tokenizer,
            record option, token length or JSON mode.
    """
    opts = lower_keys(options)
    typemap: dict[str, str] = {}
    tokenizers: dict[str, str] = {}
    records: dict[str, str] = {}
    lengths: dict[str, int] = {}
    for key, value in opts.items():
        if key.startswith(TYPEMAP):
            _dual_entry(key, value, TYPEMAP, FIELD_TYPES, typemap)
        elif key.startswith(TOKENIZER):
            _dual_entry(key, value, TOKENIZER, TOKENIZERS, tokenizers)
        elif key.startswith(RECORD_OPTION):
            _dual_entry(key, value, RECORD_OPTION, RECORD_OPTIONS, records)
        elif key.startswith(TOKEN_LENGTH):
            _token_length_entry(key, value, lengths)
        elif key.startswith(INDEXING) and key not in _KNOWN_INDEXING:
            raise OptionError(
                f"unknown option {key!r}; known: typemap.<field>, tokenizer.<field>, "
                "indexrecordoption.<field>, tokenLength.<field>, text.indexRecordOption, "
                "text.maxTokenLength, fastfields, nonfastfields, storeonlyfields, "
                "indexonlyfields, fastonlyfields (companion builds), json.mode"
            )
    store_only = frozenset(split_names(opts.get(INDEXING + "storeonlyfields", "")))
    index_only = frozenset(split_names(opts.get(INDEXING + "indexonlyfields", "")))
    both = sorted(store_only & index_only)
    if both:
        raise OptionError(f"column(s) {', '.join(both)} cannot be both store-only and index-only")
    fast = frozenset(split_names(opts.get(INDEXING + "fastfields", "")))
    non_fast = frozenset(split_names(opts.get(INDEXING + "nonfastfields", "")))
    clash = sorted(fast & non_fast)
    if clash:
        raise OptionError(f"column(s) {', '.join(clash)} cannot be both fast and non-fast")
    default_record = opts.get(DEFAULT_RECORD_OPTION_KEY)
    default_length = opts.get(MAX_TOKEN_LENGTH_KEY)
    return IndexingOptions(
        typemap=typemap,
        tokenizers=tokenizers,
        fast_fields=fast,
        non_fast_fields=non_fast,
        store_only_fields=store_only,
        index_only_fields=index_only,
        record_options=records,
        default_record_option=(
            _choice(DEFAULT_RECORD_OPTION_KEY, default_record, RECORD_OPTIONS)
            if default_record is not None
            else "position"
        ),
        token_lengths=lengths,
        default_token_length=(
            token_length(MAX_TOKEN_LENGTH_KEY, default_length)
            if default_length is not None
            else DEFAULT_TOKEN_LENGTH
        ),
        json_mode=_choice(JSON_MODE_KEY, opts.get(JSON_MODE_KEY, "full"), JSON_MODES),
        fast_only_fields=frozenset(split_names(opts.get(FAST_ONLY_KEY, ""))),
    )


def _dual_entry(
    key: str, value: str, prefix: str, allowed: tuple[str, ...], target: dict[str, str]
) -> None:
    """One key of a column -> value option, in either of the reference's forms."""
    suffix = key[len(prefix) :]
    if suffix in allowed and value.strip().lower() not in allowed:
        # List form: <prefix><value> = "c1,c2".
        for name in split_names(value):
            target[name] = suffix
        return
    target[suffix] = _choice(key, value, allowed)


def token_length(key: str, value: str) -> int:
    """A token length: bytes (1 to 65530) or one of the reference's names.

    Raises:
        OptionError: not a number or name, or out of range.
    """
    text = value.strip().lower()
    if text in TOKEN_LENGTH_NAMES:
        return TOKEN_LENGTH_NAMES[text]
    try:
        number = int(text)
    except ValueError:
        raise OptionError(
            f"option {key}={value!r} is not a token length (1 to {MAX_TOKEN_LENGTH}, or one of "
            f"{', '.join(TOKEN_LENGTH_NAMES)})"
        ) from None
    if not 1 <= number <= MAX_TOKEN_LENGTH:
        raise OptionError(f"option {key}={value!r} must be between 1 and {MAX_TOKEN_LENGTH}")
    return number


def _token_length_entry(key: str, value: str, lengths: dict[str, int]) -> None:
    suffix = key[len(TOKEN_LENGTH) :]
    if suffix in TOKEN_LENGTH_NAMES or suffix.isdigit():
        # List form: tokenLength.<length> = "c1,c2".
        length = token_length(key, suffix)
        for name in split_names(value):
            lengths[name] = length
        return
    lengths[suffix] = token_length(key, value)


def _choice(key: str, value: str, allowed: tuple[str, ...]) -> str:
    choice = value.strip().lower()
    if choice not in allowed:
        raise OptionError(f"option {key}={value!r} is not one of: {', '.join(allowed)}")
    return choice


DEFAULT_HEAP_SIZE = 64 << 20
#: The bounds of an index writer's memory arena (one writer thread): the reference's
#: minimum 15M (Tantivy's own is 15,000,000 bytes) and Tantivy's maximum, the largest
#: arena below u32::MAX - 1,000,000 bytes (just under 4G).
MIN_HEAP_SIZE = 15 << 20
MAX_HEAP_SIZE = 4_293_967_294
DEFAULT_BATCH_SIZE = 10_000
#: The doc-store block size (uncompressed bytes) of written splits. 4K, not Tantivy's
#: 16K: a scattered hit decompresses its block up to the hit, and on the benchmark's
#: log rows 4K blocks cut that decode by ~45% for +5% split bytes (docs/performance.md,
#: "What each operation costs"). Any size is standard Tantivy (readers find blocks through
#: the store's skip index), so splits of every size read and merge together.
DEFAULT_DOCSTORE_BLOCK_SIZE = 4096
ARROW_COPY_KEY = PREFIX + "indexwriter.arrowcopy"
#: Which stored columns a split's Arrow copy holds (see :mod:`.read.rowcopy`):
#: ``required`` only those the doc store cannot give back exactly (decimals,
#: nested values, binary kinds Tantivy lacks, dates), ``numeric`` those plus
#: integer, float and boolean columns, ``all`` every stored column (splits
#: written before this option).
ARROW_COPY_MODES = ("required", "numeric", "all")
DEFAULT_ARROW_COPY = "required"
FEED_KEY = PREFIX + "indexwriter.feed"
#: How rows go into Tantivy (``indexWriter.feed``): ``json`` one JSON line per row built
#: column-wise (``IndexWriter.add_json``, see :mod:`.write.jsonfeed`), batches JSON cannot
#: carry exactly as typed documents; ``documents`` typed documents only. Both write the
#: same index bytes. ``segments`` (the default): whole segments written from the split's
#: Arrow columns without tantivy-py (:mod:`.write.segfeed`), splits the segment writer
#: refuses as ``json``.
FEEDS = ("json", "documents", "segments")
DEFAULT_FEED = "segments"


@dataclass(frozen=True, slots=True)
class WriteOptions:
    """Write-side options beyond field mapping.

    Attributes:
        heap_size: Tantivy index writer heap (bytes) per open index.
        batch_size: rows handed to Tantivy per step (bounds Python-side memory).
        partition_columns: the ``partitionBy`` option, when given.
        max_split_bytes: close a split once the Arrow size of its rows reaches
            this (optimized write in balanced mode), or None.
        arrow_copy: ``indexWriter.arrowCopy``, one of :data:`ARROW_COPY_MODES`.
        docstore_block_size: ``indexWriter.docStoreBlockSize``, the uncompressed
            size of a doc-store block (:data:`DEFAULT_DOCSTORE_BLOCK_SIZE`, 4K, unless set).
        threads: ``indexWriter.threads``: how many writers (threads, each with
            its own Tantivy writer) index one write task's rows, or None when
            not given (a Spark task: 1; ``write_table``: every core).
        feed: ``indexWriter.feed``, one of :data:`FEEDS`.
    """

    heap_size: int = DEFAULT_HEAP_SIZE
    batch_size: int = DEFAULT_BATCH_SIZE
    partition_columns: tuple[str, ...] = ()
    max_split_bytes: int | None = None
    arrow_copy: str = DEFAULT_ARROW_COPY
    docstore_block_size: int = DEFAULT_DOCSTORE_BLOCK_SIZE
    threads: int | None = None
    feed: str = DEFAULT_FEED


OPTIMIZE_WRITE = PREFIX + "write.optimizewrite."
DISTRIBUTION_MODES = ("hash", "balanced", "none")
DEFAULT_MAX_SPLIT_SIZE = 4 << 30


@dataclass(frozen=True, slots=True)
class OptimizeWrite:
    """The reference's optimized write (``spark.indextables.write.optimizeWrite.*``).

    Attributes:
        enabled: ``write.optimizeWrite.enabled`` (default false, as the reference).
        distribution_mode: ``hash`` (rows of one partition value to one task;
            round-robin when the table is not partitioned), ``balanced``
            (round-robin over every core, splits rolled at ``max_split_bytes``)
            or ``none``.
        max_split_bytes: ``write.optimizeWrite.maxSplitSize`` (default 4G): in
            balanced mode a writer closes a split once the Arrow size of the
            rows it holds reaches this.
    """

    enabled: bool = False
    distribution_mode: str = "hash"
    max_split_bytes: int = DEFAULT_MAX_SPLIT_SIZE

    @property
    def repartitions(self) -> bool:
        """True when ``itp.write`` spreads the rows over the executors' cores first."""
        return self.enabled and self.distribution_mode != "none"

    @property
    def rolls(self) -> bool:
        """True when writers close a split at ``max_split_bytes``."""
        return self.enabled and self.distribution_mode == "balanced"


def parse_optimize_write(options: Mapping[str, str]) -> OptimizeWrite:
    """Parse ``spark.indextables.write.optimizeWrite.{enabled,distributionMode,maxSplitSize}``.

    Raises:
        OptionError: a value that is not a boolean, a mode or a size, naming the key.
    """
    opts = lower_keys(options)
    enabled_key = OPTIMIZE_WRITE + "enabled"
    mode_key = OPTIMIZE_WRITE + "distributionmode"
    size_key = OPTIMIZE_WRITE + "maxsplitsize"
    enabled = parse_bool(enabled_key, opts[enabled_key]) if enabled_key in opts else False
    mode = _choice(mode_key, opts[mode_key], DISTRIBUTION_MODES) if mode_key in opts else "hash"
    size = parse_size(size_key, opts[size_key]) if size_key in opts else DEFAULT_MAX_SPLIT_SIZE
    if size < 1:
        raise OptionError(f"option {size_key}={opts[size_key]!r} must be at least 1 byte")
    return OptimizeWrite(enabled=enabled, distribution_mode=mode, max_split_bytes=size)


def parse_write(options: Mapping[str, str]) -> WriteOptions:
    """Parse and validate the writer options.

    Raises:
        OptionError: a bad heap size, batch size or optimized-write option.
    """
    opts = lower_keys(options)
    heap_key = PREFIX + "indexwriter.heapsize"
    batch_key = PREFIX + "indexwriter.batchsize"
    heap = parse_heap_size(heap_key, opts[heap_key]) if heap_key in opts else DEFAULT_HEAP_SIZE
    batch = parse_int(batch_key, opts.get(batch_key, str(DEFAULT_BATCH_SIZE)), minimum=1)
    threads_key = PREFIX + "indexwriter.threads"
    threads = (
        parse_int("spark.indextables.indexWriter.threads", opts[threads_key], minimum=1)
        if threads_key in opts
        else None
    )
    parts = opts.get("partitionby") or opts.get("__partition_columns") or ""
    optimize = parse_optimize_write(opts)
    copy = opts.get(ARROW_COPY_KEY)
    return WriteOptions(
        heap_size=heap,
        batch_size=batch,
        partition_columns=_columns(parts),
        max_split_bytes=optimize.max_split_bytes if optimize.rolls else None,
        arrow_copy=(
            _choice("spark.indextables.indexWriter.arrowCopy", copy, ARROW_COPY_MODES)
            if copy is not None
            else DEFAULT_ARROW_COPY
        ),
        docstore_block_size=_docstore_block_size(opts),
        threads=threads,
        feed=(
            _choice("spark.indextables.indexWriter.feed", opts[FEED_KEY], FEEDS)
            if FEED_KEY in opts
            else DEFAULT_FEED
        ),
    )


DOCSTORE_BLOCK_KEY = PREFIX + "indexwriter.docstoreblocksize"


def _docstore_block_size(opts: Mapping[str, str]) -> int:
    if DOCSTORE_BLOCK_KEY not in opts:
        return DEFAULT_DOCSTORE_BLOCK_SIZE
    size = parse_size(DOCSTORE_BLOCK_KEY, opts[DOCSTORE_BLOCK_KEY])
    if not 1024 <= size <= 1 << 20:
        raise OptionError(
            "option spark.indextables.indexWriter.docStoreBlockSize="
            f"{opts[DOCSTORE_BLOCK_KEY]!r} must be between 1K and 1M"
        )
    return size


def _columns(value: str) -> tuple[str, ...]:
    text = value.strip()
    if text.startswith("["):
        # Spark passes partitionBy as a JSON list.
        import json

        return tuple(str(c) for c in json.loads(text))
    return tuple(n.strip() for n in text.split(",") if n.strip())


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """Read-side options.

    Attributes:
        version_as_of: time travel to this table version.
        timestamp_as_of: time travel to the version current at this epoch-ms time.
        query: a Tantivy query string over the table's fields.
        text_search: lowercase column -> query, for tokenized fields only.
        field_match: lowercase column -> exact value query, for exact fields only.
        cache_dir: local directory for unbundled split files as configured
            (``cache.directoryPath``); None for the default, which each process
            resolves where it uses the cache (:attr:`cache_directory`): an executor
            caches under its own ``$TMPDIR`` / ``INDEXTABLES_CACHE_DIR``, not the
            driver's that planned the read.
        cache_max_bytes: size cap of the split cache.
        splits_per_task: how many splits one read task handles.
        selective_splits_per_task: the same for a selective read (a search
            option or a pushed filter that becomes a Tantivy query): such a
            task touches few rows per split, so fewer, larger tasks save
            Spark's per-task cost. Both follow ``read.splitsPerTask`` when it
            is a number; ``read.maxSplitsPerTask`` caps the automatic choice.
        docstore_threads: whether a large stored-row decode (>= 2,048 hits of
            one split) runs in chunks on the doc-store decoder's threads:
            ``auto`` (unless the 1-minute load average is at or above the
            cores), ``on`` or ``off`` (``read.docStoreThreads``).
        companion_threads: whether a companion read cuts and decodes the Parquet
            pages of its hits on two threads: ``auto`` (unless the 1-minute load
            average of other work is at or above the cores), ``on`` or ``off``
            (``read.companionThreads``).
        split_threads: how many splits a full scan of the engine (``SearchTable``'s
            ``to_arrow``, ``scan``, ``to_polars``... with no query and no condition
            on a data column) reads at once, in order (``read.splitThreads``,
            default :data:`DEFAULT_SPLIT_THREADS`: the usable cores, at most 4).
        max_term_expansions: the most terms of one split a wildcard, fuzzy or
            phrase-prefix term of the search may stand for
            (``query.maxTermExpansions``; None: the default,
            ``indextables.search.query.termexpand.MAX_TERM_EXPANSIONS``).
    """

    version_as_of: int | None = None
    timestamp_as_of: int | None = None
    query: str | None = None
    text_search: Mapping[str, str] = field(default_factory=dict)
    field_match: Mapping[str, str] = field(default_factory=dict)
    cache_dir: str | None = None
    cache_max_bytes: int = 2 << 30
    splits_per_task: int = 4
    selective_splits_per_task: int = 16
    docstore_threads: DecoderThreads = "auto"
    companion_threads: DecoderThreads = "auto"
    split_threads: int = field(default_factory=lambda: _default_split_threads())
    max_term_expansions: int | None = None

    @property
    def cache_directory(self) -> str:
        """The split cache directory in this process: :attr:`cache_dir`, else the default."""
        return self.cache_dir if self.cache_dir is not None else default_cache_dir()


def default_cache_dir() -> str:
    """The split cache directory used when none is configured (per user, mode 0700)."""
    from indextables.search.splits.splitcache import default_cache_dir as default

    return default()


def parse_read(options: Mapping[str, str]) -> ReadOptions:
    """Parse and validate the reader options.

    Raises:
        OptionError: bad versionAsOf/timestampAsOf or cache settings, or both time-travel keys,
            or an unknown option key.
    """
    check_option_keys(options)
    opts = lower_keys(options)
    version = _optional_int(opts, "versionasof")
    timestamp = _timestamp(opts.get("timestampasof"))
    if version is not None and timestamp is not None:
        raise OptionError("options versionAsOf and timestampAsOf cannot be used together")
    cache_key = PREFIX + "cache.maxsize"
    per_task, selective = _splits_per_task(opts)
    return ReadOptions(
        version_as_of=version,
        timestamp_as_of=timestamp,
        query=opts.get("query") or None,
        text_search=_prefixed(opts, "textsearch."),
        field_match=_prefixed(opts, "fieldmatch."),
        cache_dir=opts.get(PREFIX + "cache.directorypath") or None,
        cache_max_bytes=parse_size(cache_key, opts[cache_key]) if cache_key in opts else 2 << 30,
        splits_per_task=per_task,
        selective_splits_per_task=selective,
        docstore_threads=_docstore_threads(opts),
        companion_threads=_threads_choice(opts, COMPANION_THREADS_KEY),
        split_threads=_split_threads(opts),
        max_term_expansions=(
            parse_int(MAX_TERM_EXPANSIONS_NAME, opts[MAX_TERM_EXPANSIONS_KEY], minimum=1)
            if MAX_TERM_EXPANSIONS_KEY in opts
            else None
        ),
    )


MAX_TERM_EXPANSIONS_KEY = PREFIX + "query.maxtermexpansions"
MAX_TERM_EXPANSIONS_NAME = "spark.indextables.query.maxTermExpansions"


DOCSTORE_THREADS_KEY = PREFIX + "read.docstorethreads"


COMPANION_THREADS_KEY = PREFIX + "read.companionthreads"
SPLIT_THREADS_KEY = PREFIX + "read.splitthreads"
#: Splits a full scan reads at once by default: the usable cores, at most 4.
DEFAULT_SPLIT_THREADS: int = min(
    4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
)
_SPLIT_THREADS_NAME = "spark.indextables.read.splitThreads"
#: The most splits a full scan may read at once (each holds up to 32 MB of batches).
MAX_SPLIT_THREADS = 64


def _default_split_threads() -> int:
    return DEFAULT_SPLIT_THREADS


def _split_threads(opts: Mapping[str, str]) -> int:
    if SPLIT_THREADS_KEY not in opts:
        return DEFAULT_SPLIT_THREADS
    number = parse_int(_SPLIT_THREADS_NAME, opts[SPLIT_THREADS_KEY], minimum=1)
    if number > MAX_SPLIT_THREADS:
        raise OptionError(
            f"option {_SPLIT_THREADS_NAME}={number} must be at most {MAX_SPLIT_THREADS}"
        )
    return number


def _docstore_threads(opts: Mapping[str, str]) -> DecoderThreads:
    return _threads_choice(opts, DOCSTORE_THREADS_KEY)


def _threads_choice(opts: Mapping[str, str], key: str) -> DecoderThreads:
    choice = _choice(key, opts.get(key, "auto"), ("auto", "on", "off"))
    return "on" if choice == "on" else "off" if choice == "off" else "auto"


SPLITS_PER_TASK_KEY = PREFIX + "read.splitspertask"
MAX_SPLITS_PER_TASK_KEY = PREFIX + "read.maxsplitspertask"


def _splits_per_task(opts: Mapping[str, str]) -> tuple[int, int]:
    """Splits per task for full and for selective reads.

    ``read.splitsPerTask`` as a number is used as given (both kinds of read);
    ``auto`` or no value chooses 4 and 16, each capped at ``read.maxSplitsPerTask``
    when that is set (the reference caps its automatic choice the same way).
    """
    value = opts.get(SPLITS_PER_TASK_KEY, "auto").strip().lower()
    cap = (
        parse_int(MAX_SPLITS_PER_TASK_KEY, opts[MAX_SPLITS_PER_TASK_KEY], minimum=1)
        if MAX_SPLITS_PER_TASK_KEY in opts
        else None
    )
    if value != "auto":
        try:
            number = int(value)
        except ValueError:
            raise OptionError(
                f"option {SPLITS_PER_TASK_KEY}={opts[SPLITS_PER_TASK_KEY]!r} is neither 'auto' "
                "nor an integer"
            ) from None
        if number < 1:
            raise OptionError(f"option {SPLITS_PER_TASK_KEY}={number} must be >= 1")
        return number, number
    if cap is None:
        return 4, 16
    return min(4, cap), min(16, cap)


def _optional_int(opts: Mapping[str, str], key: str) -> int | None:
    return parse_int(key, opts[key]) if key in opts else None


def _prefixed(opts: Mapping[str, str], prefix: str) -> dict[str, str]:
    return {k[len(prefix) :]: v for k, v in opts.items() if k.startswith(prefix)}


def _timestamp(value: str | None) -> int | None:
    """Epoch milliseconds from an integer or an ISO-8601 timestamp (UTC when naive)."""
    if value is None:
        return None
    text = value.strip()
    if text.isdigit():
        return int(text)
    from datetime import UTC, datetime

    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise OptionError(
            f"option timestampAsOf={value!r} is neither epoch milliseconds nor ISO-8601"
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return int(parsed.timestamp() * 1000)


MERGE_ON_WRITE = PREFIX + "mergeonwrite."
PURGE_ON_WRITE = PREFIX + "purgeonwrite."
ON_WRITE_DEFERRED = PREFIX + "onwrite.deferred"
MIN_SPLIT_RETENTION_HOURS = 24.0


@dataclass(frozen=True, slots=True)
class OnWriteOptions:
    """Maintenance that runs after a successful write (reference keys, case-insensitive).

    Attributes:
        merge: ``spark.indextables.mergeOnWrite.enabled`` (default false).
        merge_target_size: ``mergeOnWrite.targetSize`` (default 4G).
        merge_min_splits: ``mergeOnWrite.minSplitsToMerge``: merge only when a
            partition has at least this many small splits (default 2).
        merge_async: ``mergeOnWrite.async.enabled``: with ``itp.write``, run the
            maintenance in a background thread of the caller (default true).
        deferred: ``spark.indextables.onWrite.deferred``: the data source commit
            leaves the maintenance to its caller (set by ``itp.write``).
        purge: ``spark.indextables.purgeOnWrite.enabled`` (default false).
        purge_after_merge: ``purgeOnWrite.triggerAfterMerge`` (default true).
        purge_after_writes: ``purgeOnWrite.triggerAfterWrites``: purge when the
            committed version is a multiple of this (0 = never; default 0).
        split_retention_hours: ``purgeOnWrite.splitRetentionHours`` (default 168, >= 24).
        log_retention_hours: ``purgeOnWrite.txLogRetentionHours`` (default 720).
    """

    merge: bool = False
    merge_target_size: int = 4 << 30
    merge_min_splits: int = 2
    merge_async: bool = True
    deferred: bool = False
    purge: bool = False
    purge_after_merge: bool = True
    purge_after_writes: int = 0
    split_retention_hours: float = 168.0
    log_retention_hours: float = 720.0

    @property
    def enabled(self) -> bool:
        """True when any after-write maintenance is enabled."""
        return self.merge or self.purge


def parse_on_write(options: Mapping[str, str]) -> OnWriteOptions:
    """Parse and validate the ``mergeOnWrite.*`` / ``purgeOnWrite.*`` options.

    Keys of the reference this implementation does not use (disk space,
    concurrency tuning) are accepted; each logs one warning (see :mod:`.refkeys`).

    Raises:
        OptionError: a value that is not a boolean, size or number, or a split
            retention below 24 hours.
    """
    opts = lower_keys(options)
    m, p = MERGE_ON_WRITE, PURGE_ON_WRITE
    size_key = m + "targetsize"
    result = OnWriteOptions(
        merge=parse_bool(m + "enabled", opts.get(m + "enabled", "false")),
        merge_target_size=parse_size(size_key, opts[size_key]) if size_key in opts else 4 << 30,
        merge_min_splits=parse_int(
            m + "minsplitstomerge", opts.get(m + "minsplitstomerge", "2"), minimum=2
        ),
        merge_async=parse_bool(m + "async.enabled", opts.get(m + "async.enabled", "true")),
        deferred=parse_bool(ON_WRITE_DEFERRED, opts.get(ON_WRITE_DEFERRED, "false")),
        purge=parse_bool(p + "enabled", opts.get(p + "enabled", "false")),
        purge_after_merge=parse_bool(
            p + "triggeraftermerge", opts.get(p + "triggeraftermerge", "true")
        ),
        purge_after_writes=parse_int(
            p + "triggerafterwrites", opts.get(p + "triggerafterwrites", "0")
        ),
        split_retention_hours=parse_hours(
            p + "splitretentionhours", opts.get(p + "splitretentionhours", "168")
        ),
        log_retention_hours=parse_hours(
            p + "txlogretentionhours", opts.get(p + "txlogretentionhours", "720")
        ),
    )
    if result.merge_target_size <= 0:
        raise OptionError(f"option {size_key}={opts[size_key]!r} must be a positive size")
    if result.split_retention_hours < MIN_SPLIT_RETENTION_HOURS:
        raise OptionError(
            f"option {p}splitretentionhours={opts[p + 'splitretentionhours']!r} is below the "
            f"minimum {MIN_SPLIT_RETENTION_HOURS:g} hours (splits of commits in flight "
            "could be deleted)"
        )
    return result


def parse_bool(key: str, value: str) -> bool:
    """Parse ``true``/``false`` (case-insensitive).

    Raises:
        OptionError: any other value.
    """
    text = value.strip().lower()
    if text not in ("true", "false"):
        raise OptionError(f"option {key}={value!r} is not a boolean (true or false)")
    return text == "true"


def parse_hours(key: str, value: str) -> float:
    """Parse a non-negative number of hours.

    Raises:
        OptionError: not a number, or negative.
    """
    try:
        hours = float(value)
    except ValueError:
        raise OptionError(f"option {key}={value!r} is not a number of hours") from None
    if hours < 0 or hours != hours:
        raise OptionError(f"option {key}={value!r} must be a non-negative number of hours")
    return hours


# --- The table of option keys -------------------------------------------------
#
# A key that none of the tables below knows is refused: a misspelt search
# option (``querry``) would otherwise be ignored and the read return the whole
# table. ``spark.indextables.*`` keys are known through :mod:`refkeys` (honoured
# here, or the reference's, accepted and ignored); store keys through
# ``indextables.storage``. Keys are compared lowercased, as Spark hands them.

#: Keys Spark itself passes to a Python data source, or that its writers set.
SPARK_KEYS = ("path", "paths", "checkpointLocation")
#: Plain (unprefixed) keys this package reads, as documented.
PLAIN_KEYS = (
    "query",
    "versionAsOf",
    "timestampAsOf",
    "startingVersion",
    "partitionBy",
    "writerId",
    "replaceWhere",
    "mergeSchema",
    "ignoreDeletes",
    "skipChangeCommits",
)
#: Families of plain keys with a dynamic suffix (``textsearch.<column>``).
PLAIN_PREFIXES = ("textsearch.", "fieldmatch.")
STORAGE_KEY_PREFIX = "storage."


def _known_keys() -> list[str]:
    """Every spelled-out key, in its documented spelling (for suggestions)."""
    from indextables.search import refkeys
    from indextables.storage.options import ALIASES, KNOWN

    keys = [*SPARK_KEYS, *PLAIN_KEYS, *(f"{p}<column>" for p in PLAIN_PREFIXES)]
    keys += [STORAGE_KEY_PREFIX + name for name in sorted(KNOWN)]
    keys += sorted(ALIASES)
    keys += [refkeys.PREFIX + name for name in sorted(refkeys.HONOURED)]
    keys += [refkeys.PREFIX + name for name in sorted(refkeys.IGNORED)]
    keys += [refkeys.PREFIX + p + "<column>" for p in ("indexing.typemap.", "indexing.tokenizer.")]
    return keys


_DOCUMENTED_SPELLING = {
    "spark.indextables.indexwriter.heapsize": "spark.indextables.indexWriter.heapSize",
    "spark.indextables.indexwriter.batchsize": "spark.indextables.indexWriter.batchSize",
    "spark.indextables.indexwriter.arrowcopy": "spark.indextables.indexWriter.arrowCopy",
    "spark.indextables.indexwriter.threads": "spark.indextables.indexWriter.threads",
    "spark.indextables.indexwriter.feed": "spark.indextables.indexWriter.feed",
    "spark.indextables.cache.maxsize": "spark.indextables.cache.maxSize",
    "spark.indextables.cache.directorypath": "spark.indextables.cache.directoryPath",
    "spark.indextables.read.docstorethreads": "spark.indextables.read.docStoreThreads",
    "spark.indextables.read.companionthreads": "spark.indextables.read.companionThreads",
    "spark.indextables.read.splitthreads": "spark.indextables.read.splitThreads",
    "spark.indextables.query.maxtermexpansions": "spark.indextables.query.maxTermExpansions",
    "spark.indextables.indexwriter.docstoreblocksize": (
        "spark.indextables.indexWriter.docStoreBlockSize"
    ),
}


def is_known_key(key: str) -> bool:
    """Whether the data source reads (or knowingly ignores) option ``key``."""
    from indextables.search import refkeys
    from indextables.storage.options import KNOWN

    lowered = str(key).lower()
    if re.search(r"[:=\s]", lowered) and not lowered.startswith(
        tuple(p.lower() for p in PLAIN_PREFIXES)
    ):
        return False  # ``name:value`` or ``name value``: a typo for ``=``
    if lowered.startswith("__"):
        return True  # Spark's internal keys (``__partition_columns``)
    if lowered in {k.lower() for k in (*SPARK_KEYS, *PLAIN_KEYS)}:
        return True
    for prefix in PLAIN_PREFIXES:
        if lowered.startswith(prefix.lower()) and len(lowered) > len(prefix):
            return True
    if lowered.startswith(STORAGE_KEY_PREFIX):
        return lowered[len(STORAGE_KEY_PREFIX) :] in KNOWN
    if lowered.startswith(refkeys.PREFIX):
        reason = refkeys.ignored_reason(lowered)
        return reason is None or reason != refkeys.TYPO_REASON
    return False


def check_option_keys(options: Mapping[str, object]) -> None:
    """Refuse option keys nobody reads, naming the closest known key.

    Raises:
        OptionError: an unknown key. The message shows the key redacted (a
            ``storage.secret_access_key:<secret>`` typo never shows its secret).
    """
    import difflib

    from indextables.storage.redaction import is_secret_key, redact_name

    for key in options:
        if is_known_key(str(key)):
            continue
        shown = redact_name(str(key))
        lowered = str(key).lower()
        if is_secret_key(str(key)) and shown == str(key) and re.search(r"[:=\s]", lowered):
            shown = "***"
        known = _known_keys()
        by_lower = {k.lower(): k for k in known}
        for spelled in _DOCUMENTED_SPELLING.values():
            by_lower[spelled.lower()] = spelled
        probe = re.split(r"[:=\s]", lowered, maxsplit=1)[0] if is_secret_key(lowered) else lowered
        close = difflib.get_close_matches(probe, list(by_lower), n=1, cutoff=0.6)
        hint = f"; did you mean {by_lower[close[0]]!r}?" if close else ""
        raise OptionError(
            f"unknown option {shown!r}{hint} (option keys are listed in docs/pyspark.md)"
        )
