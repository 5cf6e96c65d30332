"""Definition time: one output declaration for every decorator, one builder, the specs.

Everything a schema gives an asset is derived here once, when the module that declares the
asset is imported: its key, settings, Columns tab, code version and check specs; then one
builder makes the Dagster definition, whose compute function is `_run`'s one wrapper.
"""
