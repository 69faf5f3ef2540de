"""Rows out of splits as Arrow: split reads, value conversion, the Arrow row copy."""
