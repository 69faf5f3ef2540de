"""Writing with Spark: the data source's writers and the write-side commands' tasks."""
