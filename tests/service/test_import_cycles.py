"""No import circles among turnscope's modules (issue 30): the stores import their records
from a leaf module (``service._records``), the LLM backend its option defaults from
``rewriters._llm_options``. Imports inside functions count too: a deferred import still
makes each module need the other. Imports under ``if TYPE_CHECKING:`` never run (they name types
for mypy) and are not counted, as the layer contract (tests/test_layers.py) does not count them."""

from __future__ import annotations

import ast
from pathlib import Path

import turnscope

ROOT = Path(turnscope.__file__).parent


def _modules() -> dict[str, Path]:
    out = {}
    for p in ROOT.rglob("*.py"):
        parts = list(p.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree`` except those under ``if TYPE_CHECKING:``."""
    out: list[ast.AST] = []
    todo = [tree]
    while todo:
        node = todo.pop()
        out.append(node)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and isinstance(child.test, ast.Name) \
                    and child.test.id == "TYPE_CHECKING":
                todo.extend(child.orelse)
                continue
            todo.append(child)
    return out


def _graph(mods: dict[str, Path]) -> dict[str, set[str]]:
    def owner(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m, p in mods.items():
        package = m if p.name == "__init__.py" else m.rpartition(".")[0]
        for node in _runtime_nodes(ast.parse(p.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join(up + ([node.module] if node.module else []))
                targets = [f"{base}.{a.name}" for a in node.names] + [base]
            for t in targets:
                o = owner(t)
                if o is not None and o != m and not (isinstance(node, ast.ImportFrom) and o == base
                                                     and f"{base}.{node.names[0].name}" in mods):
                    graph[m].add(o)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    x = stack.pop()
                    on.discard(x)
                    comp.append(x)
                    if x == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_the_checker_finds_a_circle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_circles_among_turnscope_modules() -> None:
    mods = _modules()
    graph = _graph(mods)
    assert "turnscope.service._sqlite" in graph["turnscope.service._store"]  # the checker sees deferred imports
    assert _cycles(graph) == []
