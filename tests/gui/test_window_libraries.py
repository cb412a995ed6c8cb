"""On Linux, Qt ends the program with a message about "platform plugins" when a library of its X11 plugin
is missing; Palimpsest names the packages to install instead."""

import pytest

from ui import app as app_module
from workbench.errors import UserError


@pytest.fixture
def linux_x11(monkeypatch):
    monkeypatch.setattr(app_module.sys, "platform", "linux")
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)


def test_a_missing_x11_library_is_named_with_the_command_that_installs_it(linux_x11, monkeypatch):
    import ctypes.util

    real = ctypes.util.find_library
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: None if name == "xcb-cursor" else real(name) or name)
    with pytest.raises(UserError) as refused:
        app_module.check_window_libraries()
    assert "libxcb-cursor0" in str(refused.value) and "sudo apt install libxcb-cursor0" in str(refused.value)


def test_nothing_is_said_when_the_libraries_are_there_or_no_x11_window_is_opened(linux_x11, monkeypatch):
    import ctypes.util

    monkeypatch.setattr(ctypes.util, "find_library", lambda name: f"lib{name}.so")
    app_module.check_window_libraries()
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: None)
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")  # screenshots and tests draw no window
    app_module.check_window_libraries()
