"""The IndexTables SQL commands run through ``itp.sql``."""
