"""Version of the indextables-storage distribution."""

__version__ = "0.1.0.dev0"
