"""The core must stay usable without Qt: importing any part of it must not load PySide6."""

import subprocess
import sys


def test_importing_workbench_leaves_qt_unimported():
    code = (
        "import sys, workbench\n"
        "from workbench import Project\n"
        "assert 'PySide6' not in sys.modules\n"
        "import pkgutil, importlib\n"
        "for m in pkgutil.walk_packages(workbench.__path__, 'workbench.'):\n"
        "    if m.name != 'workbench.__main__':\n"
        "        importlib.import_module(m.name)\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'ui')]\n"
        "print(bad); sys.exit(1 if bad else 0)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
