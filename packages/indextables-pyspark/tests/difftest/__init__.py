"""A differential test harness: IndexTables against Parquet over the same random data.

Modules, one job each:

- :mod:`.values`: value pools per Spark type (ordinary, hostile, extreme).
- :mod:`.tables`: seeded random table plans (schema, write options, appends, overwrite).
- :mod:`.predicates`: random filters as small trees rendered to Spark SQL.
- :mod:`.compare`: exact row normalisation and multiset differences.
- :mod:`.paths`: the read paths under test (``spark.read`` with and without pushdown,
  ``itp.search`` local and distributed, streaming, the ``fieldmatch``/``query`` options).
- :mod:`.runner`: writes a plan to both formats and runs every query on every path.
- :mod:`.shrink`: delta debugging of a failure and a self-contained reproducer.
"""
