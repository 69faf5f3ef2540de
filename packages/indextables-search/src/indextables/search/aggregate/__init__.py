"""Counts and aggregations from fast fields: bucket specs, per-split partials, merging."""
