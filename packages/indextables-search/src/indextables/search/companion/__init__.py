"""Companion indexes: search a Delta or Parquet table in place (docs/companion.md)."""
