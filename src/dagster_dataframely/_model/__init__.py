"""What the package reads once from Dataframely, and the names it makes of it.

A schema's columns and rules, a Collection's members and filters, the settings, the check
groups, the Columns tab and the code version: everything here is derived at declaration, from
the schema alone, and holds no Dagster run-time state.
"""
