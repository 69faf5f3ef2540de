"""Rows into splits: the split writer, statistics, MERGE SPLITS."""
