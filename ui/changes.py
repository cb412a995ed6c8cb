"""The window's change bus: work that changed the project says which topics it changed, and the views that show
those topics reload (on screen now; off screen when next shown) instead of every page rereading everything.

One bus per window, on its ``BackgroundOps`` (``ops.changes``), so every page and tab reaches it through the
helper it already has. Topics are plain words (``workbench.work``: ``runs``, ``cloze-results``, ...)."""

from __future__ import annotations

import functools
from typing import Callable, Iterable

import shiboken6
from PySide6.QtCore import QObject, Signal


class ChangeBus(QObject):
    changed = Signal(frozenset)  # the topics that changed

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._origin: QObject | None = None

    def announce(self, topics: Iterable[str], origin: QObject | None = None) -> None:
        """Tell every listening view that ``topics`` changed; ``origin`` (the view whose work changed them, and
        what lies inside it) has reloaded already and is not told."""
        topics = frozenset(topics)
        if not topics:
            return
        self._origin = origin
        try:
            self.changed.emit(topics)
        finally:
            self._origin = None

    def listen(self, view: QObject, topics: Iterable[str], reload: Callable[[], None]) -> None:
        """Call ``reload`` (a bound method of ``view``) when any of ``topics`` changed; while ``view`` is a page
        off screen, mark it due instead (``refresh_due``: it reloads when shown). Dropped with the view."""
        self.changed.connect(functools.partial(self._heard, view, frozenset(topics), reload))

    def _heard(self, view: QObject, topics: frozenset, reload: Callable[[], None], changed: frozenset) -> None:
        if not shiboken6.isValid(view) or not (topics & changed) or getattr(view, "project", None) is None:
            return
        if self._origin is not None and _within(view, self._origin):
            return
        page = _off_screen_page(view)
        if page is not None:
            page.refresh_due = True  # read when shown (``Page.on_shown``)
            return
        reload()


def _within(view: QObject, ancestor: QObject) -> bool:
    while view is not None:
        if view is ancestor:
            return True
        view = view.parent()
    return False


def _off_screen_page(view: QObject) -> QObject | None:
    """The page ``view`` is on (or is), if the window shows another page now."""
    while view is not None:
        if getattr(view, "off_screen", False):
            return view
        view = view.parent()
    return None
