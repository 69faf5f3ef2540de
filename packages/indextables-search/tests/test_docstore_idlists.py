"""Doc ids handed to the decoder as a list (taken as it is), a tuple or a list of numpy
integers decode alike, in their own order, equal to the rows written, with both twins.

Seeded random ids over a store of many blocks: unsorted, duplicated, runs of one
block and ids one a block; the oracle is the written rows indexed by the ids.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_docstore import _ipc, _scratch, _write
from test_docstore_runs import _SPECS, TWINS, _decoded_column, _store, _written_column

from indextables.search.read.docstore import BlockCache, StorePart, decode_parts, impl


def _rows(rng: random.Random, count: int) -> list[dict[str, list[Any]]]:
    rows: list[dict[str, list[Any]]] = []
    for n in range(count):
        row: dict[str, list[Any]] = {"i": [n, -n]}
        if rng.random() < 0.8:
            row["t"] = ["w" * rng.randint(0, 90) + str(n)]
        if rng.random() < 0.5:
            row["f"] = [rng.uniform(-1e9, 1e9)]
        rows.append(row)
    return rows


def _ids(rng: random.Random, total: int) -> list[int]:
    shape = rng.choice(["sorted", "shuffled", "dups", "sparse"])
    if shape == "sparse":  # about one hit a block
        return sorted(rng.sample(range(total), max(1, total // 200)))
    ids = [rng.randrange(total) for _ in range(rng.randint(1, 400))]
    if shape == "sorted":
        return sorted(ids)
    if shape == "dups":
        return sorted(ids + ids[: len(ids) // 2])
    return ids


@pytest.mark.parametrize("seed", range(4))
def test_doc_id_sequences_of_every_type_decode_as_the_written_rows(
    seed: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    rng = random.Random(seed)
    rows = _rows(rng, 3000)
    directory = _write(_scratch(tmp_path_factory), rows)
    store = _store(directory)
    assert len(store.doc_starts) > 10  # many blocks
    for _ in range(4):
        ids = _ids(rng, store.num_docs)
        shapes = [list(ids), tuple(ids), [np.int64(i) for i in ids]]
        for name in TWINS:
            with pytest.MonkeyPatch.context() as mp:
                mp.setenv(impl.IMPL_ENV, name)
                cache = BlockCache(max_bytes=1 << 20)
                out = [
                    decode_parts([StorePart(store, shape, cache, "k")], _SPECS)
                    for shape in shapes
                    for _ in range(3)  # cold, admitted, cached blocks
                ]
            assert len({_ipc(batch) for batch in out}) == 1, name
            for spec in _SPECS.values():
                want = _written_column(rows, spec.name)
                assert _decoded_column(out[0], spec.name) == [want[i] for i in ids]


def test_a_list_is_not_changed_by_its_decode(tmp_path: Path) -> None:
    rows = _rows(random.Random(7), 200)
    store = _store(_write(tmp_path, rows))
    ids = [5, 3, 3, 199, 0]
    for name in TWINS:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv(impl.IMPL_ENV, name)
            batch = decode_parts([StorePart(store, ids)], _SPECS)
        assert ids == [5, 3, 3, 199, 0]
        assert _decoded_column(batch, "i") == [[i, -i] for i in ids]
