"""Pages show what the core builds (issue 21.6): each page's choices are a Qt-free state object in the core and
every table it shows comes from a core query taking them, so no page works on frames itself. No ``ui`` module
imports pandas at run time (a frame is named in type hints only, under ``if TYPE_CHECKING:``) but the generic
widgets that show a frame the core built: a table, a table of cells, a chart view, a dialog of rows."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FRAME_WIDGETS = {"ui/widgets/frame_table.py", "ui/widgets/cells_table.py", "ui/widgets/chart_view.py",
                 "ui/widgets/rows_dialog.py"}
MODULES = [path for path in sorted((ROOT / "ui").rglob("*.py"))
           if path.relative_to(ROOT).as_posix() not in FRAME_WIDGETS]


def _runtime_imports(tree: ast.AST) -> list[str]:
    """Modules imported outside ``if TYPE_CHECKING:`` blocks."""
    found = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", "")) == "TYPE_CHECKING":
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append(node.module)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def test_no_page_imports_pandas_at_run_time():
    assert len(MODULES) > 60  # every page and dialog (the list is found, not written out)
    offenders = [f"{path.relative_to(ROOT)}: {name}" for path in MODULES
                 for name in _runtime_imports(ast.parse(path.read_text(encoding="utf-8")))
                 if name.split(".")[0] in ("pandas", "numpy")]
    assert offenders == []
