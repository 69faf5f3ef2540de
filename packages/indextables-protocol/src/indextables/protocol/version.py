"""Version of the indextables-protocol distribution."""

__version__ = "0.1.0.dev0"
