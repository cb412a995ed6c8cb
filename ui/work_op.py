"""Planned model work from the desktop app, the one way: ``WorkOp(view, work).run()``.

In the manner of Anki's ``CollectionOp``: a view plans a ``workbench.work.Work`` (or hands a function that
plans it: a plan the core refuses is said in an error box) and ``WorkOp`` does the rest, on the view's own
``OperationSlot`` (``view.work``, ``ui.background``: its progress row, throttled progress, Cancel):

1. refuse what cannot start (an API key not set) before any question;
2. for a paid API, estimate the cost off the GUI thread and ask, in one wording (``ask_before_paying``);
   No starts nothing and says so;
3. run the work off the GUI thread (its progress and partial results reach the view's callbacks);
4. say what happened (``work.outcome_words``) in the view's summary box, or a message box;
5. announce ``work.changes`` on the window's change bus (``ops.changes``), so that other views showing those
   topics reload; the view itself reloads at the end (``work_ended`` or ``refresh``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QWidget

from ui import dialogs
from workbench.errors import UserError

if TYPE_CHECKING:
    from ui.background import Operation
    from workbench.work import Estimate, Work, WorkOutcome


def ask_before_paying(parent: QWidget | None, work: "Work", estimate: "Estimate") -> bool:
    """The one question before paid work: what it is, what each paid model costs at most, what is not paid
    for again; Yes to go ahead."""
    return dialogs.ask(parent, work.cost_question(estimate))


class WorkOp(QObject):
    """One planned work started from ``view`` (a ``ProjectView`` with an ``OperationSlot`` called ``work``; one
    with a summary box, ``ui.widgets.one_operation.OneOperation``, shows the outcome there)."""

    def __init__(self, view: QWidget, work: "Work | Callable[[], Work]", slot: Any = None):
        super().__init__(view)  # a child of the view: nothing reaches a view that is gone
        self.view = view
        #: the view's operation slot (``view.work`` unless given; none: the work runs beside others)
        self.slot = slot if slot is not None else getattr(view, "work", None)
        self._plan = work
        self.work: "Work | None" = None
        self.outcome: "WorkOutcome | None" = None
        self._on_success: Callable[[Any], None] | None = None
        self._on_progress: Callable[[Any], None] | None = None
        self._on_partial: Callable[[Any], None] | None = None
        self._on_declined: Callable[[], None] | None = None

    # ------------------------------------------------------------------ what the view wants to hear
    def success(self, callback: Callable[["WorkOutcome"], None]) -> "WorkOp":
        """``callback(outcome)`` once the work ended (after its words were shown)."""
        self._on_success = callback
        return self

    def progress(self, callback: Callable[[Any], None]) -> "WorkOp":
        self._on_progress = callback
        return self

    def partial(self, callback: Callable[[Any], None]) -> "WorkOp":
        self._on_partial = callback
        return self

    def declined(self, callback: Callable[[], None]) -> "WorkOp":
        """``callback()`` when the cost question was answered No."""
        self._on_declined = callback
        return self

    # ------------------------------------------------------------------ running
    def run(self) -> "Operation | None":
        """Plan, check, ask where it costs money, run; returns the operation started (the estimate or the
        run), or None when nothing started."""
        try:
            self.work = self._plan() if callable(self._plan) and not hasattr(self._plan, "run") else self._plan
            self.work.check()
        except UserError as exc:
            self._say_error(str(exc))
            return None
        if not self.work.paid:
            return self._start_run()
        work = self.work
        return self._start(lambda state: work.estimate(paid_only=True), label="Estimating what it costs",
                                project=work.project, on_done=self._estimated, on_error=self._failed,
                                on_cancelled=self._cancelled)

    def _start(self, fn: Callable[[Any], Any], **kwargs: Any) -> "Operation":
        """On the view's slot (one operation at a time); a view without one (the Jobs page, where several runs
        may continue at once) starts it beside the others."""
        if hasattr(self.slot, "start"):
            return self.slot.start(fn, **kwargs)
        return self.view.ops.run(fn, **kwargs)

    def _estimated(self, estimate: "Estimate") -> None:
        if ask_before_paying(self.view, self.work, estimate):
            self._start_run()  # in the estimate's place: the view never looks idle between question and run
            return
        self._say("Nothing was started. " + estimate.describe())
        if self._on_declined is not None:
            self._on_declined()

    def _start_run(self) -> "Operation":
        summary = getattr(self.view, "summary", None)
        if summary is not None:
            summary.hide()
        work = self.work
        callbacks = {"on_progress": self._on_progress, "on_partial": self._on_partial}
        return self._start(work.run, label=work.title, project=work.project, on_done=self._done,
                                on_error=self._failed, on_cancelled=self._cancelled, on_end=self._ended,
                                **{k: v for k, v in callbacks.items() if v is not None})

    # ------------------------------------------------------------------ what it reports
    def _done(self, outcome: "WorkOutcome") -> None:
        self.outcome = outcome
        self._say(self.work.outcome_words(outcome))
        if self._on_success is not None:
            self._on_success(outcome)

    def _failed(self, message: str, details: str) -> None:
        if hasattr(self.view, "work_failed"):
            self.view.work_failed(message, details)
        else:
            self.view.show_error(message, details)

    def _cancelled(self, message: str) -> None:
        self._say(message)

    def _ended(self) -> None:
        """The view reloads; every other view showing what the work changed hears of it."""
        if hasattr(self.view, "work_ended"):
            self.view.work_ended()
        elif getattr(self.view, "project", None) is not None:
            self.view.refresh()
        self.view.ops.changes.announce(self.work.changes, origin=self.view)
        # Not deleteLater(): deleting the op from its own end callback crashed the window (a segfault in the
        # event loop); it is a small child of its view and goes with it.

    def _say(self, text: str) -> None:
        """In the view's summary box (or its status line, ``show_status``); a view with neither hears only of
        what did not go well (a message box)."""
        if hasattr(self.view, "show_summary"):
            self.view.show_summary(text)
        elif hasattr(self.view, "show_status"):
            self.view.show_status(text)
        elif text and (self.outcome is None or not self.outcome.succeeded):
            dialogs.show_info(self.view, text)

    def _say_error(self, text: str) -> None:
        if hasattr(self.view, "show_error"):
            self.view.show_error(text)
        else:
            dialogs.show_error(self.view, text)
