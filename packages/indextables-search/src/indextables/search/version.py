"""Version of the indextables-search distribution."""

__version__ = "0.1.0.dev0"
