"""The main window: pages in the navigation bar, open / recent / save-as / close, the title."""

from PySide6.QtCore import QSettings

from ui.main_window import MainWindow
from workbench import parts
from workbench.project import Project


def make_window(qtbot, tmp_path):
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(settings=settings)
    qtbot.addWidget(window)
    return window


def test_every_listed_page_is_in_the_navigation(qtbot, tmp_path):
    window = make_window(qtbot, tmp_path)
    titles = [window.nav.item(i).text() for i in range(window.nav.count())]
    assert titles == [page.title for page in parts.pages()]
    assert titles[:3] == ["Library", "Models", "Name cloze"]
    for key in (page.key for page in parts.pages()):
        assert window.show_page(key) is window.current_page()
    window.shutdown()


def test_open_shows_the_file_name_and_remembers_it(qtbot, tmp_path):
    path = tmp_path / "austen-study.palimpsest"
    Project.create(path).close()
    window = make_window(qtbot, tmp_path)
    assert window.windowTitle() == "Palimpsest"
    assert window.open_project(path)
    assert "austen-study.palimpsest" in window.windowTitle()
    assert window.recent_projects()[0] == str(path)
    assert [a.text() for a in window.recent_menu.actions()] == ["austen-study.palimpsest"]
    window.close_project()
    assert window.project is None and window.windowTitle() == "Palimpsest"
    window.shutdown()


def test_save_as_switches_to_the_copy(qtbot, tmp_path, monkeypatch):
    path = tmp_path / "a.palimpsest"
    Project.create(path).close()
    window = make_window(qtbot, tmp_path)
    window.open_project(path)
    target = tmp_path / "b.palimpsest"
    monkeypatch.setattr("ui.main_window.QFileDialog.getSaveFileName", lambda *a, **k: (str(target), ""))
    window.save_as_dialog()
    assert window.project.path == target
    assert "b.palimpsest" in window.windowTitle()
    window.shutdown()
    assert target.exists()


def _whose(path) -> str:
    with Project.open(path) as project:
        return project.get_setting("owner")


def _project_of(path, owner):
    project = Project.create(path)
    project.set_setting("owner", owner)
    project.close()


def test_save_as_onto_a_file_the_dialog_confirmed_replaces_it(qtbot, tmp_path, monkeypatch):
    path, target = tmp_path / "a.palimpsest", tmp_path / "b.palimpsest"
    _project_of(path, "Mine")
    _project_of(target, "Theirs")
    window = make_window(qtbot, tmp_path)
    window.open_project(path)
    # Qt's save dialog asks "replace?" itself before it returns an existing file
    monkeypatch.setattr("ui.main_window.QFileDialog.getSaveFileName", lambda *a, **k: (str(target), ""))
    window.save_as_dialog()
    assert window.project.path == target
    window.shutdown()
    assert _whose(target) == "Mine"


def test_save_as_asks_before_replacing_a_file_the_dialog_did_not_name(qtbot, tmp_path, monkeypatch, messages):
    """Typed without the suffix: the dialog asked about 'b', but the copy would go to the existing 'b.palimpsest'."""
    path, existing = tmp_path / "a.palimpsest", tmp_path / "b.palimpsest"
    _project_of(path, "Mine")
    _project_of(existing, "Theirs")
    window = make_window(qtbot, tmp_path)
    window.open_project(path)
    monkeypatch.setattr("ui.main_window.QFileDialog.getSaveFileName", lambda *a, **k: (str(tmp_path / "b"), ""))
    messages["answer"] = False
    window.save_as_dialog()
    assert len(messages["questions"]) == 1 and "b.palimpsest already exists" in messages["questions"][0]
    assert window.project.path == path and _whose(existing) == "Theirs"
    messages["answer"] = True
    window.save_as_dialog()
    assert window.project.path == existing
    window.shutdown()
    assert _whose(existing) == "Mine"


def test_a_bad_file_is_refused_with_a_message_and_the_window_keeps_running(qtbot, tmp_path, monkeypatch):
    junk = tmp_path / "junk.palimpsest"
    junk.write_bytes(b"not a database at all" * 50)
    messages = []
    monkeypatch.setattr("ui.dialogs.show_error", lambda parent, message, details="": messages.append(message))
    window = make_window(qtbot, tmp_path)
    assert not window.open_project(junk)
    assert messages and "not a Palimpsest project" in messages[0]
    assert window.project is None
    window.shutdown()


def test_shutdown_closes_the_project(qtbot, tmp_path):
    path = tmp_path / "a.palimpsest"
    Project.create(path).close()
    window = make_window(qtbot, tmp_path)
    window.open_project(path)
    project = window.project
    window.shutdown()
    assert project.closed


def test_without_a_project_the_window_offers_to_create_or_open_one(qtbot, tmp_path):
    path = tmp_path / "earlier.palimpsest"
    Project.create(path).close()
    window = make_window(qtbot, tmp_path)
    assert window.content.currentWidget() is window.welcome and not window.nav.isEnabled()
    assert window.welcome.recent.count() == 0
    window.open_project(path)
    assert window.content.currentWidget() is window.stack and window.nav.isEnabled()
    window.close_project()
    assert window.content.currentWidget() is window.welcome
    item = window.welcome.recent.item(0)
    assert item.data(0x0100) == str(path)  # Qt.UserRole
    window.welcome.recent.itemActivated.emit(item)
    assert window.project is not None and window.project.path == path
    window.shutdown()


def test_every_page_is_one_key_away_once_a_project_is_open(qtbot, tmp_path):
    from PySide6.QtCore import Qt

    path = tmp_path / "keys.palimpsest"
    Project.create(path).close()
    window = make_window(qtbot, tmp_path)
    window.show()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    qtbot.keyClick(window, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)
    assert window.project is None and window.content.currentWidget() is window.welcome  # nothing to go to yet
    window.open_project(path)
    qtbot.keyClick(window, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)
    assert window.current_page() is window.pages["models"]
    qtbot.keyClick(window, Qt.Key.Key_6, Qt.KeyboardModifier.ControlModifier)
    assert window.current_page() is window.pages["jobs"]
    assert [a.shortcut().toString() for a in window.go_menu.actions()][:2] == ["Ctrl+1", "Ctrl+2"]
    assert "Ctrl+1" in window.nav.item(0).toolTip()
    window.nav.setEnabled(False)  # as during a blinded annotation session
    qtbot.keyClick(window, Qt.Key.Key_1, Qt.KeyboardModifier.ControlModifier)
    assert window.current_page() is window.pages["jobs"]
    window.shutdown()


def test_a_dialog_opens_no_larger_than_the_screen(qtbot):
    from PySide6.QtWidgets import QDialog, QLabel, QVBoxLayout

    from ui.widgets.screen_fit import SCREEN_SHARE, resize_to_fit

    dialog = QDialog()
    qtbot.addWidget(dialog)
    QVBoxLayout(dialog).addWidget(QLabel("a few words"))
    room = dialog.screen().availableGeometry()
    resize_to_fit(dialog, room.width() * 3, room.height() * 3)
    assert dialog.width() <= room.width() * SCREEN_SHARE and dialog.height() <= room.height() * SCREEN_SHARE
    resize_to_fit(dialog, 300, 200)
    assert (dialog.width(), dialog.height()) == (300, 200)  # a small wish is kept as it is


def _project_with_books(path, *stems):
    from tests.fixtures.cloze_books import write_book
    from workbench.corpus.importer import import_paths

    project = Project.create(path)
    folder = path.parent / f"{path.stem}-books"
    folder.mkdir()
    import_paths(project, [write_book(folder, stem, 3, first=n) for n, stem in enumerate(stems)])
    project.close()
    return path


def test_opening_a_project_reads_only_the_page_on_screen_and_the_others_when_shown(qtbot, tmp_path):
    """Every page read a newly opened project at once: 0.6 s of a frozen window at 571 books."""
    first = _project_with_books(tmp_path / "a.palimpsest", "quay-tales", "snow-house")
    second = _project_with_books(tmp_path / "b.palimpsest", "moor-letters")
    window = make_window(qtbot, tmp_path)
    library, probes = window.pages["library"], window.pages["cloze"]
    assert window.open_project(first)
    assert window.current_page() is library and library.model.rowCount() == 2
    assert probes.project is window.project and probes.refresh_due  # given the project, not read yet
    assert probes.books.table.rowCount() == 0
    window.show_page("cloze")
    assert not probes.refresh_due and probes.books.table.rowCount() == 2

    assert window.open_project(second)  # now the Name cloze page is on screen: it reads at once, the Library later
    assert probes.books.table.rowCount() == 1 and library.refresh_due
    window.show_page("library")
    assert library.model.rowCount() == 1 and not library.refresh_due

    window.close_project()  # closing empties every page at once, shown or not
    assert probes.project is None and not probes.refresh_due and probes.books.table.rowCount() == 0
    window.shutdown()


def test_background_work_leaves_the_window_active_with_its_keyboard_focus(qtbot, tmp_path):
    """The Jobs page showed each new operation's row for a moment as a window of its own, which took the
    keyboard from the main window whenever any work started (a read, an import, a project opening)."""
    from PySide6.QtWidgets import QApplication

    window = make_window(qtbot, tmp_path)
    window.show()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    focused = QApplication.focusWidget()
    shown_windows = []
    window.ops.changed.connect(lambda: shown_windows.extend(
        w for w in QApplication.topLevelWidgets() if w.isVisible() and w is not window))
    window.ops.run(lambda state: None, label="Reading")
    qtbot.waitUntil(lambda: not window.ops.busy, timeout=5000)
    assert shown_windows == []
    assert window.isActiveWindow() and QApplication.focusWidget() is focused
    window.shutdown()


def test_a_project_is_opened_and_checked_off_the_gui_thread(qtbot, tmp_path, monkeypatch):
    """The integrity check at opening reads the whole file (a second or more for published results); the window
    keeps painting meanwhile, and an error still comes back as a message."""
    import threading

    from workbench.project import project as project_module

    path = tmp_path / "big.palimpsest"
    Project.create(path).close()
    opened_in = []
    original = project_module.Project.open.__func__

    def recording_open(cls, *args, **kwargs):
        opened_in.append(threading.get_ident())
        return original(cls, *args, **kwargs)

    monkeypatch.setattr(project_module.Project, "open", classmethod(recording_open))
    window = make_window(qtbot, tmp_path)
    assert window.open_project(path) and window.project is not None
    assert opened_in and opened_in[0] != threading.get_ident()
    assert window.project.db.execute("SELECT COUNT(*) FROM books").fetchone()[0] == 0  # the GUI thread reads it
    junk = tmp_path / "junk.palimpsest"
    junk.write_bytes(b"not a database at all" * 100)
    errors = []
    monkeypatch.setattr("ui.dialogs.show_error", lambda parent, message, details="": errors.append(message))
    assert not window.open_project(junk) and errors and "junk.palimpsest" in errors[0]
    window.shutdown()
