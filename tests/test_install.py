"""`ops/install.py`, what every make target runs first: two targets started at once on a fresh
clone build the venv once (one builds, the other waits for it), and a changed pyproject.toml
builds it again."""

import os
import threading
import time

from ops import install


def test_two_targets_started_at_once_build_the_venv_once(tmp_path, capsys):
    venv, stamp = str(tmp_path / ".venv"), str(tmp_path / ".venv" / ".installed")
    builds, started = [], threading.Event()

    def slow_build(venv_path, extras):
        os.makedirs(venv_path, exist_ok=True)
        builds.append(extras)
        started.set()
        time.sleep(0.5)            # pip at work: the second target must wait, not build too

    results = []
    first = threading.Thread(target=lambda: results.append(install.main(venv, stamp, "test", build=slow_build)))
    first.start()
    assert started.wait(5)
    results.append(install.main(venv, stamp, "test", build=slow_build))
    first.join(5)
    assert results == [0, 0] and builds == ["test"]
    assert os.path.exists(stamp)
    assert "waiting for it" in capsys.readouterr().out


def test_a_stamp_older_than_pyproject_builds_again(tmp_path):
    venv, stamp = str(tmp_path / ".venv"), str(tmp_path / ".venv" / ".installed")
    os.makedirs(venv)
    open(stamp, "w").close()
    builds = []
    assert install.main(venv, stamp, "test", build=lambda v, e: builds.append(e)) == 0
    assert builds == []                      # up to date: nothing to do
    os.utime(stamp, (0, 0))                  # pyproject.toml changed since
    assert install.main(venv, stamp, "test,bench", build=lambda v, e: builds.append(e)) == 0
    assert builds == ["test,bench"] and install.up_to_date(stamp)
