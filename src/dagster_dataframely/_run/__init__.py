"""Run time: the one pipeline every validated asset's step goes through, in layers.

Read top to bottom, as one run's data goes: the entry pipelines (`compute`, `validation`,
`stored_tables`), the run's `scope` (one partition or a range), its `emit`ting, the `report` on
each table, the `decide`d outcome of each output, the `checks` whose kinds judge it, and the
`split` of its rows; below them the few modules every layer reads. Each imports only below it.
"""
