"""Import circles inside a package: groups of modules that import each other.

Counts every import a module makes, at module level or inside a function, except those under
`if TYPE_CHECKING:` (they never run). `from a.b import c` points at module a/b/c.py when there
is one, else at a/b (its __init__). A circle is a strongly connected group of two or more
modules. Exit code 0; the count is the first line.

    python scripts/import_cycles.py [PACKAGE_DIR]      # default: nanohermes
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _under_type_checking(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return True
    return False


def imports_of(path: Path, known: set[str]) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found: set[str] = set()
    for node in ast.walk(tree):
        if _under_type_checking(node, parents):
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                found.add(submodule if submodule in known else node.module)
    return {name for name in found if name in known}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of two or more nodes."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    sys.setrecursionlimit(10_000)
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def main() -> None:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "nanohermes").resolve()
    files = {module_name(path, root): path for path in sorted(root.rglob("*.py"))}
    known = set(files)
    graph = {name: imports_of(path, known) - {name} for name, path in files.items()}
    found = circles(graph)
    print(f"{len(found)} import circle(s) in {root.name}/ ({len(files)} modules)")
    for group in found:
        members = set(group)
        print(f"- {', '.join(group)}")
        for name in group:
            for target in sorted(graph[name] & members):
                print(f"    {name} -> {target}")


if __name__ == "__main__":
    main()
