"""Integration tests: `dd.asset` and `QuarantineAwareIOManager` on real Dagster IO managers."""
