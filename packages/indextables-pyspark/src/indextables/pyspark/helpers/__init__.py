"""The ``itp.count`` / ``itp.aggregate`` helpers over the engine."""
