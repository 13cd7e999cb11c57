"""The ``contam`` command line (Typer), thin over the Python API."""
