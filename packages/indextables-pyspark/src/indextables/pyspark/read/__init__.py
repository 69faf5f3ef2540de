"""Reading with Spark: the data source, its readers and the interactive search."""
