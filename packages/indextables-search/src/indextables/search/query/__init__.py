"""Searches and filters: ``where`` conditions, Tantivy queries, search options, pruning,
exactness."""
