"""The decision of a run: each output's outcome, and what its check kinds judged of it."""
