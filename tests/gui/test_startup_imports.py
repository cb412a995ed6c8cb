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
