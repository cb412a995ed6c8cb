"""One name-cloze probe over several models: what it will cost, and running it model after model.

A ``ProbePlan`` is what a person chooses before pressing Run: the models, the kind of run (prompted
name cloze, the masked-LM baseline, or the log-probability of the true name), the prompt template,
temperature, the longest answer, and the books. ``estimate_costs`` says, per model, how many requests
and tokens the run needs and at most what it costs (local models cost nothing); ``run_plan`` runs the
models one after another through the probe's own functions, so each model's run is resumable and
starting the same plan again continues it.

A model that cannot do the chosen kind (a chat API asked for log-probabilities, a generating model
asked to be the masked baseline) does not stop the others: its reason is kept in ``PlanResult``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from workbench.errors import UserError
from workbench.models.prices import is_paid as is_paid  # the pages ask this module
from workbench.probes.cloze.mlm import MLM_KIND
from workbench.probes.cloze.prompting import DEFAULT_TEMPLATE
from workbench.probes.cloze.run import CLOZE_KIND, DEFAULT_MAX_TOKENS, LOGPROB_KIND, Selection
from workbench.progress import TaskState

if TYPE_CHECKING:
    from workbench.jobs import JobReport
    from workbench.models.catalog import ModelSpec
    from workbench.models.prices import CostEstimate
    from workbench.project import Project
    from workbench.work import Work

#: run kind -> what it is, in words (the order is the order a chooser lists them)
KINDS = {
    CLOZE_KIND: "Name cloze (the model is asked for the hidden name)",
    MLM_KIND: "Masked-LM baseline (encoder models such as BERT fill the gap)",
    LOGPROB_KIND: "Log-probability of the true name (local models)",
}
#: kinds that read a prompt template
TEMPLATED_KINDS = (CLOZE_KIND, LOGPROB_KIND)
#: kinds whose settings include temperature and answer length
GENERATING_KINDS = (CLOZE_KIND,)


@dataclass
class ProbePlan:
    models: list[str]
    kind: str = CLOZE_KIND
    template: str = DEFAULT_TEMPLATE
    temperature: float = 0.0
    max_tokens: int = DEFAULT_MAX_TOKENS
    book_ids: list[int] | None = None
    retry_failed: bool = False
    #: further generation parameters (e.g. ``min_tokens``), passed to the backend as they are
    extra_params: dict = field(default_factory=dict)
    #: the passages by tag or book set (the command line's choice), in place of ``book_ids``
    chosen: Selection | None = None

    def check(self) -> None:
        if not self.models:
            raise UserError("Choose at least one model to run.")
        if self.kind not in KINDS:
            raise UserError(f"'{self.kind}' is not a kind of name-cloze run. Choose one of: {', '.join(KINDS)}.")
        if self.book_ids is not None and not self.book_ids:
            raise UserError("Choose at least one book (tick it in the list of books).")
        if not 0 <= float(self.temperature) <= 2:
            raise UserError("The temperature must be between 0 and 2 (0 always gives the model's likeliest answer).")
        if int(self.max_tokens) < 1:
            raise UserError("The longest answer must be at least 1 token.")

    def selection(self) -> Selection:
        return self.chosen if self.chosen is not None else Selection(book_ids=self.book_ids)

    def params(self) -> dict:
        return {"temperature": float(self.temperature), "max_tokens": int(self.max_tokens), **self.extra_params}


def _specs(project: "Project", plan: ProbePlan) -> list["ModelSpec"]:
    from workbench.models.catalog import get_model

    return [get_model(project, label) for label in plan.models]


def estimate_costs(project: "Project", plan: ProbePlan) -> list[tuple["ModelSpec", "CostEstimate"]]:
    """Per model: requests, prompt tokens, answer tokens at most, and the most it can cost."""
    from workbench.models.prices import estimate_cost

    prompts = _prompts(project, plan)
    answer_tokens = int(plan.max_tokens) if plan.kind in GENERATING_KINDS else 0
    return [(spec, estimate_cost(spec, prompts, answer_tokens, project=project)) for spec in _specs(project, plan)]


def _prompts(project: "Project", plan: ProbePlan) -> list[str]:
    """What each chosen passage's request reads (the template filled in, or the masked text)."""
    from workbench.probes.cloze.mlm import masked_text
    from workbench.probes.cloze.prompting import cloze_prompt
    from workbench.probes.cloze.run import _passages
    from workbench.prompt_templates import get_template

    plan.check()
    ids = plan.selection().passage_ids(project)
    passages = [text for text, _ in _passages(project, ids).values()]
    if plan.kind in TEMPLATED_KINDS:
        template = get_template(project, plan.template, kind="cloze")
        return [cloze_prompt(template, text) for text in passages]
    return [masked_text(text, "[MASK]") for text in passages]


#: what the page says about failed passages (the button that asks again for them)
RETRY_ON_PAGE = "use 'Retry failed only' to ask again"
#: what a name-cloze run changes, for the pages that show it
CHANGES = ("cloze-results",)


def plan_work(project: "Project", plan: ProbePlan, *, next_step: str = RETRY_ON_PAGE) -> "Work":
    """The plan as one ``Work``: its models looked up once, the cost of every chosen passage (answers as long as
    allowed), the models run one after another (``run_plan``), and its outcome in words."""
    from workbench.models.prices import estimate_cost
    from workbench.work import Work, WorkOutcome

    plan.check()
    specs = _specs(project, plan)
    by_label = {spec.label: spec for spec in specs}
    prompts: list[list[str]] = []

    def cost(spec: "ModelSpec") -> "CostEstimate":
        if not prompts:
            prompts.append(_prompts(project, plan))
        answer_tokens = int(plan.max_tokens) if plan.kind in GENERATING_KINDS else 0
        return estimate_cost(spec, prompts[0], answer_tokens, project=project)

    def perform(state: TaskState) -> WorkOutcome:
        result = run_plan(project, plan, state, specs=by_label)
        return WorkOutcome(reports=result.reports, labels=result.labels, problems=result.problems,
                           cancelled=result.cancelled, value=result)

    what = KIND_TITLES.get(plan.kind, "Name cloze")
    title = f"{what} on {', '.join(plan.models)}"
    if plan.retry_failed:
        title = f"Retrying failed answers: {title[0].lower()}{title[1:]}"
    return Work(project, title, specs, perform, cost=cost, changes=CHANGES, retry_failed=plan.retry_failed,
                unit="passages", next_step=next_step)


#: run kind -> the title of a work of that kind
KIND_TITLES = {CLOZE_KIND: "Name cloze", MLM_KIND: "Masked-LM baseline", LOGPROB_KIND: "Log-probabilities"}


def prompt_preview(project: "Project", plan: ProbePlan) -> str | None:
    """What the model reads for the first chosen passage (None when the chosen books have no passages)."""
    from workbench.probes.cloze.mlm import masked_text
    from workbench.probes.cloze.passages import select_passage_ids
    from workbench.probes.cloze.prompting import cloze_prompt
    from workbench.probes.cloze.run import _passages
    from workbench.prompt_templates import get_template

    if plan.book_ids is not None and not plan.book_ids:
        return None
    ids = select_passage_ids(project, book_ids=plan.book_ids)
    if not ids:
        return None
    passage = _passages(project, ids[:1])[ids[0]][0]
    if plan.kind in TEMPLATED_KINDS:
        return cloze_prompt(get_template(project, plan.template, kind="cloze"), passage)
    return masked_text(passage, "[MASK]")


def describe_estimates(estimates: list[tuple["ModelSpec", "CostEstimate"]]) -> str:
    """One line per model, then the total where every price is known."""
    lines = [f"{spec.label}: {estimate.describe()}" for spec, estimate in estimates]
    costs = [estimate.cost for _, estimate in estimates]
    if len(estimates) > 1 and all(c is not None for c in costs):
        lines.append(f"In all: at most about ${sum(costs):,.2f}.")
    return "\n".join(lines)


@dataclass
class PlanResult:
    reports: list["JobReport"] = field(default_factory=list)
    #: model label -> why it could not run
    problems: dict[str, str] = field(default_factory=dict)
    #: model label of each report, in order
    labels: list[str] = field(default_factory=list)
    cancelled: bool = False

    def summary(self) -> str:
        lines = []
        for label, report in zip(self.labels, self.reports):
            line = f"{label}: {report.answered} of {report.total} passages answered"
            if report.failed:
                line += f", {report.failed} failed (use 'Retry failed only' to ask again)"
            lines.append(line + ".")
            if report.status != "done" and report.message:
                lines.append(f"  {report.message}")
        lines += [f"{label}: {reason}" for label, reason in self.problems.items()]
        if self.cancelled:
            lines.append("Stopped at your request. Everything answered so far is saved; press Run again to continue.")
        return "\n".join(lines)


@dataclass(frozen=True)
class ModelStarted:
    """Handed to ``state.partial`` when the next model's run begins."""

    index: int
    count: int
    label: str


def run_one(project: "Project", plan: ProbePlan, label: "str | ModelSpec", state: TaskState) -> "JobReport":
    from workbench.probes.cloze.mlm import run_mlm
    from workbench.probes.cloze.run import run_cloze, run_logprob

    selection, retry = plan.selection(), plan.retry_failed
    if plan.kind == CLOZE_KIND:
        return run_cloze(project, label, template=plan.template, selection=selection, params=plan.params(),
                         state=state, retry_failed=retry)
    if plan.kind == LOGPROB_KIND:
        return run_logprob(project, label, template=plan.template, selection=selection, state=state,
                           retry_failed=retry)
    return run_mlm(project, label, selection=selection, state=state, retry_failed=retry)


def run_plan(project: "Project", plan: ProbePlan, state: TaskState | None = None,
             on_model: Callable[[ModelStarted], None] | None = None,
             specs: "dict[str, ModelSpec] | None" = None) -> PlanResult:
    """Run every model of the plan in turn; a cancel stops after the batch in flight (all kept). ``specs``:
    the models already looked up, by label."""
    state = state or TaskState()
    plan.check()
    plan.selection().passage_ids(project)  # a plain message now if there is nothing to run on
    result = PlanResult()
    for index, label in enumerate(plan.models):
        if state.cancelled:
            break
        started = ModelStarted(index, len(plan.models), label)
        state.partial(started)
        if on_model:
            on_model(started)
        try:
            report = run_one(project, plan, (specs or {}).get(label, label), state)
        except UserError as exc:
            result.problems[label] = str(exc)
            continue
        result.reports.append(report)
        result.labels.append(label)
    result.cancelled = state.cancelled
    return result
