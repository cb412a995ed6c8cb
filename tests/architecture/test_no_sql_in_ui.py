"""The GUI holds no SQL: no SQL statement in its text, no call that runs one, no reach into the
database (``project.db``, ``sqlite3``, ``sqlite_utils``). What it shows comes from core functions."""

import ast
import re
from pathlib import Path

UI = Path(__file__).resolve().parents[2] / "ui"
# upper-case keywords in the shape of a statement, so that "Select a book from the list" is not one
SQL = re.compile(
    r"\bSELECT\b[\s\S]*\bFROM\b|\bINSERT\s+(?:OR\s+[A-Z]+\s+)?INTO\b|\bUPDATE\s+\w+\s+SET\b|\bDELETE\s+FROM\b"
    r"|\b(?:CREATE|DROP|ALTER)\s+(?:TABLE|INDEX|VIEW|TRIGGER)\b|\bPRAGMA\s+\w+"
)
RUNS_SQL = {"execute", "executemany", "executescript", "db"}
DATABASE_MODULES = {"sqlite3", "sqlite_utils"}


def sql_in(source: str) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL.search(node.value):
            found.append((node.lineno, f"SQL text {node.value[:60]!r}"))
        elif isinstance(node, ast.Attribute) and node.attr in RUNS_SQL:
            found.append((node.lineno, f"database access .{node.attr}"))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, f"import {a.name}") for a in node.names if a.name.split(".")[0] in DATABASE_MODULES]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in DATABASE_MODULES:
            found.append((node.lineno, f"import from {node.module}"))
    return sorted(found)


def test_the_check_finds_sql_and_database_access_but_not_words_in_sentences():
    source = (
        "import sqlite3\n"
        "label = 'Select a book from the list, then update the settings.'\n"
        "rows = project.db.execute(\n"
        "    'SELECT COUNT(*) FROM books'\n"
        "    ' WHERE id = ?', [1])\n"
        "sql = f'DELETE FROM runs WHERE id = {run_id}'\n"
    )
    assert [line for line, _ in sql_in(source)] == [1, 3, 3, 4, 6]


def test_no_module_under_ui_contains_sql():
    found = [f"{path.relative_to(UI.parent)}:{line}: {what}"
             for path in sorted(UI.rglob("*.py")) for line, what in sql_in(path.read_text(encoding="utf-8"))]
    assert found == [], "SQL in the GUI (move it into a core function):\n" + "\n".join(found)
