"""The package's import graph: no cycle, and no arrow against the data flow.

Every import statement counts: the ones inside functions (taken on first use to keep the
plugin light) and the ones for type checkers only (under ``TYPE_CHECKING``), since a cycle
through a lazy or a type-only import is still a cycle in the design.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

import pytest_optbench

PACKAGE = Path(pytest_optbench.__file__).parent
# Lower layers never import higher ones; the folders in the order the data flows (suite YAML ->
# items -> prompts -> answers -> records -> metrics -> gates -> reports -> sessions -> hooks).
LAYERS = [
    ("options", "text", "metrics", "testing"),
    ("records",),
    ("kinds",),
    ("suite",),
    ("prompts",),
    ("answers",),
    ("providers",),
    ("elicit", "scoring"),
    ("report",),
    ("session", "cli", "scaffold"),
    ("plugin", "api"),
]
MAX_LOOSE_MODULES = 6  # modules directly in the package, beside __init__.py


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imports(path: Path) -> set[str]:
    """Modules of this package that ``path`` imports (relative to the package)."""
    name = module_name(path)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            elif node.module and node.module.startswith("pytest_optbench"):
                target = node.module.removeprefix("pytest_optbench").lstrip(".")
            else:
                continue
            for alias in node.names:  # "from . import x" may name a submodule
                sub = f"{target}.{alias.name}" if target else alias.name
                module = PACKAGE / sub.replace(".", "/")
                found.add(sub if module.with_suffix(".py").exists() or (module / "__init__.py").exists() else target)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("pytest_optbench."):
                    found.add(alias.name.removeprefix("pytest_optbench."))
    return {f for f in found if f and f != name}


@functools.cache  # the package's files do not change during a test run
def graph() -> dict[str, set[str]]:
    return {module_name(p): imports(p) for p in sorted(PACKAGE.rglob("*.py"))}


def layer(module: str) -> int:
    best, index = -1, -1
    for number, prefixes in enumerate(LAYERS):
        for prefix in prefixes:  # the longest matching prefix decides (elicit.parse vs elicit)
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, index = len(prefix), number
    return index


def test_every_module_has_a_layer() -> None:
    unplaced = [m for m in graph() if m and layer(m) < 0]
    assert not unplaced, f"add these modules to LAYERS: {unplaced}"


def test_no_import_against_the_data_flow() -> None:
    upward = [f"{m} -> {t}" for m, targets in graph().items() for t in targets
              if m and layer(t) > layer(m)]
    assert not upward


def _cycles(edges: dict[str, set[str]]) -> list[str]:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    cycles = []

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(edges.get(module, ())):
            if state.get(target) == 1:
                cycles.append(" -> ".join([*path[path.index(target):], target]))
            elif target not in state:
                visit(target, [*path, target])
        state[module] = 2

    for module in sorted(edges):
        if module not in state:
            visit(module, [module])
    return cycles


def test_no_import_cycle_between_modules() -> None:
    assert not _cycles(graph())


def unit(module: str) -> str:
    """The first-level unit a module belongs to: its top folder, or itself when loose."""
    return module.split(".")[0]


def test_no_import_cycle_between_first_level_units() -> None:
    units: dict[str, set[str]] = {}
    for module, targets in graph().items():
        if module:
            units.setdefault(unit(module), set()).update(unit(t) for t in targets if unit(t) != unit(module))
    assert not _cycles(units)


def test_at_most_six_modules_sit_loose_in_the_package() -> None:
    loose = sorted(p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py")
    assert len(loose) <= MAX_LOOSE_MODULES, loose


def test_the_layering_sees_type_only_and_function_level_imports() -> None:
    # The two kinds of import a graph of the modules' top levels would miss.
    assert "scoring.gates.spec" in graph()["scoring.gates.reasons"]  # under TYPE_CHECKING only
    assert "report.reading" in graph()["session.controller"]  # inside a method only


@pytest.mark.parametrize("module", ["plugin", "options", "session.worker", "session.controller"])
def test_modules_loaded_with_pytest_import_nothing_heavy_at_the_top(module: str) -> None:
    """What pytest imports in every session (the entry point and what it imports at the top)."""
    path = PACKAGE / (module.replace(".", "/") + ".py")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    names = {a.name.split(".")[0] for n in top if isinstance(n, ast.Import) for a in n.names}
    names |= {(n.module or "").split(".")[0] for n in top if isinstance(n, ast.ImportFrom) and not n.level}
    assert not names & {"numpy", "scipy", "yaml", "openai", "anthropic", "matplotlib", "tqdm"}


def test_every_name_the_benchmarks_import_exists() -> None:
    # The benchmarks run outside the suite; this keeps a move inside the package from
    # leaving one of them stopping at its first import.
    import importlib
    import importlib.util

    bench = PACKAGE.parent / "bench"
    missing = []
    for path in sorted(bench.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("pytest_optbench"):
                try:
                    module = importlib.import_module(node.module or "")
                except ImportError:
                    missing.append(f"{path.name}: {node.module}")
                    continue
                missing += [f"{path.name}: {node.module}.{a.name}" for a in node.names
                            if not hasattr(module, a.name) and importlib.util.find_spec(f"{node.module}.{a.name}") is None]
            elif isinstance(node, ast.Import):
                missing += [f"{path.name}: {a.name}" for a in node.names
                            if a.name.startswith("pytest_optbench") and importlib.util.find_spec(a.name) is None]
    assert bench.is_dir() and not missing


def test_unit_tests_mirror_the_package() -> None:
    """Each folder of tests/unit is a package folder of the same path (what it tests)."""
    unit_tests = Path(__file__).parent
    folders = [d.relative_to(unit_tests) for d in unit_tests.rglob("*") if d.is_dir() and d.name != "__pycache__"]
    assert folders and not [str(f) for f in folders if not (PACKAGE / f / "__init__.py").exists()]
