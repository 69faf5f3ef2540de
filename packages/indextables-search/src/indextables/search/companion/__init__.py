"""Companion indexes: search a Delta, Iceberg or Parquet table in place (docs/companion.md)."""
