"""The Leakage page: where a model could have seen a text, and how strongly it knows it.

One tab per analysis, each with its own background work (progress and Cancel) and results table; the
analyses themselves are calls into ``workbench.probes.leakage``."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QTabWidget, QVBoxLayout

from ui.leakage.corpora_tab import CorporaTab
from ui.leakage.decop_tab import DecopTab
from ui.leakage.frequency_tab import FrequencyTab
from ui.leakage.membership_tab import MembershipTab
from ui.leakage.overlap_tab import OverlapTab
from ui.leakage.surprisal_tab import SurprisalTab
from ui.widgets.page import Page

NO_PROJECT = "Open or create a project (File menu) to look for its books in reference corpora and in models."


class LeakagePage(Page):
    key = "leakage"
    title = "Leakage"

    def __init__(self, ops, parent=None):
        super().__init__(ops, parent)
        self.corpora = CorporaTab(ops)
        self.overlap = OverlapTab(ops)
        self.frequency = FrequencyTab(ops)
        self.membership = MembershipTab(ops)
        self.surprisal = SurprisalTab(ops)
        self.decop = DecopTab(ops)
        self.tabs = QTabWidget()
        for tab, title in ((self.corpora, "Corpora"), (self.overlap, "Overlap"), (self.frequency, "Book frequency"),
                           (self.membership, "Membership"), (self.surprisal, "Surprisal"), (self.decop, "DE-COP")):
            self.tabs.addTab(tab, title)
        self.tabs.currentChanged.connect(self._tab_shown)
        self.hint = QLabel(NO_PROJECT)
        self.hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.hint.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(self.hint)
        layout.addWidget(self.tabs, 1)
        self.refresh()

    def set_project(self, project) -> None:
        for index in range(self.tabs.count()):
            self.tabs.widget(index).keep_project(project)
        super().set_project(project)

    def refresh(self) -> None:
        self.hint.setVisible(self.project is None)
        self.tabs.setEnabled(self.project is not None)
        self._show_tab(always=True)

    def on_shown(self) -> None:
        if self.refresh_due:
            self.refresh_due = False
            self.refresh()
        else:
            self._show_tab()

    def _tab_shown(self, _index: int) -> None:
        self._show_tab()

    def _show_tab(self, always: bool = False) -> None:
        """The tab on show reads the project the first time, and again only when something was written to it
        since (a tab of 57,000 passages shown again costs nothing when nothing changed)."""
        tab = self.tabs.currentWidget()
        if tab.read_due() or always:
            tab.refresh()
