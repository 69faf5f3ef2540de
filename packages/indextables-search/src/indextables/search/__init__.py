"""indextables.search: the IndexTables split engine without Spark, Arrow in and out.

    >>> from indextables.search import open_table  # doctest: +SKIP
    >>> open_table("/data/logs").search("message:timeout", limit=10)

See docs/search.md.
"""

from indextables.search.searchtable import SearchTable, open_table
from indextables.search.version import __version__
from indextables.search.write.tablewrite import WriteResult, write_table

__all__ = ["SearchTable", "WriteResult", "__version__", "open_table", "write_table"]
