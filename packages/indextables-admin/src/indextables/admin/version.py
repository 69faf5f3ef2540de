"""Version of the indextables-admin distribution."""

__version__ = "0.1.0.dev0"
