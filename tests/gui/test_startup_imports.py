"""Opening the window loads no heavy library it does not need yet: scipy, statsmodels, torch,
transformers, spaCy, llama.cpp and matplotlib (charts are drawn on a worker) are loaded by the work that uses
them (each adds a second or a good part of one to the start)."""

import os
import subprocess
import sys

HEAVY = ("scipy", "statsmodels", "torch", "transformers", "spacy", "llama_cpp", "matplotlib")


def test_the_main_window_opens_without_the_heavy_libraries(tmp_path):
    code = (
        "import sys\n"
        "from PySide6.QtWidgets import QApplication\n"
        "app = QApplication([])\n"
        "from ui.main_window import MainWindow\n"
        "from PySide6.QtCore import QSettings\n"
        f"window = MainWindow(settings=QSettings({str(tmp_path / 's.ini')!r}, QSettings.Format.IniFormat))\n"
        "window.show(); app.processEvents()\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                            env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_the_chart_and_statistics_libraries_load_on_a_worker_once_the_window_is_shown(tmp_path):
    """Not on the window's thread, and not by the first chart a scholar asks for: loaded in the background
    once the window is on screen (the models' libraries are not: only a model's work loads them)."""
    code = (
        "import sys, threading, time\n"
        "from PySide6.QtWidgets import QApplication\n"
        "app = QApplication([])\n"
        "from ui.main_window import MainWindow\n"
        "from PySide6.QtCore import QSettings\n"
        "import importlib, builtins\n"
        "threads = {}\n"
        "real = builtins.__import__\n"
        "def spy(name, *a, **k):\n"
        "    if name.split('.')[0] in ('scipy', 'statsmodels', 'matplotlib') and name not in threads:\n"
        "        threads[name] = threading.current_thread() is threading.main_thread()\n"
        "    return real(name, *a, **k)\n"
        "builtins.__import__ = spy\n"
        f"window = MainWindow(settings=QSettings({str(tmp_path / 's.ini')!r}, QSettings.Format.IniFormat))\n"
        "window.show()\n"
        "deadline = time.monotonic() + 90\n"
        "while time.monotonic() < deadline and not ('statsmodels' in sys.modules and not window.ops.busy):\n"
        "    app.processEvents(); time.sleep(0.01)\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))\n"
        "print(sorted(name for name, main in threads.items() if main))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180,
                            env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert result.returncode == 0, result.stderr[-2000:]
    loaded, on_window_thread = result.stdout.strip().splitlines()[-2:]
    assert loaded == "['matplotlib', 'scipy', 'statsmodels']"
    assert on_window_thread == "[]"
