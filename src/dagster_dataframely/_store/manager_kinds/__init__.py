"""One adapter per kind of IO manager: everything the package asks a manager, answered once.

`kind_choice.kind_of` picks a manager's kind; every other module asks the kind.
"""
