"""No import cycles in ``workbench`` or ``ui`` (``python scripts/import_cycles.py`` lists them): imports
inside functions count, and so do imports under ``if TYPE_CHECKING:`` (a type a module names ties it to the
module that defines it as much as a call does)."""

import importlib.util
import textwrap
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "import_cycles.py"


def load_script():
    spec = importlib.util.spec_from_file_location("import_cycles", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_workbench_and_ui_have_no_import_cycles():
    script = load_script()
    graph = script.import_graph()
    found = script.cycles(graph)
    assert found == [], "import cycles:\n" + "\n".join(script.describe(graph, cycle) for cycle in found)


def test_the_count_sees_imports_inside_functions_and_type_checking_ones(tmp_path, monkeypatch):
    package = tmp_path / "tangled"
    package.mkdir()
    files = {
        "__init__.py": "",
        "a.py": "from tangled import b\n",
        "b.py": "def later():\n    from tangled import a\n    return a\n",
        "c.py": "from tangled import d\n",
        "d.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from tangled import c\n",
        "e.py": "from tangled import f\n",
        "f.py": "from tangled import g\n",
        "g.py": "import tangled.e\n",
    }
    for name, text in files.items():
        (package / name).write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(tmp_path))
    script = load_script()
    graph = script.import_graph(("tangled",))
    assert script.cycles(graph) == [
        ["tangled.a", "tangled.b", "tangled.a"],
        ["tangled.c", "tangled.d", "tangled.c"],
        ["tangled.e", "tangled.f", "tangled.g", "tangled.e"],
    ]
    assert "tangled.b imports tangled.a (line 2)" in script.describe(graph, script.cycles(graph)[0])
