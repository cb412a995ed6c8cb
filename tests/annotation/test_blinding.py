"""Blinded mode: no title, author or model anywhere an annotator could look (text, tooltips, titles,
accessible names, placeholders, item data of views), and no project file name in the window's chrome
(title, every menu and submenu entry, status bar) while a blinded session is on screen."""

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QApplication, QComboBox, QLabel, QTabWidget, QWidget

from tests.fixtures.annotation_data import (
    SECRET_AUTHOR,
    SECRET_MODEL,
    SECRET_TITLE,
    add_book,
    invented_novel,
    write_csv,
)
from tests.fixtures.annotation_gui import open_window, start
from workbench.annotation.annotation_import import import_annotations
from workbench.annotation.items import NewItem, add_book_passages, add_items, list_items
from workbench.annotation.tasks import create_task, set_blinded
from workbench.project import Project

SECRETS = (SECRET_TITLE, SECRET_AUTHOR, SECRET_MODEL, "memorized")
ROLES = (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.StatusTipRole,
         Qt.ItemDataRole.WhatsThisRole, Qt.ItemDataRole.UserRole, Qt.ItemDataRole.AccessibleTextRole,
         Qt.ItemDataRole.AccessibleDescriptionRole)


def texts_of(widget: QWidget) -> list[str]:
    found = [widget.windowTitle(), widget.toolTip(), widget.statusTip(), widget.whatsThis(),
             widget.accessibleName(), widget.accessibleDescription()]
    for name in ("text", "placeholderText", "toPlainText", "toHtml", "currentText", "title", "documentTitle"):
        method = getattr(widget, name, None)
        if callable(method):
            try:
                value = method()
            except TypeError:
                continue
            if isinstance(value, str):
                found.append(value)
    if isinstance(widget, QComboBox):
        for i in range(widget.count()):
            found += [str(widget.itemData(i, role)) for role in ROLES]
    if isinstance(widget, QTabWidget):
        for i in range(widget.count()):
            found += [widget.tabText(i), widget.tabToolTip(i), widget.tabWhatsThis(i)]
    if isinstance(widget, QAbstractItemView) and widget.model() is not None:
        found += model_texts(widget.model())
    for action in widget.actions():
        found += [action.text(), action.toolTip(), action.statusTip(), action.whatsThis()]
    return found


def model_texts(model, parent=None) -> list[str]:
    from PySide6.QtCore import QAbstractListModel, QAbstractTableModel, QModelIndex

    parent = QModelIndex() if parent is None else parent
    # list and table models keep columnCount / hasChildren private: they have no children
    flat = isinstance(model, (QAbstractListModel, QAbstractTableModel))
    columns = 1 if isinstance(model, QAbstractListModel) else model.columnCount(parent)
    found = []
    for r in range(model.rowCount(parent)):
        for c in range(columns):
            index = model.index(r, c, parent)
            found += [str(model.data(index, role)) for role in ROLES]
            if not flat and model.hasChildren(index):
                found += model_texts(model, index)
    for c in range(columns):
        found += [str(model.headerData(c, Qt.Orientation.Horizontal, role)) for role in ROLES]
    return found


def _on_page(widget: QWidget, pages: list[QWidget]) -> bool:
    """Whether ``widget`` belongs to one of ``pages``, also as a popup (a combo box's list is a window of
    its own, so ``isAncestorOf`` does not see it)."""
    while widget is not None:
        if any(widget is page for page in pages):
            return True
        widget = widget.parentWidget()
    return False


def visible_to_annotator(window) -> list[QWidget]:
    """The window and everything in it except the other pages (locked during a blinded session, popups
    included), plus any other top-level window (the codebook)."""
    others = [p for p in window.pages.values() if p.key != "annotate"]
    widgets = [window] + [w for w in window.findChildren(QWidget) if not _on_page(w, others)]
    widgets += [w for w in QApplication.topLevelWidgets() if w.isVisible() and w is not window]
    return widgets


def chrome_texts(window) -> list[str]:
    """What the window around the pages shows: its title, every entry of the menu bar and its submenus
    (hidden ones too: text, tooltip, status tip), and the status bar."""
    found = [window.windowTitle(), window.statusBar().currentMessage()]
    found += [label.text() for label in window.statusBar().findChildren(QLabel)]

    def walk(actions):
        for action in actions:
            found.extend([action.text(), action.toolTip(), action.statusTip(), action.whatsThis(), action.iconText()])
            if action.menu() is not None:
                walk(action.menu().actions())

    walk(window.menuBar().actions())
    return found


def chrome_leaks(window) -> list[str]:
    return [text for text in chrome_texts(window)
            if any(secret.lower() in text.lower() for secret in (*SECRETS, "famous-vs-obscure"))]


def leaks(window) -> list[str]:
    found = []
    for widget in visible_to_annotator(window):
        for text in texts_of(widget):
            for secret in SECRETS:
                if secret.lower() in text.lower():
                    found.append(f"{type(widget).__name__} {widget.objectName()!r}: {secret}")
    return found


@pytest.fixture
def blinded_study(tmp_path):
    path = tmp_path / "famous-vs-obscure.palimpsest"
    project = Project.create(path)
    book = add_book(project, SECRET_TITLE, SECRET_AUTHOR, invented_novel(3), {"condition": "memorized"})
    nt = create_task(project, "nt", "narrative-time", blinded=True)
    add_book_passages(project, nt, [book], per_book=3)
    meta = {"title": SECRET_TITLE, "author": SECRET_AUTHOR, "model": SECRET_MODEL, "tags": {"condition": "memorized"}}
    sv = create_task(project, "sv", "summary-validity", blinded=True)
    add_items(project, sv, [NewItem(text=f"A scene {k}.", context_before="Before.", context_after="After.",
                                    choices={"true": "It rains.", "distorted": "It snows."}, meta=meta, book_id=book)
                            for k in range(3)])
    lab = create_task(project, "lab", "label", labels=["woman", "man"], blinded=True)
    add_items(project, lab, [NewItem(text=f"Response {k}.", meta=meta, gold="woman") for k in range(3)])
    for task in (nt, sv, lab):
        keys = [i.item_key for i in list_items(project, task)]
        value = {"narrative-time": ["5 min", "2 hours"], "summary-validity": ["true", "distorted"],
                 "label": ["woman", "man"]}[task.kind]
        rows = [[who, k, value[(n + j) % 2]] for j, who in enumerate(("Xavier", "Yolanda")) for n, k in enumerate(keys)]
        import_annotations(project, task, write_csv(tmp_path / f"{task.name}.csv", ["annotator", "item_id", "value"], rows))
    project.close()
    return path


@pytest.fixture(autouse=True)
def no_dialogs(monkeypatch):
    monkeypatch.setattr("ui.dialogs.show_error", lambda parent, message, details="": pytest.fail(message))
    monkeypatch.setattr("ui.dialogs.ask", lambda parent, question: True)


def _exercise(qtbot, window, task):
    page = start(qtbot, window, task, "Zoe")
    view = page.session_view
    view.trigger("flag")
    qtbot.keyClicks(view.flag_field, "check this one")
    view.trigger("answer")
    view.trigger("codebook")
    assert page.codebook.isVisible()
    if task == "nt":
        assert not window.nav.isEnabled()  # the library (titles, authors) is out of reach
    return page


@pytest.mark.parametrize("task", ["nt", "sv", "lab"])
def test_nothing_reveals_the_book_author_or_model_while_blinded(qtbot, tmp_path, blinded_study, task):
    window = open_window(qtbot, blinded_study, tmp_path)
    page = _exercise(qtbot, window, task)
    assert "famous-vs-obscure" not in window.windowTitle()
    assert leaks(window) == []
    assert chrome_leaks(window) == []
    assert not window.recent_menu.menuAction().isVisible() and not window.action_open.isEnabled()
    results = page.tabs.indexOf(page.results)
    assert not page.tabs.isTabEnabled(results)  # the others' answers stay closed while annotating
    assert "Leave the session" in page.tabs.tabToolTip(results)
    qtbot.waitUntil(lambda: not window.ops.busy, timeout=30_000)
    page.leave_session()  # the session is over: the recent files come back (so the walk above can see them)
    assert page.tabs.isTabEnabled(results)
    page.tabs.setCurrentWidget(page.results)
    qtbot.waitUntil(lambda: page.results.agreement.rowCount() > 0, timeout=20_000)
    shown = [text for widget in (page.results, *page.results.findChildren(QWidget)) for text in texts_of(widget)]
    assert len(shown) > 20 and [t for t in shown if any(s.lower() in t.lower() for s in SECRETS)] == []
    assert any("famous-vs-obscure" in text for text in chrome_leaks(window))
    assert window.recent_menu.menuAction().isVisible() and window.action_open.isEnabled()
    window.close()


def test_the_same_walk_finds_them_when_the_task_is_not_blinded(qtbot, tmp_path, blinded_study):
    with Project.open(blinded_study) as project:
        set_blinded(project, "sv", False)
    window = open_window(qtbot, blinded_study, tmp_path)
    _exercise(qtbot, window, "sv")
    found = " ".join(leaks(window))
    assert SECRET_TITLE in found and SECRET_AUTHOR in found and SECRET_MODEL in found
    assert "famous-vs-obscure" in window.windowTitle()
    assert [a.text() for a in window.recent_menu.actions()] == ["famous-vs-obscure.palimpsest"]
    qtbot.waitUntil(lambda: not window.ops.busy, timeout=30_000)
    window.close()
