"""What one run is over: one partition (or none), or a range of them, and how it reports."""
