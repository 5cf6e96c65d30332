"""The report family: what a run tells of its rows: metadata, statistics, checks, samples."""
