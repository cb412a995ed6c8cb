"""Print every import cycle among the modules of ``workbench`` and ``ui``; exit 1 if there is one.

Imports inside functions count (they still tie the modules together), and so do imports under
``if TYPE_CHECKING:`` (a type a module names ties it to the defining module as much as a call does). Each group of modules that import one another is
printed with one shortest cycle through each of its modules.

    python scripts/import_cycles.py
"""

from __future__ import annotations

import sys
from pathlib import Path

PACKAGES = ("workbench", "ui")


def import_graph(packages: tuple[str, ...] = PACKAGES):
    """grimp's graph of ``packages``: imports inside functions and under ``TYPE_CHECKING`` included."""
    import grimp

    root = str(Path(__file__).resolve().parent.parent)
    if root not in sys.path:
        sys.path.insert(0, root)  # this checkout's packages, not an installed copy
    return grimp.build_graph(*packages, exclude_type_checking_imports=False, cache_dir=None)


def tangles(graph) -> list[list[str]]:
    """Groups of two or more modules that all reach each other by imports (strongly connected
    components, Tarjan's algorithm, iterative), each sorted, the groups in order."""
    imports = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups = []
    for start in sorted(imports):
        if start in index:
            continue
        work = [(start, iter(imports[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            module, pending = work[-1]
            for target in pending:
                if target not in imports:
                    continue
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(imports[target])))
                    break
                if target in on_stack:
                    low[module] = min(low[module], index[target])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[module])
                if low[module] == index[module]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == module:
                            break
                    if len(group) > 1:
                        groups.append(sorted(group))
    return sorted(groups)


def cycles(graph) -> list[list[str]]:
    """For each tangle, one shortest cycle through each of its modules (the same cycle printed once)."""
    found: list[list[str]] = []
    seen: set[tuple[str, ...]] = set()
    for group in tangles(graph):
        members = set(group)
        for module in group:
            path = _shortest_way_back(graph, module, members)
            key = _rotated(path)
            if key not in seen:
                seen.add(key)
                found.append([*path, path[0]])
    return found


def _shortest_way_back(graph, start: str, members: set[str]) -> list[str]:
    """Breadth-first: the shortest chain of direct imports from ``start`` back to itself."""
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for module in frontier:
            for target in sorted(graph.find_modules_directly_imported_by(module) & members):
                if target == start:
                    path = [module]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return path[::-1]
                if target not in previous:
                    previous[target] = module
                    following.append(target)
        frontier = following
    raise AssertionError(f"{start} is in a tangle but has no way back")


def _rotated(path: list[str]) -> tuple[str, ...]:
    first = path.index(min(path))
    return tuple(path[first:] + path[:first])


def describe(graph, cycle: list[str]) -> str:
    lines = [" -> ".join(cycle)]
    for importer, imported in zip(cycle, cycle[1:]):
        details = graph.get_import_details(importer=importer, imported=imported)
        where = ", ".join(f"line {d['line_number']}" for d in details)
        lines.append(f"    {importer} imports {imported} ({where})")
    return "\n".join(lines)


def main() -> int:
    graph = import_graph()
    found = cycles(graph)
    for cycle in found:
        print(describe(graph, cycle))
    print(f"{len(found)} import cycle(s) in {', '.join(PACKAGES)}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
