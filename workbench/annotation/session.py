"""An annotation session: one annotator working through their queue of one task (no Qt; the GUI binds to it).

Anki-style: the session shows one item at a time (``current``); ``answer`` saves and advances, ``skip``
moves on without answering, ``flag`` marks the item with a comment, ``undo`` takes back the latest answer
or skip and returns to that item. Every action is its own transaction, so a crash loses nothing that was
saved, and opening the session again resumes at the first item not yet answered or skipped, in the
annotator's own order.

Time on an item is measured from when it is shown; any stretch without activity (``touch``: the GUI calls
it on every key press or click) counts at most ``idle_cap_seconds``, so a coffee break does not turn into
a twenty-minute reading time. Time already spent on an item (before an undo, a skip, or leaving the
session with the item unanswered) is added up.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from workbench.annotation.annotators import Annotator, add_annotator, get_annotator
from workbench.annotation.assignment import assigned_items, stable_hash
from workbench.annotation.blinding import item_heading, visible_details
from workbench.annotation.durations import Duration, parse_duration
from workbench.annotation.items import Item, get_item
from workbench.annotation.tasks import LABEL, NAME_CLOZE, NARRATIVE_TIME, SUMMARY_VALIDITY, Task, get_task
from workbench.errors import UserError
from workbench.project import now

if TYPE_CHECKING:
    from workbench.project import Project

CONFIDENCE_LEVELS = {1: "low", 2: "medium", 3: "high"}


@dataclass(frozen=True)
class ItemView:
    """What the screen shows for the current item (already blinded as the task requires)."""

    item_id: int  # the project's own number, for the program: never shown (see ``blinding``)
    heading: str
    text: str
    context_before: str
    context_after: str
    options: tuple[str, ...]  # summary validity: the texts on sides 1 and 2; label: the labels
    details: dict[str, str] = field(default_factory=dict)
    flagged: bool = False
    comment: str = ""


@dataclass(frozen=True)
class SessionProgress:
    answered: int
    total: int
    skipped: int
    flagged: int

    @property
    def text(self) -> str:
        return f"{self.answered} / {self.total}"


def true_side(task: Task, annotator: Annotator, item_id: int) -> int:
    """Side (1 or 2) of the true summary for this annotator and item: random, but fixed by the seed."""
    return 1 + stable_hash("side", task.seed, annotator.name, item_id) % 2


class Session:
    def __init__(
        self,
        project: "Project",
        task: "Task | str | int",
        annotator: "Annotator | str",
        *,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.project = project
        self.task = get_task(project, task)
        self.annotator = annotator if isinstance(annotator, Annotator) else get_annotator(project, annotator)
        self.clock = clock
        self.order = assigned_items(project, self.task, self.annotator)
        self._places = {item_id: place for place, item_id in enumerate(self.order, start=1)}
        self._item_cache: dict[int, Item] = {}
        self._states: dict[int, dict[str, Any]] = {}
        self._current_id: int | None = None
        self._reload()

    # ------------------------------------------------------------------ reading
    def _reload(self) -> None:
        rows = self.project.db.execute(
            "SELECT item_id, status, flagged, comment, seconds FROM annotations WHERE task_id = ? AND annotator_id = ?",
            [self.task.id, self.annotator.id],
        ).fetchall()
        self._states = {
            item_id: {"status": status, "flagged": bool(flagged), "comment": comment, "seconds": seconds or 0.0}
            for item_id, status, flagged, comment, seconds in rows
        }
        following = next((i for i in self.order if self._states.get(i, {}).get("status") not in ("answered", "skipped")), None)
        if following != self._current_id:
            self._current_id = following
            self._start_timer()

    def _start_timer(self) -> None:
        self._active_seconds = 0.0
        self._last_activity = self.clock()

    def _item(self, item_id: int) -> Item:
        if item_id not in self._item_cache:
            self._item_cache[item_id] = get_item(self.project, item_id)
        return self._item_cache[item_id]

    @property
    def finished(self) -> bool:
        return self._current_id is None

    @property
    def current(self) -> ItemView | None:
        if self._current_id is None:
            return None
        item = self._item(self._current_id)
        state = self._states.get(item.id, {})
        options: tuple[str, ...] = ()
        if self.task.kind == SUMMARY_VALIDITY:
            side = true_side(self.task, self.annotator, item.id)
            true_text, distorted = item.choices["true"], item.choices["distorted"]
            options = (true_text, distorted) if side == 1 else (distorted, true_text)
        elif self.task.kind == LABEL:
            options = tuple(self.task.labels)
        return ItemView(
            item_id=item.id,
            heading=item_heading(self.position, len(self.order)),
            text=item.text,
            context_before=item.context_before,
            context_after=item.context_after,
            options=options,
            details=visible_details(self.task, item),
            flagged=state.get("flagged", False),
            comment=state.get("comment", ""),
        )

    @property
    def progress(self) -> SessionProgress:
        statuses = [self._states.get(i, {}) for i in self.order]
        return SessionProgress(
            answered=sum(s.get("status") == "answered" for s in statuses),
            total=len(self.order),
            skipped=sum(s.get("status") == "skipped" for s in statuses),
            flagged=sum(bool(s.get("flagged")) for s in statuses),
        )

    @property
    def position(self) -> int:
        """1-based place of the current item in the annotator's order (0 when finished)."""
        return 0 if self._current_id is None else self._places[self._current_id]

    # ------------------------------------------------------------------ timing
    def touch(self) -> None:
        """Record activity (a key press, a click): the time since the last activity counts, capped."""
        moment = self.clock()
        self._active_seconds += min(max(moment - self._last_activity, 0.0), self.task.idle_cap_seconds)
        self._last_activity = moment

    def seconds_on_item(self) -> float:
        """Time spent on the current item so far, including time before an undo or a skip."""
        self.touch()
        return self._active_seconds + self._states.get(self._current_id, {}).get("seconds", 0.0)

    # ------------------------------------------------------------------ actions
    def _require_current(self) -> Item:
        if self._current_id is None:
            raise UserError("There is no item left to answer in this session.")
        return self._item(self._current_id)

    def answer(self, value: Any, *, confidence: int | None = None, default_unit: str | None = None) -> dict[str, Any]:
        """Save an answer for the current item and move on. Returns what was stored.

        narrative time: a duration ('2 hours', or a number with ``default_unit``) or a ``Duration``;
        summary validity: the side chosen, 1 or 2 (``confidence`` 1-3 optional); label: one of the labels;
        name cloze: the name typed (kept as typed, less the spaces around it; ``dont_know`` saves "don't know").
        """
        item = self._require_current()
        fields = self._answer_fields(item, value, confidence, default_unit)
        fields["seconds"] = self.seconds_on_item()
        self._write(item.id, "answered", fields)
        return fields

    def _answer_fields(self, item: Item, value: Any, confidence: int | None, default_unit: str | None) -> dict[str, Any]:
        kind = self.task.kind
        if confidence is not None and confidence not in CONFIDENCE_LEVELS:
            raise UserError("Confidence is 1 (low), 2 (medium) or 3 (high), or left out.")
        if kind == NARRATIVE_TIME:
            duration = value if isinstance(value, Duration) else parse_duration(str(value), default_unit)
            return {"value": str(duration), "amount": duration.amount, "unit": duration.unit,
                    "minutes": duration.minutes, "confidence": confidence}
        if kind == SUMMARY_VALIDITY:
            try:
                side = int(value)
            except (TypeError, ValueError):
                side = 0
            if side not in (1, 2):
                raise UserError("Choose summary 1 or summary 2.")
            truth = true_side(self.task, self.annotator, item.id)
            return {"value": "true" if side == truth else "distorted", "chosen_side": side, "true_side": truth,
                    "confidence": confidence}
        if kind == NAME_CLOZE:
            name = "" if value is None else str(value).strip()
            if not name:
                raise UserError("Type the name you think is hidden, or choose Don't know (Ctrl+D).")
            return {"value": name, "confidence": confidence}
        label = next((l for l in self.task.labels if l.lower() == str(value).strip().lower()), None)
        if label is None:
            raise UserError(f"'{value}' is not one of this task's labels: {', '.join(self.task.labels)}.")
        return {"value": label, "confidence": confidence}

    def dont_know(self) -> dict[str, Any]:
        """Name cloze: the annotator does not know the name. Saved as an answer with an empty value, which is
        scored as wrong (like a model's empty answer); a skip, by contrast, is not an answer."""
        item = self._require_current()
        if self.task.kind != NAME_CLOZE:
            raise UserError("'Don't know' is an answer of name-cloze tasks only.")
        fields: dict[str, Any] = {"value": "", "seconds": self.seconds_on_item()}
        self._write(item.id, "answered", fields)
        return fields

    def pause(self) -> None:
        """The annotator leaves before answering the current item: keep the time spent on it, so that it
        counts when they come back to the item (the item stays open)."""
        if self._current_id is None:
            return
        spent = self.seconds_on_item()
        db = self.project.db
        with db.transaction():
            db.execute(
                "INSERT INTO annotations (task_id, item_id, annotator_id, status, seconds, seq, updated_at)"
                " VALUES (?, ?, ?, 'open', ?, 0, ?)"
                " ON CONFLICT(task_id, item_id, annotator_id) DO UPDATE SET seconds = excluded.seconds,"
                " updated_at = excluded.updated_at WHERE annotations.status = 'open'",
                [self.task.id, self._current_id, self.annotator.id, spent, now()],
            )
        self._states.setdefault(self._current_id, {"status": "open", "flagged": False, "comment": ""})["seconds"] = spent
        self._start_timer()

    def skip(self) -> None:
        item = self._require_current()
        self._write(item.id, "skipped", {"seconds": self.seconds_on_item()})

    def flag(self, comment: str) -> None:
        """Mark the current item (e.g. 'the passage is a table of contents'); it stays the current item."""
        item = self._require_current()
        comment = (comment or "").strip()
        if not comment:
            raise UserError("Say in a few words why you flag this item, so whoever reads the results knows.")
        db = self.project.db
        with db.transaction():
            db.execute(
                "INSERT INTO annotations (task_id, item_id, annotator_id, status, flagged, comment, seq, updated_at)"
                " VALUES (?, ?, ?, 'open', 1, ?, 0, ?)"
                " ON CONFLICT(task_id, item_id, annotator_id) DO UPDATE SET flagged = 1, comment = excluded.comment,"
                " updated_at = excluded.updated_at",
                [self.task.id, item.id, self.annotator.id, comment, now()],
            )
        self._states.setdefault(item.id, {"status": "open", "seconds": 0.0}).update(flagged=True, comment=comment)

    def undo(self) -> bool:
        """Take back the latest answer or skip of this session's annotator; that item becomes current."""
        db = self.project.db
        with db.transaction():  # the latest answer is found and taken back in one step
            row = db.execute(
                "SELECT item_id FROM annotations WHERE task_id = ? AND annotator_id = ? AND origin = 'session'"
                " AND status IN ('answered', 'skipped') ORDER BY seq DESC LIMIT 1",
                [self.task.id, self.annotator.id],
            ).fetchone()
            if row is None:
                return False
            db.execute(
                "UPDATE annotations SET status = 'open', value = NULL, amount = NULL, unit = NULL, minutes = NULL,"
                " chosen_side = NULL, true_side = NULL, confidence = NULL, answered_at = NULL, updated_at = ?"
                " WHERE task_id = ? AND item_id = ? AND annotator_id = ?",
                [now(), self.task.id, row[0], self.annotator.id],
            )
        self._reload()
        if self._current_id != row[0] and row[0] in self.order:
            # answered out of order (e.g. after revisiting skipped items): go back to it all the same
            self._current_id = row[0]
            self._start_timer()
        return True

    def revisit_skipped(self) -> int:
        """Put skipped items back in the queue (in the annotator's order). Returns how many."""
        with self.project.db.transaction():
            cur = self.project.db.execute(
                "UPDATE annotations SET status = 'open', updated_at = ? WHERE task_id = ? AND annotator_id = ?"
                " AND status = 'skipped'",
                [now(), self.task.id, self.annotator.id],
            )
        self._reload()
        return cur.rowcount

    def _write(self, item_id: int, status: str, fields: dict[str, Any]) -> None:
        columns = {"value": None, "amount": None, "unit": None, "minutes": None, "chosen_side": None,
                   "true_side": None, "confidence": None, **fields}
        stamp = now()
        db = self.project.db
        with db.transaction():
            (seq,) = db.execute(
                "SELECT COALESCE(MAX(seq), 0) + 1 FROM annotations WHERE task_id = ? AND annotator_id = ?",
                [self.task.id, self.annotator.id],
            ).fetchone()
            names = list(columns)
            db.execute(
                f"INSERT INTO annotations (task_id, item_id, annotator_id, status, {', '.join(names)}, origin, seq,"
                f" answered_at, updated_at) VALUES (?, ?, ?, ?, {', '.join('?' * len(names))}, 'session', ?, ?, ?)"
                f" ON CONFLICT(task_id, item_id, annotator_id) DO UPDATE SET status = excluded.status,"
                f" {', '.join(f'{n} = excluded.{n}' for n in names)}, origin = 'session', seq = excluded.seq,"
                f" answered_at = excluded.answered_at, updated_at = excluded.updated_at",
                [self.task.id, item_id, self.annotator.id, status, *columns.values(), seq,
                 stamp if status == "answered" else None, stamp],
            )
        self._reload()


def open_session(
    project: "Project",
    task: "Task | str | int",
    annotator_name: str,
    *,
    add_if_new: bool = True,
    clock: Callable[[], float] = time.monotonic,
) -> Session:
    """Start or resume ``annotator_name``'s session on ``task`` (adding the annotator if new)."""
    annotator = add_annotator(project, annotator_name) if add_if_new else get_annotator(project, annotator_name)
    session = Session(project, task, annotator, clock=clock)
    if not session.order:
        raise UserError(f"Task '{session.task.name}' has no items ready to annotate yet. Add items first.")
    return session
