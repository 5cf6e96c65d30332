"""`python -m dagster_dataframely`: the package's command line (`suggest`)."""

import sys

from dagster_dataframely._suggest.command_line import main

if __name__ == "__main__":
    sys.exit(main())
