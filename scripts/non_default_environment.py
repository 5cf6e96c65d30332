"""Print every setting variable with a valid non-default value, as `NAME=value` lines.

`make unit-hostile` exports them and runs the unit suite, to prove no test depends on the
outer environment.
"""

import shlex

from dagster_dataframely._model.settings import non_default_environment

for name, value in non_default_environment().items():
    print(f"{name}={shlex.quote(value)}")
