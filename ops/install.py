"""Build the project's virtual environment once, even when several make targets start at once.

`make serve` and `make test` started together on a fresh clone would both find no venv and
both run pip into the same folder. Each make target calls this script instead; the first to
take the lock (VENV.lock) builds, the others wait on the lock and then find the stamp up to date.

Run with the system Python (the venv may not exist yet): it imports nothing of the project.
    python3 ops/install.py VENV STAMP EXTRAS     e.g.  .venv .venv/.installed test
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def up_to_date(stamp: str) -> bool:
    project = os.path.join(ROOT, "pyproject.toml")
    return os.path.exists(stamp) and os.path.getmtime(stamp) >= os.path.getmtime(project)


def build(venv: str, extras: str) -> None:
    pip = os.path.join(venv, "bin", "pip")
    if not os.path.exists(pip):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    subprocess.run([pip, "install", "--upgrade", "--progress-bar", "on", "pip"], check=True)
    subprocess.run([pip, "install", "--progress-bar", "on", "-e", f".[{extras}]"], check=True, cwd=ROOT)


def main(venv: str, stamp: str, extras: str, build=build) -> int:
    with open(venv.rstrip("/") + ".lock", "w") as lock:      # beside the venv: .venv.lock
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"== another make target is installing into {venv}: waiting for it", flush=True)
            fcntl.flock(lock, fcntl.LOCK_EX)
        if up_to_date(stamp):            # built by the make target we waited for
            return 0
        print(f"== installing the service and its dependencies into {venv} (once; about a minute)", flush=True)
        build(venv, extras)
        with open(stamp, "w"):
            pass
        print("== installed", flush=True)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
