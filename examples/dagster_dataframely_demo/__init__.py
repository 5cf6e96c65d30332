"""An example code location: a small orders pipeline validated with dagster-dataframely."""
