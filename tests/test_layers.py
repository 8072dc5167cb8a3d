"""The layers of docs/architecture.md that the import graph alone does not check: the
application core loads no HTTP or queue library, and routes reach neither Redis nor the log."""

import ast
import os
import subprocess
import sys

from test_import_graph import ROOT, import_graph

FORBIDDEN_IN_CORE = ("flask", "flask_smorest", "werkzeug", "rq")


def test_the_core_imports_neither_flask_werkzeug_nor_rq():
    """Every module of service/core imported in a fresh interpreter: none of these is loaded,
    directly or through anything the core imports."""
    script = (
        "import importlib, pkgutil, sys, service.core\n"
        "for m in pkgutil.iter_modules(service.core.__path__):\n"
        "    importlib.import_module('service.core.' + m.name)\n"
        f"print(' '.join(sorted(n for n in {FORBIDDEN_IN_CORE!r} if n in sys.modules)))\n")
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.split() == [], f"the core loads {out.stdout.strip()}"


def test_routes_call_the_core_only():
    """No route imports the event store, the index, the session fold, disclosure or a Redis
    client: what a route needs comes from the core."""
    bad = sorted((m, d) for m, deps in import_graph().items() if m.startswith("service.routes")
                 for d in deps if d.startswith("events") or d in ("projections.session", "projections.disclosure"))
    folder = os.path.join(ROOT, "service", "routes")
    for name in sorted(os.listdir(folder)):
        if name.endswith(".py"):
            with open(os.path.join(folder, name), encoding="utf-8") as handle:
                tree = ast.parse(handle.read())
            for node in ast.walk(tree):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
                bad += [(name, n) for n in names if n.split(".")[0] in ("redis", "fakeredis")]
    assert not bad, f"routes reaching past the core: {bad}"
