"""The Bias (REP) page: sets, runs, classification, results and entity prompts, each on its own tab.

Every action calls ``workbench.probes.rep``; long work (runs, the judge, counting) goes through the
window's background helper with progress and Cancel. Each tab is a view of the project of its own; the
page passes the project on and tells the tabs that show it when another tab changed what they show.
"""

from __future__ import annotations

from PySide6.QtWidgets import QTabWidget, QVBoxLayout

from ui.rep.classify_tab import ClassifyTab
from ui.rep.entities_tab import EntitiesTab
from ui.rep.results_tab import ResultsTab
from ui.rep.runs_tab import RunsTab
from ui.rep.sets_tab import SetsTab
from ui.widgets.page import Page


class RepPage(Page):
    def __init__(self, ops, parent=None):
        super().__init__(ops, parent)
        self.tabs = QTabWidget()
        self.tabs.setObjectName("rep-tabs")
        self.sets_tab = SetsTab(ops)
        self.runs_tab = RunsTab(ops)
        self.classify_tab = ClassifyTab(ops)
        self.results_tab = ResultsTab(ops)
        self.entities_tab = EntitiesTab(ops)
        self.tabs.addTab(self.results_tab, "Results")
        self.tabs.addTab(self.runs_tab, "Runs")
        self.tabs.addTab(self.classify_tab, "Classify")
        self.tabs.addTab(self.entities_tab, "Entities")
        self.tabs.addTab(self.sets_tab, "Sets")
        self.sets_tab.sets_changed.connect(self.runs_tab.refresh)
        self.sets_tab.sets_changed.connect(self.entities_tab.refresh)
        self.runs_tab.completions_added.connect(self.results_changed)
        self.classify_tab.judged.connect(self.results_changed)
        self.entities_tab.completions_added.connect(self.runs_tab.refresh)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.tabs)

    def refresh(self) -> None:
        for tab in (self.sets_tab, self.runs_tab, self.classify_tab, self.results_tab, self.entities_tab):
            tab.set_project(self.project)

    def on_shown(self) -> None:
        came = self.refresh_due
        if not self.show_due():
            return
        if came:
            self.refresh()
        else:
            self.runs_tab.refresh()
            self.classify_tab.refresh()
            self.entities_tab.refresh()

    def results_changed(self, judge: str = "") -> None:
        """New completions or judge answers: recount (showing that judge's labels, if one just finished)."""
        self.runs_tab.refresh()
        self.results_tab.refresh()
        if judge:
            self.results_tab.choose_classifier(f"judge:{judge}")
