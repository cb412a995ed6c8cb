"""The Name cloze pages show what the core builds (issue 21.6): no pandas at run time in ``ui/cloze`` or in
``ui/wording.py``; a frame is only named in their type hints (``if TYPE_CHECKING:``)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODULES = sorted((ROOT / "ui" / "cloze").glob("*.py")) + [ROOT / "ui" / "wording.py"]


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


def test_the_cloze_pages_import_no_pandas_at_run_time():
    offenders = [f"{path.relative_to(ROOT)}: {name}" for path in MODULES
                 for name in _runtime_imports(ast.parse(path.read_text(encoding="utf-8")))
                 if name.split(".")[0] in ("pandas", "numpy")]
    assert offenders == []
