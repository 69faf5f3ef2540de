"""Placeholder for the main job until the Spark data source lands (issue 6)."""

print("make demo: the PySpark pipeline arrives with indextables-pyspark; nothing to run yet.")
