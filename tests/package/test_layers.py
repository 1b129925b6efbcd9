"""The package is layered: no import cycle between its modules (imports inside functions
included, ``if TYPE_CHECKING:`` blocks not), and no stage of the pipeline imports a later one
(the order written in the package docstring)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import riskformula

ROOT = Path(riskformula.__file__).resolve().parent

#: the pipeline's stages, in order (see the package docstring); a module of one stage imports
#: nothing from a later stage. Modules not listed (reports, exports, counterfactuals, fairness,
#: backends) sit beside the stages; for them the no-cycle rule holds.
STAGES = [
    ("foundations", ["riskformula._version", "riskformula.errors", "riskformula._checks", "riskformula._json",
                     "riskformula._doc", "riskformula._progress", "riskformula._threads"]),
    ("formula → design", ["riskformula.design", "riskformula.thresholds", "riskformula.datasets"]),
    ("problem", ["riskformula.problem"]),
    ("solver", ["riskformula.solver"]),
    ("fitted card", ["riskformula.card", "riskformula.fitinfo", "riskformula.model", "riskformula.io"]),
    ("fits", ["riskformula.control", "riskformula.objectives", "riskformula.pipeline", "riskformula.logistic",
              "riskformula.netbenefit.fit"]),
    ("front door", ["riskformula.fit", "riskformula.tuning", "riskformula.fairness_path", "riskformula.sklearn",
                    "riskformula.cli"]),
]


def _modules() -> dict:
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = ("riskformula",) + path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def import_graph() -> dict:
    """Module → the package's modules it imports (anywhere in it, outside ``if TYPE_CHECKING:``)."""
    modules = _modules()
    graph = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                skip |= {id(x) for stmt in node.body for x in ast.walk(stmt)}
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets = set()
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            found = []
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[:len(base) - node.level + 1]
                    mod = ".".join(base + ([node.module] if node.module else []))
                else:
                    mod = node.module or ""
                found = [f"{mod}.{a.name}" for a in node.names] + [mod]
            elif isinstance(node, ast.Import):
                found = [a.name for a in node.names]
            for target in found:
                if not target.startswith("riskformula"):
                    continue
                while target not in modules and "." in target:
                    target = target.rpartition(".")[0]
                if target in modules and target != name:
                    targets.add(target)
                    break
        graph[name] = targets
    return graph


def _cycle(graph: dict) -> list | None:
    """One import cycle of ``graph`` (a list of modules), or None."""
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


def _stage(module: str) -> int | None:
    best = None
    for k, (_, prefixes) in enumerate(STAGES):
        for p in prefixes:
            if module == p or module.startswith(p + "."):
                if best is None or len(p) > best[1]:
                    best = (k, len(p))
    return None if best is None else best[0]


def test_no_import_cycle():
    graph = import_graph()
    assert len(graph) > 50 and "riskformula.model" in graph["riskformula.logistic"]
    cycle = _cycle(graph)
    assert cycle is None, "import cycle: " + " → ".join(cycle)


def test_no_stage_imports_a_later_one():
    bad = []
    for module, targets in import_graph().items():
        k = _stage(module)
        for t in targets:
            j = _stage(t)
            if k is not None and j is not None and j > k:
                bad.append(f"{module} ({STAGES[k][0]}) imports {t} ({STAGES[j][0]})")
    assert not bad, "\n".join(sorted(bad))


def test_the_docstring_states_the_stages():
    doc = riskformula.__doc__
    positions = [doc.find(f"{k + 1}. {name}") for k, (name, _) in enumerate(STAGES)]
    assert -1 not in positions and positions == sorted(positions)


def test_the_checker_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


@pytest.mark.parametrize("module", ["riskformula.model", "riskformula.io", "riskformula.solver.branch_and_cut"])
def test_core_modules_know_no_backend(module):
    assert not any(t.startswith("riskformula.backends.dask") for t in import_graph()[module])
