"""Blinded mode: no title, author or model anywhere an annotator could look (text, tooltips, titles,
accessible names, placeholders, item data of views), and no project file name in the window's chrome
(title, every menu and submenu entry, status bar) while a blinded session is on screen. Item ids from a
file (which often name the model and condition) never show; messages from other work wait until the
session ends."""

import threading

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
from workbench.annotation.item_import import import_items
from workbench.annotation.items import NewItem, add_book_passages, add_items, list_items
from workbench.annotation.tasks import create_task, set_blinded
from workbench.errors import UserError
from workbench.project import Project

SECRETS = (SECRET_TITLE, SECRET_AUTHOR, SECRET_MODEL, "memorized")
# ids of an imported file, as colleagues write them: model and condition in every id
IMPORTED_IDS = [f"{SECRET_MODEL}_memorized_{k:03d}" for k in range(4)]
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


def strip_ids(text: str) -> str:
    for key in IMPORTED_IDS:
        text = text.replace(key, "")
    return text


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
    imp = create_task(project, "imp", "label", labels=["woman", "man"], blinded=True)
    import_items(project, imp, write_csv(tmp_path / "imp-items.csv", ["item_id", "text", "model", "condition"],
                                         [[key, f"Answer {k}.", SECRET_MODEL, "memorized"]
                                          for k, key in enumerate(IMPORTED_IDS)]))
    for task in (nt, sv, lab, imp):
        keys = [i.item_key for i in list_items(project, task)]
        value = {"narrative-time": ["5 min", "2 hours"], "summary-validity": ["true", "distorted"],
                 "label": ["woman", "man"]}[task.kind]
        rows = [[who, k, value[(n + j) % 2]] for j, who in enumerate(("Xavier", "Yolanda")) for n, k in enumerate(keys)]
        import_annotations(project, task, write_csv(tmp_path / f"{task.name}.csv", ["annotator", "item_id", "value"], rows))
    project.close()
    return path


@pytest.fixture
def boxes(monkeypatch):
    """What reaches the screen as a message box (collected, not shown); every question is answered yes."""
    shown: list[str] = []
    monkeypatch.setattr("ui.dialogs.message_box", lambda parent, message: shown.append(message.text))
    monkeypatch.setattr("ui.dialogs.question_box", lambda parent, question: shown.append(question) or True)
    return shown


@pytest.fixture(autouse=True)
def questions_answered_yes(request, monkeypatch):
    """Questions are answered yes; any message box fails the test (``tests/fixtures/dialogs.py``)."""
    if "boxes" not in request.fixturenames:
        monkeypatch.setattr("ui.dialogs.question_box", lambda parent, question: True)


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


@pytest.mark.parametrize("task", ["nt", "sv", "lab", "imp"])
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
    # outside a session the results name items by their ids (the research team's handle on the exports), but
    # no book, author or model of the items' metadata
    shown = [strip_ids(text) for text in shown]
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


def test_imported_item_ids_never_show_only_the_items_place_in_the_annotators_order(qtbot, tmp_path, blinded_study):
    window = open_window(qtbot, blinded_study, tmp_path)
    page = start(qtbot, window, "imp", "Zoe")
    view = page.session_view
    for n in range(1, len(IMPORTED_IDS) + 1):
        assert view.heading.text() == f"Item {n} of {len(IMPORTED_IDS)}"
        assert leaks(window) == [] and chrome_leaks(window) == []
        if n == 2:
            view.trigger("flag")
            qtbot.keyClicks(view.flag_field, "unclear wording")
            view.trigger("answer")
            assert leaks(window) == []
        view.body.choose(1)
        view.trigger("answer")
    assert page.screens.currentWidget() is page.finish_screen and leaks(window) == []
    qtbot.waitUntil(lambda: not window.ops.busy, timeout=30_000)
    window.close()


def _fail_on_the_probes_page_once_released(window, release: threading.Event):
    """A run on the Name cloze page that fails, naming its model, once ``release`` is set."""
    def work(state):
        release.wait(30)
        raise UserError(f"Model {SECRET_MODEL} did not answer: the server refused the connection.")

    probes = window.pages["cloze"]
    return probes.start_work(work, f"Running the name cloze with {SECRET_MODEL}", on_done=probes.show_summary)


def test_a_failing_run_elsewhere_waits_until_the_blinded_session_ends(qtbot, tmp_path, blinded_study, boxes):
    window = open_window(qtbot, blinded_study, tmp_path)
    release = threading.Event()
    operation = _fail_on_the_probes_page_once_released(window, release)
    page = start(qtbot, window, "imp", "Zoe")
    release.set()
    qtbot.waitUntil(lambda: not operation.running, timeout=30_000)
    assert boxes == []  # the failure (reported before the end) waits: nothing over the session
    assert page.held_note.isVisible() and "waiting" in page.held_note.text()
    assert leaks(window) == [] and chrome_leaks(window) == []
    page.session_view.trigger("escape")  # pausing the session shows what waited
    qtbot.waitUntil(lambda: len(boxes) == 1)
    assert SECRET_MODEL in boxes[0] and not page.held_note.isVisible()
    window.close()


def test_while_blinded_questions_from_other_work_are_answered_no_and_the_windows_own_are_asked(
        qtbot, tmp_path, blinded_study, boxes, monkeypatch):
    from ui import dialogs

    window = open_window(qtbot, blinded_study, tmp_path)
    page = start(qtbot, window, "lab", "Zoe")
    # a paid run's cost estimate finishing on the Name cloze page asks before spending: not now, and nothing is spent
    assert dialogs.ask(window.pages["cloze"], f"This run calls {SECRET_MODEL}, a paid API. Start the run?") is False
    dialogs.show_info(None, f"Finished the run with {SECRET_MODEL}.")  # from work that has no window at all
    assert boxes == [] and "2 messages" in page.held_note.text() and leaks(window) == []
    release = threading.Event()
    operation = _fail_on_the_probes_page_once_released(window, release)
    asked = []  # the window's own question (quit while work runs) names nothing and needs an answer now
    monkeypatch.setattr("ui.dialogs.question_box", lambda parent, question: asked.append(question) or False)
    window.close()
    assert len(asked) == 1 and "still running" in asked[0]
    assert window.isVisible() and page.session is not None and boxes == []
    release.set()
    qtbot.waitUntil(lambda: not operation.running, timeout=30_000)
    assert "3 messages" in page.held_note.text() and boxes == []
    page.leave_session()
    qtbot.waitUntil(lambda: len(boxes) == 3)
    assert "answered No" in boxes[0] and all(SECRET_MODEL in text for text in boxes)
    qtbot.waitUntil(lambda: not window.ops.busy, timeout=30_000)
    window.close()


def test_a_window_of_another_page_hides_during_a_blinded_session_and_comes_back(qtbot, tmp_path, blinded_study, boxes):
    import pandas as pd

    window = open_window(qtbot, blinded_study, tmp_path)
    charts = window.pages["charts"]
    passages = pd.DataFrame({"model": [SECRET_MODEL], "passage": ["At dawn [MASK] crossed the yard."],
                             "gold": ["Tobias"], "raw": ["Tobias"], "parsed": ["Tobias"], "correct": [True],
                             "status": ["ok"], "error": [None]})
    from workbench.probes.cloze.views import PassagesChoices, answer_rows

    shown = (SECRET_TITLE, answer_rows(passages, "all"), PassagesChoices(book_id=1))
    charts._show_passages(shown)
    before = charts.passages_dialog
    assert before.isVisible()
    page = start(qtbot, window, "nt", "Zoe")
    assert not before.isVisible() and leaks(window) == []
    charts._show_passages(shown)  # a passages list arriving meanwhile waits too
    assert not charts.passages_dialog.isVisible() and leaks(window) == []
    page.leave_session()
    qtbot.waitUntil(lambda: charts.passages_dialog.isVisible())
    assert boxes == []
    qtbot.waitUntil(lambda: not window.ops.busy, timeout=30_000)
    window.close()
