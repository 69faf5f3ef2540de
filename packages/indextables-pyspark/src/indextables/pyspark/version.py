"""Version of the indextables-pyspark distribution."""

__version__ = "0.1.0.dev0"
