"""Configuration: every setting from the environment, validated (service/settings.py).

`from_env()` is what the app factory, the worker command and the stack read. With no
REDIS_URL an in-process app runs on an in-memory fakeredis (tests and in-process tools);
the served API refuses to start without one (service/wsgi.py), and `make serve` runs the
stack, which starts its own Redis. service/bootstrap.py builds everything from these.
"""

from __future__ import annotations

from typing import Mapping, Optional

from . import settings as settings_module

DEFAULTS = {s.name: s.default for s in settings_module.SETTINGS}


def from_env(environ: Optional[Mapping[str, str]] = None) -> dict:
    """Every setting, from SPECULATION_* (REDIS_URL and RQ_REDIS_URL also unprefixed).
    Raises SettingsError naming the first bad variable."""
    return settings_module.load(environ)
