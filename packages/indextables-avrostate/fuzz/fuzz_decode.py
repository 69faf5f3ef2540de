"""atheris fuzzer: the Cython decoder on hostile bytes, checked against the pure twin.

    python packages/indextables-avrostate/fuzz/fuzz_decode.py --make-seeds /tmp/corpus
    python packages/indextables-avrostate/fuzz/fuzz_decode.py /tmp/corpus -runs=200000

Each input is split into a record count and a block; both twins scan it,
decode every kept record, read a statistic and build entries. They must
agree (same values, or both DecodeError) and the process must never crash.
Seeded with real blocks so mutations reach deep into records.
"""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports():
    from indextables.avrostate import impl
    from indextables.avrostate._decode_common import (
        SLOT_MIN_VALUES,
        Columns,
        DecodeError,
        compile_plan,
    )
    from indextables.avrostate.schemas import FILE_ENTRY_SCHEMA_V2
    from indextables.protocol.predicates import compare_values
    from indextables.protocol.state import FileEntry

PLAN = compile_plan(FILE_ENTRY_SCHEMA_V2, path="<fuzz>")
TWINS = [impl.load("cython"), impl.load("python")]


def outcome(module: object, raw: bytes, count: int) -> object:
    cols = Columns()
    try:
        module.scan_block(raw, count, PLAN, {}, None, None, cols)  # type: ignore[attr-defined]
        records = [module.decode_record(raw, s, PLAN) for s in cols.starts]  # type: ignore[attr-defined]
        stats = module.map_column(raw, cols.starts, PLAN, SLOT_MIN_VALUES, "id")  # type: ignore[attr-defined]
        spans = module.stat_spans(raw, cols.starts, PLAN, "id")  # type: ignore[attr-defined]
        orders = module.stat_codes(  # type: ignore[attr-defined]
            raw, spans, ["1", "a", "1.5"], compare_values, 32
        )
        built = module.decode_entries(  # type: ignore[attr-defined]
            raw, cols.starts, cols.paths, cols.partition_values, PLAN, FileEntry
        )
    except DecodeError:
        return "DecodeError"
    return [getattr(cols, n) for n in Columns.__slots__], records, stats, spans, orders, built


def test_one_input(data: bytes) -> None:
    if not data:
        return
    count, raw = data[0] % 8, data[1:]
    results = [outcome(twin, raw, count) for twin in TWINS]
    if results[0] != results[1]:
        raise AssertionError(f"twins disagree on {raw!r} (count {count})")


def make_seeds(directory: str) -> None:
    """Write real blocks (count byte + raw block) as a seed corpus."""
    import pathlib

    from indextables.avrostate.container import parse_container
    from indextables.avrostate.manifest_writer import encode_manifest

    out = pathlib.Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    for n in range(1, 6):
        entries = [
            FileEntry(
                f"p={i}/f{i}.split",
                {"p": str(i)},
                i,
                0,
                True,
                i,
                0,
                min_values={"id": str(i)},
                split_tags=("a",),
                delete_opstamp=i,
            )
            for i in range(n)
        ]
        block = parse_container(encode_manifest(entries, codec="null"), path="seed").blocks[0]
        (out / f"seed-{n}").write_bytes(bytes([block.count]) + block.data)


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--make-seeds":
        make_seeds(sys.argv[2])
        return
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
