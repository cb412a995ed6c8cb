"""Summary-validity items: a model summarizes scenes, then writes a distorted version of each summary.

Two runs per task and model, through the one job runner (so both are resumable and every raw answer is
kept): ``summary`` (the scene -> a summary) and ``summary-distort`` (that summary -> the same characters
and setting with different events). Prompts are templates of the template store (shipped as
``resources/prompts/summary.txt`` and ``summary-distort.txt``; edited versions are kept beside them) and
ask for the answer after a begin marker; ``parse_marked`` takes the text after it.

A unit is retried (at most ``max_attempts`` times in all) when the model's answer has no usable text
after the marker or the request failed; retries draw with another seed at a temperature of at least
``RETRY_TEMPERATURE`` (so a deterministic model does not repeat its mistake). What still fails is stored
as a failure with every attempt's problem, and the item is left without summaries (not shown to
annotators, counted as failed).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

from workbench.annotation.items import SCENE_CHARS, SCENE_CONTEXT_CHARS, add_book_scenes, get_item, set_choices
from workbench.annotation.tasks import SUMMARY_VALIDITY, Task, get_task
from workbench.errors import UserError
from workbench.jobs import JobReport, Outcome, Process, Unit, run_counts, run_job
from workbench.models.base import Backend, GenerationParams, Request, prompt_request
from workbench.models.calls import generation_process, noting
from workbench.progress import TaskState
from workbench.prompt_templates import get_template, register_kind, template_by_id
from workbench.runs import Run, RunKind, config_dict, declare_run_kind, find_or_create_run, follow_ups, get_run

if TYPE_CHECKING:
    from workbench.project import Project

SUMMARY_TEMPLATE = "summary"
DISTORT_TEMPLATE = "summary-distort"

MARKER = "<summary>"
_MARKER = re.compile(r"<\s*summary\s*>", re.IGNORECASE)
_CLOSING = re.compile(r"<\s*/\s*summary\s*>", re.IGNORECASE)
_WRAPPING = " \t\r\n\"'*`\u201c\u201d"

DEFAULT_MAX_ATTEMPTS = 3
# Failures that would only repeat: the prompt does not fit the model.
UNRETRIABLE = {"too_long"}
RETRY_TEMPERATURE = 0.7
SUMMARY_PARAMS = GenerationParams(temperature=0.0, max_tokens=256)
DISTORT_PARAMS = GenerationParams(temperature=0.7, max_tokens=256)


class FormatError(ValueError):
    """The model answered, but not in the form the prompt asked for."""


@dataclass(frozen=True)
class SummaryConfig:
    """A summary run's config: the annotation task whose scene items it summarizes, the label of the model
    that writes them (the items are the model's), and the attempts allowed per scene."""

    annotation_task: int | None = None
    model: str = ""
    max_attempts: int = DEFAULT_MAX_ATTEMPTS


@dataclass(frozen=True)
class DistortConfig(SummaryConfig):
    """A distortion run's config: its summary run's, and that run (``summary_run``), whose summaries it rewrites."""

    summary_run: int | None = None


# ---------------------------------------------------------------------------------------------- parsing
def parse_marked(raw: str | None, prompt: str | None = None) -> str:
    """The text after the last begin marker that has any, up to a closing tag or another marker, trimmed.

    When the prompt itself ends with the marker (base models are primed that way), the whole answer is
    the text after it. Raises ``FormatError`` when there is no marker or nothing after it.
    """
    text = raw or ""
    if prompt is not None and _MARKER.search(prompt.rstrip()[-len(MARKER) - 4 :]):
        text = MARKER + text
    markers = list(_MARKER.finditer(text))
    if not markers:
        raise FormatError(f"the answer has no {MARKER} line" if text.strip() else "the answer is empty")
    ends = [m.start() for m in markers[1:]] + [len(text)]
    for marker, end in reversed(list(zip(markers, ends))):
        body = _CLOSING.split(text[marker.end() : end], maxsplit=1)[0].strip(_WRAPPING)
        if body:
            return " ".join(body.split())
    raise FormatError(f"nothing follows {MARKER}")


def parse_distorted(raw: str | None, prompt: str | None, original: str) -> str:
    text = parse_marked(raw, prompt)
    if _normalized(text) == _normalized(original):
        raise FormatError("the changed version repeats the original summary word for word")
    return text


def _normalized(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


# ---------------------------------------------------------------------------------------------- templates
register_kind(SUMMARY_TEMPLATE, required=["scene"], allowed=["scene"], description="summarize a scene")
register_kind(DISTORT_TEMPLATE, required=["summary"], allowed=["summary"],
              description="rewrite a summary with other events")


# ---------------------------------------------------------------------------------------------- retries
def retrying_process(
    backend: Backend,
    build_request: Callable[[Unit, int], Request],
    parse: Callable[[Unit, str | None, str | None], str],
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
) -> Process:
    """A job ``Process`` that re-asks (up to ``max_attempts`` in all) when the answer cannot be parsed or
    the request failed. ``build_request(unit, attempt)``; ``parse(unit, raw, prompt)`` raises FormatError."""

    def process(units: Sequence[Unit], state: TaskState) -> Iterable[tuple[Unit, Outcome]]:
        problems: dict[Unit, list[str]] = {u: [] for u in units}
        pending = list(units)
        for attempt in range(max_attempts):
            if not pending:
                return
            again: list[Unit] = []
            send = generation_process(backend, lambda u, a=attempt: build_request(u, a))
            for unit, outcome in send(pending, state):
                if outcome.fatal:
                    yield unit, outcome
                    return
                if outcome.status == "ok":
                    try:
                        parse(unit, outcome.raw, outcome.prompt)
                    except FormatError as exc:
                        problem = str(exc)
                    else:
                        outcome.extra = {**(outcome.extra or {}), "attempts": attempt + 1, "problems": problems[unit]}
                        yield unit, outcome
                        continue
                else:
                    problem = outcome.error or "the request failed"
                problems[unit].append(f"attempt {attempt + 1}: {problem}")
                hopeless = (outcome.extra or {}).get("failure_kind") in UNRETRIABLE
                if attempt + 1 < max_attempts and not hopeless:
                    again.append(unit)
                    continue
                outcome.status = "failed"
                outcome.error = f"No usable answer after {attempt + 1} attempt(s); last problem: {problem.rstrip('.')}."
                outcome.extra = {**(outcome.extra or {}), "attempts": attempt + 1, "problems": problems[unit]}
                yield unit, outcome
            pending = again

    return noting(process, backend)


def attempt_params(params: GenerationParams, attempt: int) -> GenerationParams:
    if attempt == 0:
        return params
    return replace(params, temperature=max(params.temperature, RETRY_TEMPERATURE))


# ---------------------------------------------------------------------------------------------- runs
def _run_for(project: "Project", kind: str, model_id: int | None, template_id: int, params: GenerationParams,
             config: SummaryConfig) -> int:
    """The run with these settings, so that starting again continues it; a new run otherwise. The number of
    attempts counts among the parameters."""
    return find_or_create_run(project, kind, model_id=model_id, template_id=template_id,
                              params={**params.as_dict(), "max_attempts": config.max_attempts}, config=config)


def parsed_answers(project: "Project", run_id: int, parse: Callable[[int, str | None, str | None], str]) -> dict[int, str]:
    """item id -> parsed text for the run's successful responses (re-parsed from the raw answers)."""
    found = {}
    for item_id, raw, prompt in project.db.execute(
        "SELECT item_id, raw, prompt FROM responses WHERE run_id = ? AND status = 'ok'", [run_id]
    ).fetchall():
        try:
            found[item_id] = parse(item_id, raw, prompt)
        except FormatError:
            continue
    return found


@dataclass
class SummaryReport:
    items: int
    summaries_ok: int
    summaries_failed: int
    distorted_ok: int
    distorted_failed: int
    ready: int
    summary_run: int
    distort_run: int

    def describe(self) -> str:
        return (f"{self.items} scenes: {self.summaries_ok} summaries ({self.summaries_failed} failed), "
                f"{self.distorted_ok} distorted versions ({self.distorted_failed} failed); "
                f"{self.ready} items ready to annotate.")


def scene_items(project: "Project", task_id: int, model_label: str) -> list[int]:
    rows = project.db.execute(
        "SELECT id FROM annotation_items WHERE task_id = ? AND origin = 'scene' AND json_extract(meta, '$.model') = ?"
        " ORDER BY id",
        [task_id, model_label],
    )
    return [r[0] for r in rows.fetchall()]


def summaries_of(project: "Project", summary_run: int) -> dict[int, str]:
    return parsed_answers(project, summary_run, lambda _, raw, prompt: parse_marked(raw, prompt))


def distortions_of(project: "Project", distort_run: int, summaries: dict[int, str]) -> dict[int, str]:
    return parsed_answers(project, distort_run, lambda i, raw, prompt: parse_distorted(raw, prompt, summaries[i])
                          if i in summaries else "")


def run_on_texts(project: "Project", run_id: int, backend: Backend, texts: dict[int, tuple[str, str]],
                 parse: Callable[[int, str | None, str | None], str], state: TaskState,
                 retry_failed: bool = False) -> JobReport:
    """Execute (or continue) a summary-like run: ``texts`` maps each item to (placeholder, text) for the
    run's template; ``parse(item_id, raw, prompt)`` raises ``FormatError`` for an answer to ask again.
    The run's template, parameters and ``max_attempts`` are those it recorded."""
    run = get_run(project, run_id)
    template = template_by_id(project, run.template_id)
    params = GenerationParams.from_dict(run.params)
    attempts = int(run.params.get("max_attempts", DEFAULT_MAX_ATTEMPTS))

    def build(unit: Unit, attempt: int) -> Request:
        placeholder, text = texts[unit.item_id]
        return _request(backend, template.render(**{placeholder: text}), attempt_params(params, attempt), attempt)

    return run_job(project, run_id, [Unit(i) for i in texts],
                   retrying_process(backend, build, lambda u, raw, prompt: parse(u.item_id, raw, prompt), attempts),
                   state, retry_failed=retry_failed)


def run_summaries(project: "Project", run_id: int, backend: Backend, item_ids: Sequence[int], state: TaskState,
                  *, retry_failed: bool = False) -> JobReport:
    texts = {i: ("scene", get_item(project, i).text) for i in item_ids}
    return run_on_texts(project, run_id, backend, texts, lambda _, raw, prompt: parse_marked(raw, prompt), state,
                        retry_failed)


def run_distortions(project: "Project", run_id: int, backend: Backend, item_ids: Sequence[int], state: TaskState,
                    *, retry_failed: bool = False) -> JobReport:
    summaries = summaries_of(project, get_run(project, run_id).config.summary_run)
    texts = {i: ("summary", summaries[i]) for i in item_ids if i in summaries}
    return run_on_texts(project, run_id, backend, texts,
                        lambda i, raw, prompt: parse_distorted(raw, prompt, summaries[i]), state, retry_failed)


def collect_pairs(project: "Project", summary_run: int, distort_run: int, item_ids: Sequence[int]) -> int:
    """Give each item its two summaries (re-parsed from the raw answers); returns how many are ready."""
    summaries = summaries_of(project, summary_run)
    distorted = distortions_of(project, distort_run, summaries)
    ready = 0
    for item_id in item_ids:
        pair = {"true": summaries.get(item_id), "distorted": distorted.get(item_id)}
        both = bool(pair["true"] and pair["distorted"])
        set_choices(project, item_id, pair if both else None)
        ready += both
    return ready


def summarize_task(
    project: "Project",
    task: "Task | str | int",
    backend: Backend,
    *,
    model_label: str,
    book_ids: Sequence[int],
    model_id: int | None = None,
    per_book: int = 10,
    seed: int | None = None,
    chars: int = SCENE_CHARS,
    context_chars: int = SCENE_CONTEXT_CHARS,
    summary_params: GenerationParams = SUMMARY_PARAMS,
    distort_params: GenerationParams = DISTORT_PARAMS,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    summary_template: str = SUMMARY_TEMPLATE,
    distort_template: str = DISTORT_TEMPLATE,
    state: TaskState | None = None,
) -> SummaryReport:
    """Sample scenes from ``book_ids`` into a summary-validity task, summarize them with ``backend``, then
    distort each summary; items with both become ready to annotate. Running it again continues.

    The prompts are the latest versions of the named templates in the project's template store (the
    shipped ones unless someone saved an edited version); each run records the exact version it used."""
    task = get_task(project, task)
    if task.kind != SUMMARY_VALIDITY:
        raise UserError(f"'{task.name}' is a {task.kind} task; summaries are made for summary-validity tasks.")
    if max_attempts < 1:
        raise UserError("Allow at least one attempt per scene.")
    state = state or TaskState()
    seed = task.seed if seed is None else seed
    item_ids = add_book_scenes(project, task, book_ids, model=model_label, per_book=per_book, seed=seed,
                               chars=chars, context_chars=context_chars)
    if not item_ids:
        raise UserError("No scenes could be cut from these books (they may be too short or have no prose).")
    config = SummaryConfig(annotation_task=task.id, model=model_label, max_attempts=max_attempts)

    template = get_template(project, summary_template, kind=SUMMARY_TEMPLATE)
    params = replace(summary_params, seed=summary_params.seed if summary_params.seed is not None else seed)
    summary_run = _run_for(project, SUMMARY_RUN, model_id, template.id, params, config)
    run_summaries(project, summary_run, backend, item_ids, state)

    template = get_template(project, distort_template, kind=DISTORT_TEMPLATE)
    params = replace(distort_params, seed=distort_params.seed if distort_params.seed is not None else seed)
    distort_run = _run_for(project, DISTORT_RUN, model_id, template.id, params,
                           DistortConfig(**config_dict(config), summary_run=summary_run))
    run_distortions(project, distort_run, backend, item_ids, state)

    ready = collect_pairs(project, summary_run, distort_run, item_ids)
    summaries = summaries_of(project, summary_run)
    return SummaryReport(items=len(item_ids), summaries_ok=len(summaries),
                         summaries_failed=run_counts(project, summary_run)["failed"],
                         distorted_ok=len(distortions_of(project, distort_run, summaries)),
                         distorted_failed=run_counts(project, distort_run)["failed"], ready=ready,
                         summary_run=summary_run, distort_run=distort_run)


def resume(project: "Project", run_id: int, state: TaskState, retry_failed: bool) -> JobReport:
    """Continue a ``summary`` or ``summary-distort`` run (Jobs page, ``palimpsest continue``), then give
    the items whatever pairs of summaries now exist."""
    from workbench.models.catalog import get_model, open_backend

    run = get_run(project, run_id)
    if run.model_id is None:
        raise UserError(f"Run {run_id} was made with a model that is not in the project; start it again from "
                        "'palimpsest annotate summarize'.")
    item_ids = scene_items(project, run.config.annotation_task, run.config.model)
    spec = get_model(project, run.model_id)
    with open_backend(spec, project) as backend:
        if run.kind == SUMMARY_RUN:
            report = run_summaries(project, run_id, backend, item_ids, state, retry_failed=retry_failed)
            pairs = [(run_id, r.id) for r in follow_ups(project, run, DISTORT_RUN)]
            # summaries that succeed only now still need their distorted versions
            for _, distort_run in pairs:
                if not state.cancelled:
                    run_distortions(project, distort_run, backend, item_ids, state)
        else:
            report = run_distortions(project, run_id, backend, item_ids, state, retry_failed=retry_failed)
            pairs = [(run.config.summary_run, run_id)]
    for summary_run, distort_run in pairs:
        collect_pairs(project, summary_run, distort_run, item_ids)
    return report


def _units(project: "Project", run: Run[SummaryConfig]) -> list[Unit]:
    """The scenes of the run's task cut for its model (a distortion run's: those with a usable summary)."""
    items = scene_items(project, run.config.annotation_task, run.config.model)
    if isinstance(run.config, DistortConfig):
        summaries = summaries_of(project, run.config.summary_run)
        items = [i for i in items if i in summaries]
    return [Unit(i) for i in items]


SUMMARY_RUN = declare_run_kind(RunKind("summary", "scene summaries", "scene", config=SummaryConfig, resume=resume,
                                       units=_units))
DISTORT_RUN = declare_run_kind(RunKind("summary-distort", "distorted summaries", "summary", config=DistortConfig,
                                       resume=resume, units=_units, follows="summary_run"))


def _request(backend: Backend, text: str, params: GenerationParams, attempt: int) -> Request:
    """Chat models get the prompt as a user turn; base models get it primed with the marker."""
    if not backend.is_chat:
        text = f"{text.rstrip()}\n{MARKER}\n"
    return prompt_request(backend, text, params, sample=attempt)
