"""Version of the indextables-avrostate distribution."""

__version__ = "0.1.0.dev0"
