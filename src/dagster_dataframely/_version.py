"""The package's version: the one place it is written.

The build reads it from here (`[tool.hatch.version]` in `pyproject.toml`), so the installed
distribution's metadata and `dagster_dataframely.__version__` cannot disagree.
"""

__version__ = "0.1.0"
