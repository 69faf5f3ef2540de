"""Operations run in racing processes (``test_mutation_races``): each waits at a barrier,
runs, and reports ``"won"`` or ``"conflict"`` (a ``CommitConflictError``) on a queue."""

from __future__ import annotations

from typing import Any

import pyarrow as pa


def race(name: str, uri: str, barrier: Any, results: Any, args: dict[str, Any]) -> None:
    """Run operation ``name`` once ``barrier`` lets every racer go."""
    from indextables.protocol import CommitConflictError
    from indextables.search import delete_rows, merge_splits, write_table

    barrier.wait(timeout=120)
    try:
        if name == "delete":
            delete_rows(uri, where=args["where"])
        elif name == "append":
            write_table(uri, pa.Table.from_pylist(args["rows"]), workers=1)
        elif name == "replace":
            write_table(
                uri,
                pa.Table.from_pylist(args["rows"]),
                mode="overwrite",
                replace_where=args["where"],
                workers=1,
            )
        elif name == "overwrite":
            write_table(uri, pa.Table.from_pylist(args["rows"]), mode="overwrite", workers=1)
        elif name == "merge":
            merge_splits(uri, purge_deletes=args.get("purge", False))
        results.put((name, "won"))
    except CommitConflictError:
        results.put((name, "conflict"))
    except Exception as error:  # reported, so the test fails naming it
        results.put((name, f"error {type(error).__name__}: {error}"))
