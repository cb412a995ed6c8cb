"""What a page or tab with one operation at a time does around it: starting hides the last summary; a failure
is said in the summary and in an error box; a cancel says so in the summary; at the end the view reloads.

A view that mixes this in has ``work`` (its ``OperationSlot``), ``summary`` (a ``SummaryBox``), ``project``,
``refresh`` and ``show_error`` (``ui.widgets.page.ProjectView``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from ui.background import Operation


class OneOperation:
    def show_summary(self, text: str) -> None:
        self.summary.show_text(text)

    def start_work(self, work: Callable[[Any], Any], label: str, on_done: Callable[[Any], None],
                   **callbacks: Any) -> "Operation":
        """Start ``work`` in the slot (any earlier operation of the view is cancelled); ``callbacks`` are the
        slot's others (``on_progress``, ``on_partial``)."""
        self.summary.hide()
        return self.work.start(work, label=label, project=self.project, on_done=on_done, on_error=self.work_failed,
                               on_cancelled=self.show_summary, on_end=self.work_ended, **callbacks)

    def work_failed(self, message: str, details: str) -> None:
        self.show_summary(message)
        self.show_error(message, details)

    def work_ended(self) -> None:
        if self.project is not None:
            self.refresh()
