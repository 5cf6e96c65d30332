"""The public front-ends: each decorator's signature and docstring, then one call below.

`dd.asset`, `dd.AssetOut`, `dd.multi_asset`, `dd.collection_asset`, `dd.table_checks` and
`dd.testing.call_asset` read their arguments here and hand them to `_declare`.
"""
