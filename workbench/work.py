"""One piece of model work, from plan to paid run: what each probe's planning returns.

Every probe plans its model work the same way: it looks its models up once, and hands back a ``Work``
that says what it is (``title``), which models it calls (``models``), what it costs (``estimate()``: requests,
tokens and the most it can cost, for paid and free models alike, from ``workbench.models.prices``), how it runs
(``run(state)``: resumable job runs, progress and cooperative cancel through the ``TaskState``), the words for
how it ended (``outcome_words``) and which topics of the project it changes (``changes``: pages showing them
reload). The command line (``workbench.cli.common.run_work``) and the desktop app (``ui.work_op.WorkOp``) do
the rest the same way: ask before paying in one wording (``cost_question``), run, say what happened.

The question is asked only about paid models (``workbench.models.prices.is_paid``: an API the scholar has not
marked free; one on a known paid service marked free was already asked about when it was marked,
``models.catalog.FreeOnPaidHost``). Local models and models marked free cost nothing and start at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

from workbench.progress import TaskState

if TYPE_CHECKING:
    from workbench.jobs import JobReport
    from workbench.models.prices import CostEstimate
    from workbench.models.spec import ModelSpec
    from workbench.project import Project

#: topics a work may change; a page lists those it shows (free text: these are the ones in use)
RUNS = "runs"  # any run of any kind (the Jobs page)
CLOZE_RESULTS = "cloze-results"
REP_RESULTS = "rep-results"
READING_RESULTS = "reading-results"
SUMMARIES = "summaries"
LEAKAGE_RESULTS = "leakage-results"
VALIDITY_RESULTS = "validity-results"
ANNOTATION_ITEMS = "annotation-items"
CONTINUATION_RESULTS = "continuation-results"
BOOKS = "books"  # the library: books imported, edited, removed
MODELS = "models"  # the models registered, their settings and prices

#: a run kind's first word -> the results it changes (a run continued from the Jobs page says what it changed)
KIND_TOPICS = {"cloze": CLOZE_RESULTS, "rep": REP_RESULTS, "reading": READING_RESULTS, "summary": SUMMARIES,
               "leakage": LEAKAGE_RESULTS, "validity": VALIDITY_RESULTS, "continuation": CONTINUATION_RESULTS}


def run_topics(kind: str) -> tuple[str, ...]:
    """What a run of ``kind`` changes besides the runs themselves (by its kind's first word: 'cloze-mlm' changes
    name-cloze results)."""
    topic = KIND_TOPICS.get(str(kind).split("-")[0])
    return (topic,) if topic else ()

#: said after the cost in every question, on screen and on the terminal
NOT_PAID_AGAIN = "Answers already stored (or in the response cache) are not paid for again."
RETRY_CHEAPER = "Only failed answers are asked again, so it will cost less."
#: what to do about failed items, said by a page without a retry of its own ("{run}": the run's number)
RETRY_ON_JOBS = "to ask again for just those, choose run {run} on the Jobs page and press Retry failed only"
STOPPED = "Stopped at your request. Everything answered so far is saved; start it again to continue."


@dataclass
class WorkOutcome:
    """How a work ended: its job reports (one per run it executed, with the label of the model or part each
    belongs to), what kept a model from running at all, whether it was stopped, and whatever else the probe's
    run returned (``value``: a reading result, an analysis frame)."""

    reports: list["JobReport"] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    #: label -> why that model could not run (the others ran)
    problems: dict[str, str] = field(default_factory=dict)
    cancelled: bool = False
    value: Any = None

    @property
    def report(self) -> "JobReport | None":
        """The one report of a work that runs once (the last, when there were several)."""
        return self.reports[-1] if self.reports else None

    @property
    def succeeded(self) -> bool:
        """Every run finished with nothing failed, and no model was kept from running."""
        return not self.problems and all(r.status == "done" and not r.failed_total for r in self.reports)


@dataclass(frozen=True)
class Estimate:
    """What a work will cost, per model (its ``CostEstimate``; None where it cannot be worked out here)."""

    per_model: tuple[tuple["ModelSpec", "CostEstimate | None"], ...]

    @property
    def cost(self) -> float | None:
        """The most it can cost in all; None when a price is unknown."""
        costs = [e.cost if e is not None else None for _, e in self.per_model]
        return None if any(c is None for c in costs) else float(sum(costs))

    @property
    def requests(self) -> int:
        return sum(e.requests for _, e in self.per_model if e is not None)

    def lines(self, *, paid_only: bool = True) -> list[str]:
        """One line per model, '<label> is a paid API: <requests, tokens, cost>' (the one wording), then the
        total where every price is known and there is more than one model."""
        from workbench.models.prices import is_paid

        lines = []
        shown = [(s, e) for s, e in self.per_model if is_paid(s) or not paid_only]
        for spec, estimate in shown:
            what = estimate.describe() if estimate is not None else "how much it will cost cannot be estimated here."
            lines.append(f"{spec.label} is a paid API: {what}" if is_paid(spec) else f"{spec.label}: {what}")
        costs = [e.cost if e is not None else None for _, e in shown]
        if len(shown) > 1 and all(c is not None for c in costs):
            lines.append(f"In all: at most about ${sum(costs):,.2f}.")
        return lines

    def describe(self) -> str:
        return "\n".join(self.lines())


class Work:
    """Model work a probe planned (see the module's docstring). Built by each probe's planning function:

    - ``perform(state)`` does the work: returns a ``JobReport``, a list of them, or a ``WorkOutcome``;
    - ``cost(spec)`` gives one model's ``CostEstimate`` (asked only when an estimate is wanted);
    - ``labels`` names the report(s) ``perform`` returns, in order (the model labels by default);
    - ``unit`` is what the runs' items are called in the outcome ('passages', 'completions');
    - ``next_step`` is what to do about failed items, in the words of the view that started it ('{run}' stands
      for the run's number: ``RETRY_ON_JOBS``);
    - ``note`` is said with the cost question, before what is not paid for again (what comes on top);
    - ``headline(outcome)`` is said before the runs' counts (what the work made: 'Book 3, gpt: 40 scenes ...'),
      unless it was stopped.
    """

    def __init__(self, project: "Project", title: str, models: Sequence["ModelSpec"],
                 perform: Callable[[TaskState], Any], *, cost: Callable[["ModelSpec"], "CostEstimate | None"] | None
                 = None, changes: Iterable[str] = (RUNS,), retry_failed: bool = False, unit: str = "items",
                 next_step: str = "ask again for just those to retry them", labels: Sequence[str] | None = None,
                 headline: Callable[[WorkOutcome], str] | None = None, note: str = ""):
        self.project = project
        self.title = title
        # one model asked twice (DE-COP's paraphraser, asked too) is asked about once
        self.models = tuple({(spec.id, spec.label): spec for spec in models}.values())
        self._perform = perform
        self._cost = cost
        self.changes = frozenset(changes) | {RUNS}
        self.retry_failed = retry_failed
        self.unit = unit
        self.next_step = next_step
        self.labels = list(labels) if labels is not None else [spec.label for spec in self.models]
        self.headline = headline
        #: what else the question should say about the cost (retries of unusable answers that come on top)
        self.note = note
        #: how the command line heads a run's report (the title unless set)
        self.heading = title

    # ------------------------------------------------------------------ before
    @property
    def paid(self) -> list["ModelSpec"]:
        """The models of this work that may cost money (the cost question is about them)."""
        from workbench.models.prices import is_paid

        return [spec for spec in self.models if is_paid(spec)]

    def check(self) -> None:
        """Refuse, before any cost question, work a model cannot do yet (an API key not set, imported results)."""
        from workbench.models.catalog import require_api_key, runnable_model

        for spec in self.models:
            runnable_model(self.project, spec)
            require_api_key(spec)

    def estimate(self, *, paid_only: bool = False) -> Estimate:
        """Requests, tokens and the most it can cost, per model (paid ones only with ``paid_only``)."""
        specs = self.paid if paid_only else list(self.models)
        if self._cost is None:
            return Estimate(tuple((spec, None) for spec in specs))
        return Estimate(tuple((spec, self._cost(spec)) for spec in specs))

    def cost_question(self, estimate: Estimate) -> str:
        """The one wording of the question before paid work (the app's dialog; the terminal adds [y/N])."""
        return f"{self.title}.\n\n{estimate.describe()}\n\n{self.cost_note()} Go ahead?"

    def cost_note(self) -> str:
        """What the estimate does not count (said with every cost question)."""
        return (f"{self.note} " if self.note else "") + NOT_PAID_AGAIN + (f" {RETRY_CHEAPER}" if self.retry_failed else "")

    # ------------------------------------------------------------------ running
    def run(self, state: TaskState | None = None) -> WorkOutcome:
        """Do the work (resumable: the same work again continues its runs)."""
        state = state or TaskState()
        result = self._perform(state)
        if isinstance(result, WorkOutcome):
            outcome = result
        else:
            reports = [result] if hasattr(result, "run_id") else list(result or ())
            outcome = WorkOutcome(reports=reports, labels=_labels(self.labels, len(reports), self.title))
        outcome.cancelled = outcome.cancelled or state.cancelled
        return outcome

    def then(self, after: Callable[[WorkOutcome, TaskState], Any]) -> "Work":
        """This work followed, unless stopped, by ``after(outcome, state)`` (reading what the runs made: a
        comparison, an analysis), whose result becomes the outcome's ``value``. The models, cost and question
        are this work's."""
        first = self

        def perform(state: TaskState) -> WorkOutcome:
            outcome = first.run(state)
            if not outcome.cancelled:
                outcome.value = after(outcome, state)
            return outcome

        work = Work(self.project, self.title, self.models, perform, cost=self._cost, changes=self.changes,
                    retry_failed=self.retry_failed, unit=self.unit, next_step=self.next_step, labels=self.labels,
                    headline=self.headline, note=self.note)
        work.heading = self.heading
        return work

    # ------------------------------------------------------------------ after
    def outcome_words(self, outcome: WorkOutcome) -> str:
        """What happened, per run (answered and failed counted from what is stored, so a failure is never called
        an answer; why most failures happened), what kept a model from running, and what to do next."""
        from workbench.run_failures import failure_reasons
        from workbench.runs import run_counts

        lines = [self.headline(outcome)] if self.headline is not None and not outcome.cancelled else []
        for label, report in zip(outcome.labels, outcome.reports):
            counts = run_counts(self.project, report.run_id)
            ok = int(counts.get("ok", report.answered))
            failed = int(counts.get("failed", max(report.failed, report.failed_total)))
            line = f"{label}: {ok:,} of {report.total:,} {self.unit} answered"
            if failed:
                line += f", {failed:,} failed ({self.next_step.replace('{run}', str(report.run_id))})"
            lines.append(line + ".")
            if failed:
                reasons = failure_reasons(self.project, report.run_id)
                if reasons:
                    most = "All" if reasons[0][1] == failed else "Most"
                    lines.append(f"  {most} failed because: {reasons[0][0]}")
            if report.status != "done" and report.message and not outcome.cancelled:
                lines.append(f"  {report.message}")
        lines += [f"{label}: {reason}" for label, reason in outcome.problems.items()]
        if outcome.cancelled:
            lines.append(STOPPED)
        elif not lines:
            lines.append(f"{self.title}: nothing was left to ask.")
        return "\n".join(lines)


def _labels(labels: list[str], count: int, title: str) -> list[str]:
    if len(labels) == count:
        return labels
    if len(labels) == 1:
        return labels * count
    return [title] * count


def continue_work(project: "Project", run_id: int, retry_failed: bool = False, *, changes: Iterable[str] | None = None,
                  next_step: str = "ask again for just those to retry them") -> Work:
    """Continuing a stopped run (or asking again only for its failures) as a ``Work``: its model, about what the
    items left cost (from the prompts the run has sent, ``models.usage.estimate_continuation``), and the job
    runner's resume. A run of a kind nothing can continue is refused when it runs, as before. ``changes``: what
    it changes (by default, the results of the run's kind, ``run_topics``)."""
    from workbench import jobs
    from workbench.models.catalog import get_model
    from workbench.models.usage import estimate_continuation

    run = jobs.get_run(project, run_id)
    specs = [get_model(project, int(run["model_id"]))] \
        if run["model_id"] is not None and jobs.can_resume(run["kind"]) else []
    what = "Retrying the failed items of" if retry_failed else "Continuing"
    changes = run_topics(run["kind"]) if changes is None else changes
    work = Work(project, f"{what} run {run_id}", specs,
                lambda state: jobs.resume_run(project, run_id, state, retry_failed),
                cost=lambda spec: estimate_continuation(project, run_id, retry_failed), changes=changes,
                retry_failed=retry_failed, next_step=next_step, labels=[f"Run {run_id}"])
    work.heading = f"Run {run_id}"
    return work
