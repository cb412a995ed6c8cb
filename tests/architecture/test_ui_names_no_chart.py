"""The window names no chart: a page asks the export registry which charts it shows (``charts_for``) and builds
their controls and views from their descriptions, so a chart is described once, in the core. A chart's registered
name written in ``ui/`` (a string, anywhere) would be a page choosing, drawing or describing a chart itself."""

from __future__ import annotations

import ast
from pathlib import Path

from workbench.export.registry import charts

UI = Path(__file__).resolve().parents[2] / "ui"


def chart_names_in(path: Path, names: set[str]) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names]


def test_no_module_of_the_window_names_a_registered_chart():
    names = set(charts())
    assert len(names) >= 19  # every part's charts are registered (the test would pass vacuously otherwise)
    found = {str(path.relative_to(UI.parent)): hits for path in sorted(UI.rglob("*.py"))
             if (hits := chart_names_in(path, names))}
    assert found == {}


def test_every_chart_a_page_shows_says_which_page():
    pages = {spec.page for spec in charts().values()}
    assert {"charts", "validity", "reading", "rep.results", "leakage.overlap", "leakage.frequency",
            "leakage.membership"} <= pages
