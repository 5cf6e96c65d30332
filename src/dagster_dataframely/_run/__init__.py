"""Run time: the one pipeline every validated asset's step goes through.

The compute wrapper calls the user's function once, then for each output: the column gate,
the split (`Schema.filter`, or a Collection's joint `Collection.filter`), an outcome of the
failure policy, and its emission: quarantines written, materializations and checks yielded,
the failure raised. Everything reported is computed from what the one split returned.
"""
