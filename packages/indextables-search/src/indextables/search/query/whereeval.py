"""SQL ``where`` strings evaluated over Arrow batches with Spark's semantics.

Without Spark, nobody re-applies a ``where`` condition after the index narrowed
the rows: :func:`compile_where` gives the exact filter. Its semantics are Spark
SQL's (docs/pyspark.md, "Comparison semantics"): three-valued logic (a
comparison with null is null, and a row is kept only when the whole condition
is true), ``NaN = NaN`` and NaN above every other number, ``-0.0 = 0.0``,
literals typed by the column as Spark types them, timestamps compared as
instants. What it cannot evaluate exactly it refuses at planning, naming the
part (:class:`~indextables.search.errors.QuerySyntaxError`), never guessing.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from indextables.search.errors import QuerySyntaxError

__all__ = ["WhereFilter", "compile_where"]


@dataclass(frozen=True, slots=True)
class WhereFilter:
    """A compiled ``where`` condition.

    Attributes:
        text: the condition as given.
        columns: the (schema-cased) columns the condition reads.
    """

    text: str
    columns: tuple[str, ...]

    def mask(self, batch: pa.RecordBatch) -> pa.BooleanArray:
        """True for the rows of ``batch`` the condition keeps (never null)."""
        raise QuerySyntaxError(f"where={self.text!r}: where conditions are not evaluated yet")


def compile_where(where: str, schema: pa.Schema) -> WhereFilter:
    """The filter of ``where`` over rows of ``schema``.

    Raises:
        QuerySyntaxError: a condition that does not parse, names a column the
            schema lacks, or that this evaluator cannot answer exactly.
    """
    raise QuerySyntaxError(f"where={where!r}: where conditions are not evaluated yet")
