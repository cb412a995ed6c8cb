"""Message boxes come only from ``ui/dialogs.py``: there a blinded annotation session holds back messages from
other work (a failed run names its model). A ``QMessageBox`` anywhere else would pass the gate by."""

import ast
from pathlib import Path

UI = Path(__file__).resolve().parents[2] / "ui"


def message_boxes_in(source: str) -> list[int]:
    return sorted(node.lineno for node in ast.walk(ast.parse(source))
                  if isinstance(node, ast.Name) and node.id == "QMessageBox"
                  or isinstance(node, ast.alias) and node.name == "QMessageBox")


def test_the_check_finds_a_message_box():
    assert message_boxes_in("from PySide6.QtWidgets import QMessageBox\nQMessageBox.warning(None, 'a', 'b')\n") == [1, 2]


def test_only_ui_dialogs_makes_message_boxes():
    found = {str(path.relative_to(UI)): lines for path in sorted(UI.rglob("*.py"))
             if path.name != "dialogs.py" or path.parent != UI
             if (lines := message_boxes_in(path.read_text(encoding="utf-8")))}
    assert found == {}
