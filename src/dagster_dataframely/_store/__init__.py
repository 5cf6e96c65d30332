"""Where rows land: the writers of invalid rows, and the IO-manager side of the package.

The writer a run or a call gets (the asset's IO manager, a parquet file, memory), the checks
that keep a quarantine in a place of its own, the quarantine's observations, and
`QuarantineAwareIOManager` with its staged writes.
"""
