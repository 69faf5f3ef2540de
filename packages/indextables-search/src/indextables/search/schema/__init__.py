"""Table schemas and field kinds: Arrow column types, the log's schema JSON, column -> Tantivy
field, tokenizers, partition values."""
