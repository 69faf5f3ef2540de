"""The table's log as the engine reads it: snapshots, live splits, commits."""
