"""The ``runs`` table is the run store's (``workbench/runs/``): no other module of the core or the GUI holds SQL
that reads or writes it, or reaches it through sqlite-utils (``db["runs"]``). Probes and services ask the store
for runs by kind, model and typed config. (The schema makes the table; that is not reading or writing it.)"""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STORE = ROOT / "workbench" / "runs"
# the table where SQL reads or writes one: after FROM, JOIN, UPDATE, INTO, or as "runs r" (an alias)
RUNS_SQL = re.compile(r"\b(?:FROM|JOIN|UPDATE|INTO)\s+\[?runs\]?(?![\w(])|\bruns\s+(?:AS\s+)?r\b", re.IGNORECASE)


def sql_on_runs(source: str) -> list[tuple[int, str]]:
    """(line, what) for each string that holds SQL on ``runs``, and each ``db["runs"]``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and RUNS_SQL.search(node.value):
            found.append((node.lineno, f"SQL on runs {node.value.strip()[:60]!r}"))
        elif (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value == "runs"
              and (getattr(node.value, "attr", None) or getattr(node.value, "id", None)) == "db"):
            found.append((node.lineno, "table access db['runs']"))
    return sorted(found)


def test_the_check_finds_sql_on_runs_but_not_words_or_other_tables():
    source = (
        "label = 'The runs of this model, newest first.'\n"
        "rows = project.db.execute(\n"
        "    'SELECT id FROM runs'\n"
        "    ' WHERE kind = ?', [kind])\n"
        "sql = f'DELETE FROM runs WHERE id = {run_id}'\n"
        "joined = 'SELECT 1 FROM responses x JOIN runs r ON r.id = x.run_id'\n"
        "count = project.db['runs'].count\n"
        "other = 'SELECT run_id FROM responses'\n"
        "note = 'runs of the model from before'\n"
        "record = {'runs': []}['runs']\n"
        "schema = 'CREATE TABLE runs (id INTEGER PRIMARY KEY)'\n"
    )
    assert [line for line, _ in sql_on_runs(source)] == [3, 5, 6, 7]


def test_no_module_outside_the_run_store_has_sql_on_runs():
    modules = sorted([*(ROOT / "workbench").rglob("*.py"), *(ROOT / "ui").rglob("*.py")])
    found = [f"{path.relative_to(ROOT)}:{line}: {what}" for path in modules if STORE not in path.parents
             for line, what in sql_on_runs(path.read_text(encoding="utf-8"))]
    assert found == [], "SQL on runs outside workbench/runs (ask the run store instead):\n" + "\n".join(found)


def test_the_store_is_where_the_sql_on_runs_is():
    found = [line for path in STORE.rglob("*.py") for line, _ in sql_on_runs(path.read_text(encoding="utf-8"))]
    assert found, "the check would pass on anything if it found no SQL in the store itself"
