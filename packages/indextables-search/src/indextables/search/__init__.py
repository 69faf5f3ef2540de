"""indextables.search: the IndexTables split engine without Spark."""

from indextables.search.version import __version__

__all__ = ["__version__"]
