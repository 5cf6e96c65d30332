"""The policy family: what the failing rows come to (outcome, thresholds, volume, history)."""
