"""The package is layered: every module belongs to a stage of the pipeline (the order written in the
package docstring), no module imports one of a later stage, no import cycle joins modules or the
package's folders — counting every import: at the top of a module, inside a function, and under
``if TYPE_CHECKING:``."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

import riskformula

ROOT = Path(riskformula.__file__).resolve().parent

#: the pipeline's stages, in order (see the package docstring): each module or package named here,
#: with everything under it unless a later entry names a deeper one, belongs to the stage; a module
#: imports nothing from a later stage.  ``riskformula`` itself (its ``__init__``) is the front door.
STAGES = [
    ("foundations", ["riskformula._version", "riskformula._text", "riskformula.errors", "riskformula._checks",
                     "riskformula._json", "riskformula._doc", "riskformula._progress", "riskformula._threads", "riskformula._heap",
                     "riskformula.backends"]),
    ("formula → design", ["riskformula.design", "riskformula.thresholds", "riskformula.datasets"]),
    ("problem", ["riskformula.problem", "riskformula.constraints", "riskformula.fairness"]),
    ("solver", ["riskformula.solver", "riskformula.control", "riskformula.arguments"]),
    ("fitted card", ["riskformula.card", "riskformula.fitinfo", "riskformula.likelihood", "riskformula.kinds",
                     "riskformula.record"]),
    ("reports, exports, counterfactuals, documents", ["riskformula.reports", "riskformula.export",
                                                      "riskformula.counterfactuals", "riskformula.io"]),
    ("fitted model", ["riskformula.model", "riskformula.netbenefit.model", "riskformula.netbenefit.report",
                      "riskformula.netbenefit.cutoffs", "riskformula.netbenefit.grid",
                      "riskformula.survival.model", "riskformula.survival.report"]),
    ("fits", ["riskformula.objectives", "riskformula.pipeline", "riskformula.logistic", "riskformula.netbenefit",
              "riskformula.survival",
              "riskformula.dask", "riskformula.rashomon"]),
    ("front door", ["riskformula", "riskformula.fit", "riskformula.tuning", "riskformula.fairness_path",
                    "riskformula.sklearn", "riskformula.cli", "riskformula.plots", "riskformula.__main__"]),
]


def modules(root: Path = ROOT, package: str = "riskformula") -> dict:
    """Module name → its file, for every ``.py`` file under ``root`` (the package ``package``)."""
    out = {}
    for path in root.rglob("*.py"):
        parts = (package,) + path.relative_to(root).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


@functools.lru_cache(maxsize=None)
def import_graph(root: Path = ROOT, package: str = "riskformula") -> dict:
    """Module → the package's modules it imports, from every import statement in it (top level,
    inside functions and classes, under ``if TYPE_CHECKING:``: none is exempt)."""
    found_modules = modules(root, package)
    graph = {}
    for name, path in found_modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        here = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here.split(".")
                    base = base[:len(base) - node.level + 1]
                    mod = ".".join(base + ([node.module] if node.module else []))
                else:
                    mod = node.module or ""
                # ``from a import b``: the module a.b if there is one, else (a name defined in it) a
                candidates = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in found_modules else mod for a in node.names]
            elif isinstance(node, ast.Import):
                candidates = [a.name for a in node.names]
            else:
                continue
            for target in candidates:
                if target != package and not target.startswith(package + "."):
                    continue
                while target not in found_modules and "." in target:
                    target = target.rpartition(".")[0]
                if target in found_modules and target != name:
                    targets.add(target)
        graph[name] = targets
    return graph


def folder_graph(graph: dict, root: Path = ROOT, package: str = "riskformula") -> dict:
    """The import graph between the package's rooms: each subpackage folder is one room, each module
    directly in the package another (what a drawing of the package's floors shows)."""

    def room(module: str) -> str:
        parts = module.split(".")
        if len(parts) > 2 or (len(parts) == 2 and (root / parts[1]).is_dir()):
            return ".".join(parts[:2])
        return module

    out: dict = {}
    for module, targets in graph.items():
        out.setdefault(room(module), set()).update(room(t) for t in targets if room(t) != room(module))
    return out


def cycle(graph: dict) -> list | None:
    """One import cycle of ``graph`` (a list of modules, the first repeated at the end), or None."""
    state: dict = {}
    stack: list = []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        state[node] = 2
        stack.pop()
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def stage(module: str, stages: list = STAGES) -> int | None:
    """The stage of ``module``: that of the longest entry naming it or a package above it (the
    package root names only its own ``__init__``); None when no entry does."""
    best = None
    root = module.split(".")[0]
    for k, (_, names) in enumerate(stages):
        for p in names:
            if module == p or (p != root and module.startswith(p + ".")):
                if best is None or len(p) > best[1]:
                    best = (k, len(p))
    return None if best is None else best[0]


def upward_imports(graph: dict, stages: list = STAGES) -> list:
    """Every import of a module of a later stage, as text."""
    bad = []
    for module, targets in graph.items():
        k = stage(module, stages)
        for t in targets:
            j = stage(t, stages)
            if k is not None and j is not None and j > k:
                bad.append(f"{module} ({stages[k][0]}) imports {t} ({stages[j][0]})")
    return sorted(bad)


def test_every_module_has_a_stage():
    graph = import_graph()
    assert len(graph) > 50 and "riskformula.record" in graph["riskformula.model"]
    missing = sorted(m for m in graph if stage(m) is None)
    assert not missing, "modules in no stage (add them to STAGES and the package docstring): " + ", ".join(missing)


def test_no_stage_imports_a_later_one():
    bad = upward_imports(import_graph())
    assert not bad, "\n".join(bad)


def test_no_import_cycle_between_modules():
    found = cycle(import_graph())
    assert found is None, "import cycle: " + " → ".join(found)


def test_no_import_cycle_between_folders():
    found = cycle(folder_graph(import_graph()))
    assert found is None, "import cycle between the package's folders: " + " → ".join(found)


def test_the_docstring_states_the_stages():
    doc = riskformula.__doc__
    positions = [doc.find(f"{k + 1}. {name}") for k, (name, _) in enumerate(STAGES)]
    assert -1 not in positions and positions == sorted(positions)


def test_the_checker_finds_a_cycle():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set()}) is None


def _synthetic_package(tmp_path: Path, files: dict) -> Path:
    root = tmp_path / "pkg"
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


_SYNTHETIC_STAGES = [("low", ["pkg.low"]), ("mid", ["pkg.mid"]), ("high", ["pkg", "pkg.high"])]


@pytest.mark.parametrize("how", ["top", "function", "type_checking", "relative_package"])
def test_the_checker_finds_an_upward_import(tmp_path, how):
    """An import of a later stage is found wherever it stands in the module."""
    upward = {
        "top": "from pkg.high import thing\n",
        "function": "def f():\n    from ..high import thing\n    return thing\n",
        "type_checking": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..high import Thing\n",
        "relative_package": "from .. import high\n",
    }[how]
    root = _synthetic_package(tmp_path, {
        "__init__.py": "", "low/__init__.py": "", "low/base.py": upward, "mid.py": "from .low import base\n",
        "high.py": "thing = 1\n"})
    graph = import_graph(root, "pkg")
    assert graph["pkg.low.base"] == {"pkg.high"}
    assert upward_imports(graph, _SYNTHETIC_STAGES) == ["pkg.low.base (low) imports pkg.high (high)"]
    assert cycle(graph) is None  # an upward import need not close a cycle: the stages find it


def test_the_checker_passes_downward_imports(tmp_path):
    root = _synthetic_package(tmp_path, {
        "__init__.py": "from .high import thing\n", "low/__init__.py": "", "low/base.py": "x = 1\n",
        "mid.py": "def f():\n    from .low.base import x\n    return x\n",
        "high.py": "from .mid import f\nthing = 1\n"})
    graph = import_graph(root, "pkg")
    assert upward_imports(graph, _SYNTHETIC_STAGES) == [] and cycle(graph) is None
    assert all(stage(m, _SYNTHETIC_STAGES) is not None for m in graph)


def test_the_checker_finds_a_cycle_between_folders(tmp_path):
    """Two folders that import each other form a cycle of rooms, even when their modules do not."""
    root = _synthetic_package(tmp_path, {
        "__init__.py": "", "a/__init__.py": "", "a/one.py": "from ..b.two import y\nx = 1\n",
        "a/three.py": "z = 1\n", "b/__init__.py": "", "b/two.py": "y = 1\n", "b/four.py": "from ..a.three import z\n"})
    graph = import_graph(root, "pkg")
    assert cycle(graph) is None
    assert cycle(folder_graph(graph, root, "pkg")) in (["pkg.a", "pkg.b", "pkg.a"], ["pkg.b", "pkg.a", "pkg.b"])


@pytest.mark.parametrize("module", ["riskformula.record", "riskformula.model", "riskformula.io",
                                    "riskformula.solver.branch_and_cut"])
def test_core_modules_know_no_backend(module):
    assert not any(t.startswith("riskformula.dask") for t in import_graph()[module])
