"""PySide6 6.12.0 drops a reference to ``None`` on every call of a method that returns nothing. On Python
3.11, where ``None`` has a real reference count, the app then aborts ("deallocating None") after some
minutes of ordinary use -- every table refill costs thousands of references. The install pins a sound
version; this test fails if a broken binding is installed again."""

import gc
import sys

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QTableWidgetItem

CALLS = 2000


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="None is immortal from Python 3.12 on")
def test_calling_qt_methods_that_return_nothing_keeps_none_alive(qtbot):
    label, item = QLabel(), QTableWidgetItem("x")
    qtbot.addWidget(label)
    gc.collect()
    before = sys.getrefcount(None)
    for i in range(CALLS):
        label.setText("a")
        item.setData(Qt.ItemDataRole.UserRole, i)
    gc.collect()
    lost = before - sys.getrefcount(None)
    assert lost < CALLS // 10, f"{lost} references to None were lost in {2 * CALLS} calls into Qt"
