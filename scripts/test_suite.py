"""`make test`: the suite on pytest-xdist workers and, at the same time, the distributed folder.

`integration_tests/distributed/` runs in a pytest process of its own: its tests share one Dask
cluster, PostgreSQL server and S3 server, started once for the folder (each xdist worker would
start its own). Its processes spend most of their time waiting on one another, so it runs beside
the rest of the suite instead of after it. Its output is printed when it ends, after the rest's.

Usage: python scripts/test_suite.py PYTEST FOLDER [ARGUMENT ...]: the arguments go to the run of
the rest (FOLDER is left out of it). Exits non-zero if either run fails. Ctrl-C reaches both.
"""

import subprocess
import sys
import tempfile


def main(pytest: str, folder: str, *arguments: str) -> int:
    with tempfile.TemporaryFile() as output:
        distributed = subprocess.Popen([pytest, folder], stdout=output, stderr=subprocess.STDOUT)
        rest = subprocess.Popen([pytest, *arguments, f"--ignore={folder}"])
        codes = [finished(rest), finished(distributed)]
        output.seek(0)
        sys.stdout.flush()
        sys.stdout.buffer.write(output.read())
        sys.stdout.flush()
    return next((code for code in codes if code != 0), 0)


def finished(process: "subprocess.Popen[bytes]") -> int:
    while True:
        try:
            return process.wait()
        except KeyboardInterrupt:
            # NOTE: the terminal's Ctrl-C reached both pytest processes too; waiting lets their
            # fixtures stop the cluster, the servers and the workers they started.
            continue


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
