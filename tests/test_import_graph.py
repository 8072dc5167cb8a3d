"""The import graph of the project's own modules: no cycle, no product package importing the
operations or the tests, and the packages in layers.

Every module under service/ events/ projections/ workers/ ops/ (and tests/ for the layers) is
parsed with `ast`; an import counts wherever it is written (module level, inside a function,
under `if TYPE_CHECKING`), relative imports are resolved, and only project modules are kept.
`from package import name` counts as an import of `package.name` when that is a module, else
of `package`; a bare import of a module of tests/ (`import web_kit`, found through sys.path)
counts as an import of `tests.web_kit`.

The layers (docs/architecture.md), lowest first: each package imports only packages before it
in LAYERS, so no two import each other. events < projections < workers < service < ops < tests:
the workers (jobs, bots) are written against the core's interface, which the service (the
composition root) builds and binds to them.
"""

from __future__ import annotations

import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("service", "events", "projections", "workers", "ops")
LAYERS = ("events", "projections", "workers", "service", "ops", "tests")   # lowest first
PRODUCT = ("service", "events", "projections", "workers")
NOT_FOR_PRODUCT = ("ops", "tests")

# Knots of import cycles allowed (each the sorted set of one strongly connected component):
# none. Keep it empty; a new cycle fails the test with its modules named.
KNOWN_CYCLES_BEING_REMOVED: list[tuple[str, ...]] = []


TEST_MODULES = frozenset(name[:-3] for name in os.listdir(os.path.join(ROOT, "tests")) if name.endswith(".py"))


def project_modules(packages: tuple[str, ...] = PACKAGES) -> dict[str, str]:
    """{dotted module name: file path} of every module in these packages."""
    out = {}
    for package in packages:
        for folder, dirs, files in os.walk(os.path.join(ROOT, package)):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith(".py"):
                    rel = os.path.relpath(os.path.join(folder, name), ROOT)[:-3].split(os.sep)
                    if rel[-1] == "__init__":
                        rel = rel[:-1]
                    out[".".join(rel)] = os.path.join(folder, name)
    return out


def _resolve(module: str, is_package: bool, level: int, target: str | None) -> str:
    """The absolute name of a relative import `from .<target>` written in `module`."""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    if level > 1:
        base = base[:len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def imports_of(module: str, path: str, known: set[str]) -> set[str]:
    """The project modules (and `tests` modules) that `module` imports anywhere in its file."""
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), path)
    is_package = path.endswith("__init__.py")
    found = set()

    def add(name: str) -> None:
        top = name.split(".")[0]
        if top in TEST_MODULES and top not in PACKAGES:
            name, top = "tests." + name, "tests"
        if top in PACKAGES or top == "tests":
            # the longest prefix that is a known module (or the name itself for tests)
            parts = name.split(".")
            while parts and ".".join(parts) not in known and parts[0] != "tests":
                parts.pop()
            if parts:
                found.add(".".join(parts))

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, is_package, node.level, node.module) if node.level else node.module
            if base is None:
                continue
            for alias in node.names:
                full = f"{base}.{alias.name}"
                add(full if full in known else base)
    found.discard(module)
    return found


def import_graph(packages: tuple[str, ...] = PACKAGES) -> dict[str, set[str]]:
    modules = project_modules(packages)
    known = set(modules) | set(project_modules(PACKAGES))
    return {name: imports_of(name, path, known) for name, path in modules.items()}


def package_imports(graph: dict[str, set[str]]) -> dict[tuple[str, str], list[str]]:
    """The package-level graph: {(package, package it imports): ["module -> module", ...]}."""
    out: dict[tuple[str, str], list[str]] = {}
    for module, imported in sorted(graph.items()):
        for other in sorted(imported):
            edge = (module.split(".")[0], other.split(".")[0])
            if edge[0] != edge[1]:
                out.setdefault(edge, []).append(f"{module} -> {other}")
    return out


def against_the_layers(edges: dict[tuple[str, str], list[str]], layers: tuple[str, ...] = LAYERS) -> list[str]:
    """Each package import that does not go down the layers, with the module imports that make it."""
    return [f"{a} imports {b} ({', '.join(modules)})" for (a, b), modules in sorted(edges.items())
            if b not in layers[:layers.index(a)]]


def cycles(graph: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """The knots of cycles: each strongly connected component of more than one module
    (Tarjan's algorithm), as its sorted modules. No knot, no cycle."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(tuple(sorted(component)))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def describe(graph: dict[str, set[str]], knot: tuple[str, ...]) -> str:
    """A knot named by its cycles: a shortest loop through each of its modules."""
    members = set(knot)
    loops = []
    for start in knot:
        paths, frontier, loop = {start: (start,)}, [start], None
        while frontier and loop is None:
            nxt = []
            for v in frontier:
                for w in sorted(graph[v] & members):
                    if w == start and loop is None:
                        loop = paths[v] + (start,)
                    elif w not in paths:
                        paths[w] = paths[v] + (w,)
                        nxt.append(w)
            frontier = nxt
        text = " -> ".join(loop)
        if not any(set(loop) <= set(seen.split(" -> ")) for seen in loops):
            loops.append(text)
    return "; ".join(loops)


def test_the_graph_sees_imports_at_any_depth():
    graph = import_graph()
    assert "projections.templates" in graph["workers.bots.random_bot"]
    assert "workers.jobs" in graph["workers.memory_jobs"]            # relative: from . import jobs
    assert "service.app" in graph["ops.drills._kit"]                   # inside a function


def test_no_import_cycle():
    found = cycles(import_graph())
    unexpected = [c for c in found if c not in KNOWN_CYCLES_BEING_REMOVED]
    graph = import_graph()
    assert not unexpected, "import cycles: " + " | ".join(describe(graph, knot) for knot in unexpected)


def test_the_known_cycles_are_still_there_until_the_list_is_emptied():
    """When a listed cycle is gone, remove it from KNOWN_CYCLES_BEING_REMOVED."""
    found = cycles(import_graph())
    gone = [c for c in KNOWN_CYCLES_BEING_REMOVED if c not in found]
    assert not gone, f"no longer a cycle, drop it from KNOWN_CYCLES_BEING_REMOVED: {gone}"


def test_product_packages_import_neither_ops_nor_tests():
    bad = sorted((module, imported) for module, imported_set in import_graph().items()
                 if module.split(".")[0] in PRODUCT
                 for imported in imported_set if imported.split(".")[0] in NOT_FOR_PRODUCT)
    assert not bad, "product modules importing ops or tests: " + ", ".join(f"{m} -> {i}" for m, i in bad)


def test_the_cycle_finder_names_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "f"}, "d": {"a"}, "e": set(), "f": {"c"}}
    assert cycles(graph) == [("a", "b", "c", "f")]
    assert describe(graph, ("a", "b", "c", "f")) == "a -> b -> c -> a; c -> f -> c"


def test_each_package_imports_only_the_packages_below_it():
    bad = against_the_layers(package_imports(import_graph(LAYERS)))
    assert not bad, "imports against the layers (" + " < ".join(LAYERS) + "): " + "; ".join(bad)


def test_no_two_packages_import_each_other():
    edges = package_imports(import_graph(LAYERS))
    both = sorted({tuple(sorted(edge)) for edge in edges if edge[::-1] in edges})
    assert not both, "packages importing each other: " + "; ".join(
        f"{a} <-> {b}: {edges[(a, b)][:3]} and {edges[(b, a)][:3]}" for a, b in both)


def test_the_layers_are_the_projects_top_level_packages():
    """Every top-level folder holding Python code is a layer, but docs/ (its tools: below)."""
    found = {name for name in os.listdir(ROOT) if os.path.isdir(os.path.join(ROOT, name))
             and not name.startswith(".") and not name.endswith(".egg-info")
             and any(f.endswith(".py") for _, _, files in os.walk(os.path.join(ROOT, name)) for f in files)}
    assert found - {"docs"} == set(LAYERS)


def test_the_layer_check_names_the_modules_of_an_upward_import(tmp_path):
    graph = {"workers.tasks": {"service.bootstrap", "workers.jobs"}, "service.cli": {"workers.tasks"},
             "events.store": set(), "tests.t": {"service.cli", "events.store"}}
    assert against_the_layers(package_imports(graph)) == ["workers imports service (workers.tasks -> service.bootstrap)"]
    sneaky = tmp_path / "tool.py"
    sneaky.write_text("import sys\nsys.path.insert(0, 'tests')\nimport web_kit\nfrom tests.golden_games import CASES\n")
    assert imports_of("ops.tool", str(sneaky), set(project_modules())) == {"tests.web_kit", "tests.golden_games"}


def test_docs_tools_import_nothing_from_the_tests():
    """The documentation's generators are tools of the product, not of its tests: no import of
    tests/ (as `tests.x` or, through sys.path, a bare test module)."""
    folder = os.path.join(ROOT, "docs", "tools")
    known = set(project_modules())
    bad = sorted(f"docs/tools/{name} -> {imported}" for name in sorted(os.listdir(folder)) if name.endswith(".py")
                 for imported in imports_of(f"docs.tools.{name[:-3]}", os.path.join(folder, name), known)
                 if imported.split(".")[0] == "tests")
    assert not bad, "docs/tools importing tests: " + ", ".join(bad)
