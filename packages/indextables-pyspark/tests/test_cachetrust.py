"""Attacks on the split cache and split reads: damaged and planted cache entries, a flipped
byte in every file of a split, cache paths that are not directories, read-only or full, and
a small cache shared by several processes.

Each read must answer the right rows or raise this package's typed error naming the split;
never a pyo3 ``PanicException`` (a BaseException), never wrong rows.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql.types import (
    DateType,
    DoubleType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from indextables.protocol.splitbundle import read_split_footer
from indextables.pyspark.errors import (
    CacheDirectoryError,
    IndexTablesSparkError,
    SplitReadError,
)
from indextables.pyspark.read.sparktypes import arrow_schema
from indextables.search.aggregate.tablecount import count_split
from indextables.search.options import parse_indexing
from indextables.search.query.filters import Condition
from indextables.search.query.searchoptions import SearchSpec
from indextables.search.read.splitreader import SplitEntry, read_split
from indextables.search.schema.mapping import field_specs
from indextables.search.splits import splitcache
from indextables.search.splits.splitcache import ENTRY_RECORD, SplitCache, SplitRef
from indextables.search.write.splitwriter import SplitWriter
from indextables.storage import LocalStore

SCHEMA = StructType(
    [
        StructField("id", LongType()),
        StructField("level", StringType()),
        StructField("message", StringType()),
        StructField("latency", DoubleType()),
        StructField("ts", TimestampType()),
        StructField("d", DateType()),
    ]
)
OPTIONS = {"spark.indextables.indexing.typemap.message": "text"}
ROWS = 300


def _rows(first: int = 0) -> list[dict[str, Any]]:
    return [
        {
            "id": i,
            "level": "ERROR" if i % 10 == 0 else "INFO",
            "message": f"request {i} took long" if i % 7 == 0 else f"request {i} ok",
            "latency": i / 4,
            "ts": datetime(2024, 1, 1, 0, 0, i % 60, 250000, tzinfo=UTC),
            "d": date(2024, 1, 1 + i % 28),
        }
        for i in range(first, first + ROWS)
    ]


def _write(root: Path, count: int = 1) -> tuple[LocalStore, list[SplitEntry]]:
    """A table directory with ``count`` splits written by this package (ids 1000 apart)."""
    store = LocalStore(str(root))
    specs = field_specs(arrow_schema(SCHEMA), parse_indexing(OPTIONS), partition_columns=())
    entries = []
    for number in range(count):
        writer = SplitWriter(store, specs, (), heap_size=20 << 20, batch_size=1000)
        rows = _rows(number * 1000)
        writer.write([pa.RecordBatch.from_pylist(rows, schema=arrow_schema(SCHEMA))])
        (add,) = writer.finish()
        ref = SplitRef(add.path, add.size, add.footer_start_offset, add.footer_end_offset)
        entries.append(
            SplitEntry(ref, add.partition_values, add.doc_mapping_json, tuple(add.split_tags or ()))
        )
    return store, entries


# What every read of the attacks computes, and its right answer from the rows written.
def _all_rows(cache: SplitCache, store: LocalStore, entry: SplitEntry) -> Any:
    read = _reading(entry, SearchSpec(), ())
    got = [
        r for b in cache.batches(store.uri, entry.ref, lambda: store, read) for r in b.to_pylist()
    ]
    return sorted(got, key=lambda r: r["id"])


def _searched(cache: SplitCache, store: LocalStore, entry: SplitEntry) -> Any:
    read = _reading(entry, SearchSpec(query="message:long"), (Condition("<", "latency", (40.0,)),))
    got = [
        r for b in cache.batches(store.uri, entry.ref, lambda: store, read) for r in b.to_pylist()
    ]
    return sorted(got, key=lambda r: r["id"])


def _counted(cache: SplitCache, store: LocalStore, entry: SplitEntry) -> Any:
    conditions = (Condition("=", "level", ("ERROR",)),)

    def count(directory: str) -> int | None:
        return count_split(
            directory, entry, search=SearchSpec(query="message:long"), conditions=conditions
        )

    return cache.use(store.uri, entry.ref, lambda: store, count)


def _reading(
    entry: SplitEntry, search: SearchSpec, conditions: tuple[Condition, ...]
) -> Callable[[str], Iterator[pa.RecordBatch]]:
    def read(directory: str) -> Iterator[pa.RecordBatch]:
        return read_split(
            directory, entry, arrow_schema(SCHEMA), search=search, conditions=conditions
        )

    return read


def _expected(first: int = 0) -> dict[str, Any]:
    rows = _rows(first)
    return {
        "all": rows,
        "searched": [r for r in rows if r["id"] % 7 == 0 and r["latency"] < 40],
        "counted": sum(1 for r in rows if r["id"] % 7 == 0 and r["level"] == "ERROR"),
    }


READS = {"all": _all_rows, "searched": _searched, "counted": _counted}


def _attempt(read: Callable[[], Any]) -> tuple[str, Any]:
    """("ok", answer) or ("error", the exception); a BaseException that is not an Exception
    (a pyo3 panic) fails the test at once."""
    try:
        return "ok", read()
    except Exception as error:
        return "error", error
    except BaseException as error:  # a PanicException derives from BaseException only
        pytest.fail(f"{type(error).__module__}.{type(error).__name__} escaped a read: {error}")


def _inner_files(store: LocalStore, entry: SplitEntry) -> dict[str, tuple[int, int]]:
    ref = entry.ref
    footer = read_split_footer(
        store, ref.path, footer_start_offset=ref.footer_start_offset, footer_end_offset=ref.size
    )
    return {name: span for name, span in footer.files.items() if span[1] > span[0]}


def _positions(length: int, count: int = 24) -> list[int]:
    """Offsets spread over a file, its first and last bytes (the footer) included."""
    step = max(1, length // count)
    return sorted({*range(0, length, step), length - 1, max(0, length - 9)})


def test_a_flipped_byte_in_any_file_of_a_split_gives_the_right_rows_or_a_typed_error(
    tmp_path: Path,
) -> None:
    store, (entry,) = _write(tmp_path / "table")
    path = tmp_path / "table" / entry.ref.path
    good = path.read_bytes()
    expected = _expected()
    files = _inner_files(store, entry)
    assert {n.rsplit(".", 1)[-1] for n in files} >= {"fast", "fieldnorm", "term", "store", "idx"}
    outcomes: dict[str, int] = {}
    number = 0
    for name, (start, end) in sorted(files.items()):
        for offset in _positions(end - start):
            damaged = bytearray(good)
            damaged[start + offset] ^= 0x55
            path.write_bytes(bytes(damaged))
            for what, read in READS.items():
                number += 1
                cache = SplitCache(str(tmp_path / f"cache{number}"), 1 << 30)
                kind, got = _attempt(lambda: read(cache, store, entry))  # noqa: B023
                where = f"{name}+{offset} ({what})"
                if kind == "ok":
                    assert got == expected[what], f"wrong answer after a flip at {where}"
                else:
                    assert isinstance(got, IndexTablesSparkError), f"{where}: {got!r}"
                    assert entry.ref.path in str(got), f"{where}: {got}"
                outcomes[kind] = outcomes.get(kind, 0) + 1
    path.write_bytes(good)
    # Tantivy files fail their footer CRC, the Arrow copy its recorded CRC, small files the
    # hotcache's copy of them: every flip is caught when fetched.
    assert outcomes.get("error", 0) > 0, outcomes


def _entry_files(directory: str) -> list[str]:
    return sorted(n for n in os.listdir(directory) if not n.startswith("."))


@pytest.mark.parametrize("kind", ["fast", "fieldnorm", "term", "store", "idx", "arrow", "json"])
def test_a_same_size_damaged_cache_entry_is_not_served_and_is_fetched_again(
    tmp_path: Path, kind: str
) -> None:
    store, (entry,) = _write(tmp_path / "table")
    cache = SplitCache(str(tmp_path / "cache"), 1 << 30)
    directory = cache.fetch(store, store.uri, entry.ref)
    name = next(n for n in _entry_files(directory) if n.endswith("." + kind))
    path = Path(directory, name)
    good = path.read_bytes()
    damaged = bytearray(good)
    damaged[len(good) // 2] ^= 0x55  # same size: a size check alone trusts it
    path.write_bytes(bytes(damaged))
    assert cache.cached(store.uri, entry.ref) is None
    assert _all_rows(cache, store, entry) == _expected()["all"]
    assert path.read_bytes() == good


def test_every_file_of_a_cache_entry_damaged_still_reads_the_right_rows(tmp_path: Path) -> None:
    store, (entry,) = _write(tmp_path / "table")
    cache = SplitCache(str(tmp_path / "cache"), 1 << 30)
    expected = _expected()
    for name in _entry_files(cache.fetch(store, store.uri, entry.ref)):
        for what, read in READS.items():
            directory = cache.fetch(store, store.uri, entry.ref)
            path = Path(directory, name)
            data = bytearray(path.read_bytes())
            for offset in _positions(len(data), 6):
                data[offset] ^= 0x55
            path.write_bytes(bytes(data))
            kind, got = _attempt(lambda: read(cache, store, entry))  # noqa: B023
            assert (kind, got) == ("ok", expected[what]), f"{name} ({what})"


def test_a_read_failing_on_a_damaged_entry_fetches_it_again_without_repeating_rows(
    tmp_path: Path,
) -> None:
    store, (entry,) = _write(tmp_path / "table")
    cache = SplitCache(str(tmp_path / "cache"), 1 << 30)
    attempts = []

    def read(directory: str) -> Iterator[pa.RecordBatch]:
        attempts.append(directory)
        batches = read_split(
            directory, entry, arrow_schema(SCHEMA), search=SearchSpec(), conditions=()
        )
        for number, batch in enumerate(batches):
            yield batch
            if len(attempts) == 1 and number == 0:
                # Damaged under the read (after the entry was checked): Tantivy fails for real.
                Path(directory, "meta.json").write_bytes(b"\xff" * 10)
                import tantivy

                tantivy.Index.open(directory)

    got = [
        r for b in cache.batches(store.uri, entry.ref, lambda: store, read) for r in b.to_pylist()
    ]
    assert len(attempts) == 2
    assert sorted(got, key=lambda r: r["id"]) == _expected()["all"]  # no row twice, none lost


def test_a_split_damaged_at_its_source_raises_a_typed_error_naming_split_and_entry(
    tmp_path: Path,
) -> None:
    store, (entry,) = _write(tmp_path / "table")
    cache = SplitCache(str(tmp_path / "cache"), 1 << 30)
    directory = cache.fetch(store, store.uri, entry.ref)

    def read(directory: str) -> int:
        import tantivy

        return int(tantivy.Index.open(os.path.join(directory, "no-such-index")).searcher().num_docs)

    with pytest.raises(SplitReadError) as raised:
        cache.use(store.uri, entry.ref, lambda: store, read)
    assert entry.ref.path in str(raised.value)
    assert directory in str(raised.value)
    assert raised.value.split == entry.ref.path
    assert raised.value.entry == directory
    assert cache.cached(store.uri, entry.ref) == directory  # intact: kept, not fetched again


def test_an_entry_planted_under_another_splits_name_is_not_served(tmp_path: Path) -> None:
    store, (one, two) = _write(tmp_path / "table", 2)
    cache = SplitCache(str(tmp_path / "cache"), 1 << 30)
    target = cache.fetch(store, store.uri, one.ref)
    other = cache.fetch(store, store.uri, two.ref)
    # The other split's files and record, under this split's name (same size or not).
    shutil.rmtree(target)
    shutil.copytree(other, target)
    assert cache.cached(store.uri, one.ref) is None
    assert _all_rows(cache, store, one) == _expected()["all"]
    # A plant whose record was rewritten to name this split still fails its digests.
    shutil.rmtree(target)
    shutil.copytree(other, target)
    record_path = Path(target, ENTRY_RECORD)
    record = json.loads(record_path.read_text())
    mine = json.loads(Path(cache.fetch(store, "file:///x", one.ref), ENTRY_RECORD).read_text())
    record.update(table=store.uri.rstrip("/"), split=one.ref.path, size=one.ref.size)
    record["files"], record["sha256"] = record["files"], mine["sha256"]
    record_path.write_text(json.dumps(record))
    assert cache.cached(store.uri, one.ref) is None
    assert _counted(cache, store, one) == _expected()["counted"]


def test_a_cache_directory_others_can_write_is_made_private_and_its_entries_dropped(
    tmp_path: Path,
) -> None:
    store, (one, two) = _write(tmp_path / "table", 2)
    directory = tmp_path / "shared-cache"
    cache = SplitCache(str(directory), 1 << 30)
    target = cache.fetch(store, store.uri, one.ref)
    other = cache.fetch(store, store.uri, two.ref)
    os.chmod(directory, 0o777)
    # Someone planted the other split, with a record forged to match, under this one's name.
    forged = json.loads(Path(other, ENTRY_RECORD).read_text())
    shutil.rmtree(target)
    shutil.copytree(other, target)
    forged.update(table=store.uri.rstrip("/"), split=one.ref.path, size=one.ref.size)
    Path(target, ENTRY_RECORD).write_text(json.dumps(forged))
    rows = _all_rows(cache, store, one)
    assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700
    assert rows == _expected()["all"]


def test_a_cache_directory_of_another_user_or_shared_sticky_is_refused(tmp_path: Path) -> None:
    store, (entry,) = _write(tmp_path / "table")
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    os.chmod(sticky, 0o1777)
    with pytest.raises(CacheDirectoryError, match=r"spark\.indextables\.cache\.directoryPath"):
        SplitCache(str(sticky), 1 << 30).fetch(store, store.uri, entry.ref)
    assert stat.S_IMODE(os.stat(sticky).st_mode) == 0o1777  # left as it is
    if os.getuid() == 0:
        foreign = tmp_path / "foreign"
        foreign.mkdir(mode=0o700)
        os.chown(foreign, 4242, 4242)
    else:
        foreign = Path("/")  # root's
    with pytest.raises(CacheDirectoryError, match=str(foreign)):
        SplitCache(str(foreign), 1 << 30).fetch(store, store.uri, entry.ref)


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Callable[..., Path]]:
    """Mount a small tmpfs (root only: real ENOSPC and EROFS, not mocks); unmounted after."""
    mounted: list[Path] = []

    def mount(name: str, size: str, *, read_only: bool = False) -> Path:
        point = tmp_path / name
        point.mkdir()
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(point)],
            capture_output=True,
            check=False,
        )
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here (needs root): {done.stderr.decode()}")
        mounted.append(point)
        if read_only:
            subprocess.run(["mount", "-o", "remount,ro", str(point)], check=True)
        return point

    yield mount
    for point in reversed(mounted):
        # Lazily: indexes this process keeps open may still map files on it.
        subprocess.run(["umount", "-l", str(point)], check=True)


def test_a_full_cache_disk_raises_a_typed_error_naming_setting_and_path(
    tmp_path: Path, tmpfs: Callable[..., Path]
) -> None:
    store, (entry,) = _write(tmp_path / "table")
    assert entry.ref.size > 16 << 10
    full = tmpfs("full", "16k")
    cache = SplitCache(str(full), 1 << 30)
    with pytest.raises(CacheDirectoryError) as raised:
        _all_rows(cache, store, entry)
    message = str(raised.value)
    assert "spark.indextables.cache.directoryPath" in message
    assert str(full) in message
    assert "No space left on device" in message
    assert os.listdir(full) == []  # the partial download is gone


_LIMITED_FETCH = r"""
import json, resource, signal, sys
sys.path.insert(0, sys.argv[1])
import test_cachetrust as t
from indextables.pyspark.errors import CacheDirectoryError
from indextables.search.splits.splitcache import SplitCache, SplitRef
from indextables.search.read.splitreader import SplitEntry
from indextables.storage import LocalStore

described = json.loads(sys.argv[4])
entry = SplitEntry(SplitRef(*described["ref"]), {}, described["mapping"], tuple(described["tags"]))
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail with EFBIG
limit = int(sys.argv[5])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
try:
    t._all_rows(SplitCache(sys.argv[3], 1 << 30), LocalStore(sys.argv[2]), entry)
    outcome = {"raised": None}
except Exception as error:
    outcome = {
        "raised": type(error).__name__,
        "typed": isinstance(error, CacheDirectoryError),
        "message": str(error),
    }
print(json.dumps(outcome))
"""


def test_a_cache_write_refused_by_the_file_size_limit_raises_a_typed_error(
    tmp_path: Path,
) -> None:
    """The disk-full path without root: a real RLIMIT_FSIZE in a child process (EFBIG)."""
    store, (entry,) = _write(tmp_path / "table")
    largest = max(end - start for start, end in _inner_files(store, entry).values())
    assert largest > 4096
    directory = tmp_path / "cache"
    described = {
        "ref": list(_ref_fields(entry.ref)),
        "mapping": entry.doc_mapping_json,
        "tags": list(entry.split_tags),
    }
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            _LIMITED_FETCH,
            str(Path(__file__).parent),
            str(store.root),
            str(directory),
            json.dumps(described),
            str(largest // 2),  # the largest file of the split cannot be written
        ],
        capture_output=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    outcome = json.loads(done.stdout.decode().strip().splitlines()[-1])
    assert outcome["raised"] == "CacheDirectoryError", outcome
    assert outcome["typed"], outcome
    assert "spark.indextables.cache.directoryPath" in outcome["message"], outcome
    assert str(directory) in outcome["message"], outcome
    assert "File too large" in outcome["message"], outcome
    assert [n for n in os.listdir(directory) if not n.startswith(".")] == []  # no entry left


def test_a_cache_filling_its_disk_evicts_its_own_entries_to_make_room(
    tmp_path: Path, tmpfs: Callable[..., Path]
) -> None:
    store, (one, two) = _write(tmp_path / "table", 2)
    small = tmpfs("small", "100k")  # one entry (16 pages of 4 KiB) fits, two do not
    cache = SplitCache(str(small), 1 << 30)  # the cap would allow both: the disk does not
    first = cache.fetch(store, store.uri, one.ref)
    assert _all_rows(cache, store, two) == _expected(1000)["all"]
    assert not os.path.exists(first)  # evicted to make room


@pytest.mark.parametrize("inside", [False, True])
def test_a_read_only_cache_path_raises_a_typed_error_naming_setting_and_path(
    tmp_path: Path, tmpfs: Callable[..., Path], inside: bool
) -> None:
    store, (entry,) = _write(tmp_path / "table")
    read_only = tmpfs("ro", "1m", read_only=True)
    directory = read_only / "cache" if inside else read_only
    cache = SplitCache(str(directory), 1 << 30)
    with pytest.raises(CacheDirectoryError) as raised:
        _counted(cache, store, entry)
    message = str(raised.value)
    assert "spark.indextables.cache.directoryPath" in message
    assert str(directory) in message
    assert "Read-only file system" in message


@pytest.mark.parametrize("below", [False, True])
def test_a_cache_path_that_is_a_file_raises_a_typed_error(tmp_path: Path, below: bool) -> None:
    store, (entry,) = _write(tmp_path / "table")
    file = tmp_path / "file"
    file.write_text("not a directory")
    directory = file / "cache" if below else file
    cache = SplitCache(str(directory), 1 << 30)
    with pytest.raises(CacheDirectoryError) as raised:
        _all_rows(cache, store, entry)
    assert "spark.indextables.cache.directoryPath" in str(raised.value)
    assert str(directory) in str(raised.value)
    assert file.read_text() == "not a directory"


def test_an_entry_path_held_by_a_file_or_a_file_held_by_a_directory_is_repaired(
    tmp_path: Path,
) -> None:
    store, (entry,) = _write(tmp_path / "table")
    cache = SplitCache(str(tmp_path / "cache"), 1 << 30)
    directory = cache.fetch(store, store.uri, entry.ref)
    shutil.rmtree(directory)
    Path(directory).write_text("a file where the entry belongs")
    assert _all_rows(cache, store, entry) == _expected()["all"]
    assert os.path.isdir(directory)
    os.remove(os.path.join(directory, "meta.json"))
    os.mkdir(os.path.join(directory, "meta.json"))  # a directory where a file belongs
    assert _counted(cache, store, entry) == _expected()["counted"]
    assert os.path.isfile(os.path.join(directory, "meta.json"))


_SHARED_READER = r"""
import json, random, sys
sys.path.insert(0, sys.argv[1])
import test_cachetrust as t
from indextables.search.splits.splitcache import SplitCache
from indextables.search.read.splitreader import SplitEntry
from indextables.search.splits.splitcache import SplitRef
from indextables.storage import LocalStore

store = LocalStore(sys.argv[2])
cache = SplitCache(sys.argv[3], int(sys.argv[4]))
entries = [
    SplitEntry(SplitRef(*e["ref"]), {}, e["mapping"], tuple(e["tags"]))
    for e in json.loads(sys.argv[5])
]
rng = random.Random(int(sys.argv[6]))
failures, wrong = [], 0
for _ in range(int(sys.argv[7])):
    number = rng.randrange(len(entries))
    what = rng.choice(sorted(t.READS))
    try:
        got = t.READS[what](cache, store, entries[number])
    except Exception as error:
        failures.append(f"{type(error).__name__}: {error}")
        continue
    wrong += got != t._expected(number * 1000)[what]
print(json.dumps({"failures": failures, "wrong": wrong}))
"""


def test_a_small_cache_shared_by_several_processes_fails_no_read(tmp_path: Path) -> None:
    splits = 6
    store, entries = _write(tmp_path / "table", splits)
    directory = tmp_path / "cache"
    probe = SplitCache(str(directory), 1 << 30)
    entry_bytes = max(
        sum(os.path.getsize(os.path.join(d, n)) for n in os.listdir(d))
        for d in (probe.fetch(store, store.uri, e.ref) for e in entries)
    )
    shutil.rmtree(directory)
    cap = 2 * entry_bytes  # far below the working set: entries are evicted all the time
    described = json.dumps(
        [
            {
                "ref": list(_ref_fields(e.ref)),
                "mapping": e.doc_mapping_json,
                "tags": list(e.split_tags),
            }
            for e in entries
        ]
    )
    tests = str(Path(__file__).parent)
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                _SHARED_READER,
                tests,
                str(store.root),
                str(directory),
                str(cap),
                described,
                str(seed),
                "40",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for seed in range(4)
    ]
    results = []
    for process in processes:
        out, err = process.communicate(timeout=600)
        assert process.returncode == 0, err.decode()[-3000:]
        results.append(json.loads(out.decode().strip().splitlines()[-1]))
    assert [r["failures"] for r in results] == [[]] * len(processes)
    assert [r["wrong"] for r in results] == [0] * len(processes)


def _ref_fields(ref: SplitRef) -> tuple[Any, ...]:
    return (ref.path, ref.size, ref.footer_start_offset, ref.footer_end_offset)


def test_itp_search_count_and_aggregate_on_a_flipped_split_never_panic_or_answer_wrongly(
    spark: Any, tmp_path: Path
) -> None:
    import indextables.pyspark as itp

    path = str(tmp_path / "logs")
    df = spark.range(400).selectExpr(
        "id",
        "case when id % 10 = 0 then 'ERROR' else 'INFO' end as level",
        "case when id % 7 = 0 then concat('request ', id, ' timed out') "
        "else concat('request ', id, ' ok') end as message",
        "cast(id as double) / 4 as latency",
    )
    options = {"spark.indextables.indexing.typemap.message": "text"}
    df.coalesce(1).write.format("indextables").options(**options).mode("append").save(path)
    (split,) = Path(path).glob("*.split")
    good = split.read_bytes()
    key = split.name
    footer = read_split_footer(
        LocalStore(path), key, footer_start_offset=None, footer_end_offset=len(good)
    )
    files = footer.files
    expected = {
        "search": sorted(i for i in range(400) if i % 7 == 0 and i / 4 < 60),
        "count": sum(1 for i in range(400) if i % 7 == 0 and i % 10 == 0),
        "aggregate": {"ERROR": 40, "INFO": 360},
    }

    def run(what: str, cache: str) -> Any:
        read = {"spark.indextables.cache.directoryPath": cache}
        if what == "search":
            found = itp.search(spark, path, "message:timed", where="latency < 60", options=read)
            return sorted(r["id"] for r in found.collect())
        if what == "count":
            return itp.count(
                spark, path, query="message:timed", where="level = 'ERROR'", options=read
            )
        rows = itp.aggregate(spark, path, group_by=["level"], metrics={"n": "count"}, options=read)
        return {r["level"]: r["n"] for r in rows.collect()}

    number, errors = 0, 0
    for name, (start, end) in sorted(files.items()):
        if not name.endswith((".fast", ".fieldnorm", ".term")):
            continue
        for offset in _positions(end - start, 6):
            damaged = bytearray(good)
            damaged[start + offset] ^= 0x55
            split.write_bytes(bytes(damaged))
            for what in expected:
                number += 1
                kind, got = _attempt(lambda: run(what, str(tmp_path / f"c{number}")))  # noqa: B023
                where = f"{name}+{offset} ({what})"
                if kind == "ok":
                    assert got == expected[what], f"wrong answer after a flip at {where}"
                else:
                    errors += 1
                    assert isinstance(got, IndexTablesSparkError), f"{where}: {got!r}"
                    assert split.name in str(got), f"{where}: {type(got).__name__}: {got}"
    split.write_bytes(good)
    assert errors > 0


def _panicking_flip(directory: str, entry: SplitEntry) -> tuple[str, int]:
    """A (file, offset) of an entry whose flipped byte makes tantivy-py panic while counting."""
    scratch = directory + "-scratch"
    shutil.copytree(directory, scratch)
    meta = os.path.join(scratch, "meta.json")
    try:
        for name in _entry_files(directory):
            if not name.endswith(".fast"):
                continue
            size = os.path.getsize(os.path.join(directory, name))
            for offset in range(size - 1, -1, -1):
                _flip(os.path.join(scratch, name), offset)
                os.utime(meta, ns=(offset, offset))  # opened afresh (splitreader keys on it)
                try:
                    count_split(scratch, entry, search=SearchSpec(), conditions=_PANIC_CONDITIONS)
                except BaseException as error:
                    if splitcache.is_panic(error):
                        return name, offset
                _flip(os.path.join(scratch, name), offset)
    finally:
        shutil.rmtree(scratch)
    raise AssertionError("no flipped byte of a .fast file made tantivy-py panic")


_PANIC_CONDITIONS = (Condition("<", "latency", (40.0,)),)


def _flip(path: str, offset: int) -> None:
    with open(path, "r+b") as handle:
        handle.seek(offset)
        byte = handle.read(1)
        handle.seek(offset)
        handle.write(bytes([byte[0] ^ 0x55]))


def test_a_panic_inside_a_read_re_fetches_a_damaged_entry_or_names_an_intact_one(
    tmp_path: Path,
) -> None:
    store, (entry,) = _write(tmp_path / "table")
    cache = SplitCache(str(tmp_path / "cache"), 1 << 30)
    directory = cache.fetch(store, store.uri, entry.ref)
    name, offset = _panicking_flip(directory, entry)
    expected = sum(1 for r in _rows() if r["latency"] < 40)
    attempts = []

    def count(directory: str) -> int | None:
        attempts.append(directory)
        if len(attempts) == 1:
            _flip(os.path.join(directory, name), offset)  # damaged after the entry was checked
        return count_split(directory, entry, search=SearchSpec(), conditions=_PANIC_CONDITIONS)

    assert cache.use(store.uri, entry.ref, lambda: store, count) == expected
    assert len(attempts) == 2
    # A split whose own bytes make tantivy-py panic (its entry matches its record): the
    # typed error names split and entry; the panic is its cause, not what escapes.
    cache = SplitCache(str(tmp_path / "cache2"), 1 << 30)
    directory = cache.fetch(store, store.uri, entry.ref)
    _flip(os.path.join(directory, name), offset)
    record_path = Path(directory, ENTRY_RECORD)
    record = json.loads(record_path.read_text())
    record["sha256"][name] = splitcache._digest(os.path.join(directory, name))
    record_path.write_text(json.dumps(record))
    with pytest.raises(SplitReadError) as raised:
        cache.use(
            store.uri,
            entry.ref,
            lambda: store,
            lambda d: count_split(d, entry, search=SearchSpec(), conditions=_PANIC_CONDITIONS),
        )
    assert entry.ref.path in str(raised.value)
    assert directory in str(raised.value)
    assert "PanicException" in str(raised.value)
    assert splitcache.is_panic(raised.value.__cause__)  # type: ignore[arg-type]
