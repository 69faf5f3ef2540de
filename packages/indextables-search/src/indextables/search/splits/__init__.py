"""Splits on a store: fetching, the checked local split cache, term dictionaries."""
