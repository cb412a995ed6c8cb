"""Asking a model the questions of a question set, through the one job runner (run kind ``reading-answer``).

One run per question set, model and settings; ``responses.item_id`` is the question's id. Read-along
questions go out with the ``reading-choice`` template and the choice parameters (greedy, a few tokens),
reconstruction questions with ``reading-reconstruct`` or ``reading-reconstruct-passage`` and the
reconstruction parameters. Every raw reply is stored; parsing and scoring happen when results are read.

**How much book.** A read-along prompt holds the variant's text up to the checkpoint. With
``context_words`` it holds at most that many words (cut from the start). Without it, a model whose context
is known (``fitting.model_context``: a local model's own, a server model's ``n_ctx`` parameter or what its
server reports) gets what fits, counted with its own tokenizer or its server's where there is one
(``fitting``); an API model, whose context cannot be known here, gets the whole text so far
(``context_note`` says so before a run).

**Refused before any call.** Where the context is known, every prompt of the run is built and counted
before the first question is sent (``fitting.check_questions``), and a run some of whose prompts cannot
fit is refused, saying what fits (the most words of the book, the summary levels, ...). Each response
records, in ``extra``, the words given (``context_words``), where they start (``context_start_char``) and
whether the text was cut.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from workbench.errors import UserError
from workbench.export.methods import number
from workbench.jobs import JobReport, Outcome, Unit, run_job
from workbench.models.base import GenerationParams, Request, prompt_request
from workbench.models.calls import generation_process
from workbench.probes.reading.asking import (
    CHOICE_TEMPLATE,
    PASSAGE_TEMPLATE,
    RECONSTRUCT_TEMPLATE,
    BookText,
    choice_prompt,
    passage_of,
    reconstruct_prompt,
)
from workbench.probes.reading.fitting import TOKENS_PER_WORD, Fit, check_questions, fit_for, fitting_choice
from workbench.probes.reading.questions import QuestionSet, get_question_set, latest_question_sets, load_questions
from workbench.progress import TaskState
from workbench.prompt_templates import get_template, template_by_id
from workbench.runs import Run, RunKind, declare_run_kind, find_or_create_run, get_run, runs

if TYPE_CHECKING:
    from workbench.models.base import Backend
    from workbench.models.catalog import ModelSpec
    from workbench.models.prices import CostEstimate
    from workbench.project import Project

CHOICE_PARAMS = GenerationParams(temperature=0.0, max_tokens=8, seed=0)
RECONSTRUCT_PARAMS = GenerationParams(temperature=0.0, max_tokens=300, seed=0)


@dataclass(frozen=True)
class AnswerConfig:
    """An answer run's config: the question set (its book and variant), the most words of book a read-along
    prompt shows (None: what fits the model), and the ids of the templates for each kind of prompt."""

    question_set: int | None = None
    book_id: int | None = None
    variant: str = "original"
    context_words: int | None = None
    templates: Mapping[str, int] = field(default_factory=dict)


def variant_text(project: "Project", question_set: QuestionSet) -> str:
    """The book's text as the question set's variant has it (names replaced for 'substituted')."""
    from workbench.corpus.library import book_text
    from workbench.probes.reading.substitution import require_substitution

    if question_set.book_id is None:
        raise UserError(f"Question set {question_set.id} is not tied to a book of the library, so there is no "
                        "text to show the model. Import it again with --book.")
    text = book_text(project, question_set.book_id)
    if question_set.variant == "substituted":
        text = require_substitution(project, question_set.book_id).apply(text)
    return text


def context_note(spec: "ModelSpec", setting: str) -> str:
    """What a person should know about how much book a model will be shown when no limit is given: nothing
    for a local model or a server model whose ``n_ctx`` is given (it gets what fits its context), for any
    other API model a plain warning that says to set ``setting`` (the command's option, the page's field)."""
    from workbench.models.prices import LOCAL_BACKENDS

    if spec.backend in LOCAL_BACKENDS or spec.backend == "external":  # an API's context is unknown, paid or free
        return ""
    if spec.params.get("n_ctx"):
        return ""
    return (f"How much text '{spec.label}' reads at once is not known here, so each question shows the whole "
            "book up to its checkpoint, and questions late in a long book may not fit (they fail, and are stored "
            f"as failures). Set {setting} to about the model's context, in words, or give the model its context "
            "in tokens as n_ctx (Models page) so that the book is cut to fit and every prompt is checked before "
            "anything is sent.")


def _templates(project: "Project", ids: dict[str, int]) -> dict:
    return {kind: template_by_id(project, tid) for kind, tid in ids.items()}


def _check(project: "Project", question_set: QuestionSet, backend: "Backend", label: str, templates: dict[str, int],
           params: dict, limit: int | None) -> Fit:
    """What the model reads at once, and the run refused (nothing sent) if a prompt of it cannot fit."""
    fit = fit_for(backend)
    if fit.context is None:
        return fit
    try:
        check_questions(backend, fit, label, load_questions(project, question_set.id),
                        BookText(variant_text(project, question_set)), _templates(project, templates),
                        GenerationParams.from_dict(params["choice"]), GenerationParams.from_dict(params["reconstruct"]),
                        limit)
    except UserError as exc:
        from workbench.corpus.library import get_book

        book = get_book(project, question_set.book_id)
        name = book.title or book.external_id or f"book {question_set.book_id}"
        raise UserError(f"The questions on {name} ({question_set.variant} text) do not all fit '{label}'. {exc}") from None
    return fit


def _process(project: "Project", run: Run[AnswerConfig], backend: "Backend", fit: Fit):
    """The run's job process and units: one request per question, with the context record in ``extra``."""
    config = run.config
    question_set = get_question_set(project, config.question_set)
    questions = {q.id: q for q in load_questions(project, question_set.id)}
    book = BookText(variant_text(project, question_set))
    templates = _templates(project, dict(config.templates))
    choice = GenerationParams.from_dict(run.params["choice"])
    rebuild = GenerationParams.from_dict(run.params["reconstruct"])
    limit = config.context_words
    given: dict[int, dict[str, Any]] = {}

    def build(unit: Unit) -> Request:
        question = questions[unit.item_id]
        if question.read_along:
            if limit is None and fit.context is not None:
                request, context = fitting_choice(backend, fit, book, templates["choice"], question, choice)
            else:
                context = book.before(question.checkpoint_char, limit)
                request = prompt_request(backend, choice_prompt(templates["choice"], question, context), choice)
            given[unit.item_id] = {"context_words": context.words, "context_start_char": context.start_char,
                                   "truncated": context.truncated}
            return request
        passage = passage_of(question, book.text)
        template = templates["reconstruct-passage" if passage is not None else "reconstruct"]
        return prompt_request(backend, reconstruct_prompt(template, question, passage), rebuild)

    send = generation_process(backend, build)

    def process(units: Sequence[Unit], state: TaskState) -> Iterable[tuple[Unit, Outcome]]:
        for unit, outcome in send(units, state):
            if unit.item_id in given:
                outcome.extra = {**(outcome.extra or {}), **given.pop(unit.item_id)}
            yield unit, outcome

    return process, [Unit(i) for i in questions]


def execute(project: "Project", run_id: int, backend: "Backend", fit: Fit, state: TaskState | None = None, *,
            retry_failed: bool = False) -> JobReport:
    """Ask the run's questions; ``fit``: the model's room as ``_check`` found it before."""
    run = get_run(project, run_id)
    process, units = _process(project, run, backend, fit)
    return run_job(project, run_id, units, process, state, retry_failed=retry_failed)


def _run_settings(project: "Project", question_set: QuestionSet, context_words: int | None,
                  choice_params: GenerationParams, reconstruct_params: GenerationParams
                  ) -> tuple[dict, AnswerConfig, dict]:
    """The templates, config and parameters of the run that asks ``question_set``."""
    if context_words is not None and context_words < 0:
        raise UserError("The number of words of book to show cannot be negative.")
    templates = {"choice": get_template(project, CHOICE_TEMPLATE, kind=CHOICE_TEMPLATE).id,
                 "reconstruct": get_template(project, RECONSTRUCT_TEMPLATE, kind=RECONSTRUCT_TEMPLATE).id,
                 "reconstruct-passage": get_template(project, PASSAGE_TEMPLATE, kind=PASSAGE_TEMPLATE).id}
    config = AnswerConfig(question_set=question_set.id, book_id=question_set.book_id, variant=question_set.variant,
                          context_words=context_words, templates=templates)
    params = {"choice": choice_params.as_dict(), "reconstruct": reconstruct_params.as_dict()}
    return templates, config, params


def check_set(project: "Project", question_set: QuestionSet, spec: "ModelSpec", backend: "Backend", *,
              context_words: int | None = None, choice_params: GenerationParams = CHOICE_PARAMS,
              reconstruct_params: GenerationParams = RECONSTRUCT_PARAMS) -> Fit:
    """What the model reads at once, having refused (``UserError``, nothing sent) a question set some of whose
    prompts cannot fit it."""
    templates, _, params = _run_settings(project, question_set, context_words, choice_params, reconstruct_params)
    return _check(project, question_set, backend, spec.label, templates, params, context_words)


def run_set(project: "Project", question_set: QuestionSet, spec: "ModelSpec", backend: "Backend", *,
            context_words: int | None = None, choice_params: GenerationParams = CHOICE_PARAMS,
            reconstruct_params: GenerationParams = RECONSTRUCT_PARAMS, state: TaskState | None = None,
            retry_failed: bool = False, fit: Fit | None = None) -> JobReport:
    """Ask one question set (continuing the run with the same settings, if there is one); ``fit``: what
    ``check_set`` found (checked here when not given)."""
    templates, config, params = _run_settings(project, question_set, context_words, choice_params, reconstruct_params)
    if fit is None:
        fit = _check(project, question_set, backend, spec.label, templates, params, context_words)
    run_id = find_or_create_run(project, ANSWER_RUN, model_id=spec.id, template_id=templates["choice"], params=params,
                                config=config)
    return execute(project, run_id, backend, fit, state, retry_failed=retry_failed)


def run_questions(project: "Project", model: "str | ModelSpec", *, variant: str = "original",
                  book_ids: Sequence[int] | None = None, context_words: int | None = None,
                  choice_params: dict[str, Any] | None = None, reconstruct_params: dict[str, Any] | None = None,
                  state: TaskState | None = None, retry_failed: bool = False,
                  backend: "Backend | None" = None) -> list[JobReport]:
    """Ask ``model`` every question of the newest question set of each book (of ``book_ids``, if given)
    in the ``variant``; one report per question set. ``choice_params`` / ``reconstruct_params`` change
    the generation parameters (``{"max_tokens": 4}``, a ``logit_bias`` ...)."""
    from workbench.models.catalog import open_backend, runnable_model

    spec = runnable_model(project, model, "answer questions")
    sets = latest_question_sets(project, variant=variant, book_ids=book_ids)
    if not sets:
        raise UserError(f"There are no {variant} questions yet. Build them with 'palimpsest reading questions'"
                        + (" --variant substituted." if variant == "substituted" else "."))
    choice = GenerationParams.from_dict({**CHOICE_PARAMS.as_dict(), **(choice_params or {})})
    rebuild = GenerationParams.from_dict({**RECONSTRUCT_PARAMS.as_dict(), **(reconstruct_params or {})})
    opened = contextlib.nullcontext(backend) if backend is not None else open_backend(spec, project)
    reports = []
    with opened as live:
        # every book's questions are checked before any is asked: a run that cannot fit sends nothing
        fits = [check_set(project, question_set, spec, live, context_words=context_words, choice_params=choice,
                          reconstruct_params=rebuild) for question_set in sets]
        for question_set, fit in zip(sets, fits):
            if state is not None and state.cancelled:
                break
            reports.append(run_set(project, question_set, spec, live, context_words=context_words,
                                   choice_params=choice, reconstruct_params=rebuild, state=state,
                                   retry_failed=retry_failed, fit=fit))
    return reports


def estimate_questions_cost(project: "Project", model: "str | ModelSpec", *, variant: str = "original",
                            book_ids: Sequence[int] | None = None, context_words: int | None = None,
                            choice_params: dict[str, Any] | None = None,
                            reconstruct_params: dict[str, Any] | None = None) -> "CostEstimate":
    """Requests, tokens and the most that asking the questions still unanswered can cost. A read-along
    prompt counts the book before its checkpoint (at most ``context_words`` words) at ``TOKENS_PER_WORD``,
    the rest of it as the template renders it; every answer as long as allowed."""
    from workbench.models.catalog import ModelSpec, get_model
    from workbench.models.prices import CostEstimate, costs_nothing, price_for, rough_token_count

    spec = model if isinstance(model, ModelSpec) else get_model(project, model)
    choice = GenerationParams.from_dict({**CHOICE_PARAMS.as_dict(), **(choice_params or {})})
    rebuild = GenerationParams.from_dict({**RECONSTRUCT_PARAMS.as_dict(), **(reconstruct_params or {})})
    templates = {kind: get_template(project, name, kind=name) for kind, name in
                 (("choice", CHOICE_TEMPLATE), ("reconstruct", RECONSTRUCT_TEMPLATE), ("passage", PASSAGE_TEMPLATE))}
    answered = _answered(project, spec)
    requests = prompt_tokens = completion_tokens = 0
    for question_set in latest_question_sets(project, variant=variant, book_ids=book_ids):
        for question in load_questions(project, question_set.id):
            if (question_set.id, question.id) in answered:
                continue
            requests += 1
            if question.read_along:
                words = question.checkpoint_word or 0
                words = words if context_words is None else min(words, context_words)
                bare = choice_prompt(templates["choice"], question, BookText("").before(0))
                prompt_tokens += rough_token_count(bare) + int(words * TOKENS_PER_WORD)
                completion_tokens += choice.max_tokens
            else:
                passage = question.body.get("passage_end", 0) - question.body.get("passage_start", 0)
                template = templates["passage" if passage else "reconstruct"]
                prompt_tokens += rough_token_count(reconstruct_prompt(template, question, "" if passage else None))
                prompt_tokens += int(passage / 5 * TOKENS_PER_WORD)  # about five characters a word
                completion_tokens += rebuild.max_tokens
    local = costs_nothing(spec)
    return CostEstimate(requests, prompt_tokens, completion_tokens, None if local else price_for(project, spec.ref),
                        local)


def _answered(project: "Project", spec: "ModelSpec") -> set[tuple[int, int]]:
    """(question set, question) pairs the model has an answer for, in any of its runs."""
    answered: set[tuple[int, int]] = set()
    for run in runs(project, ANSWER_RUN, model_id=spec.id):  # each run's config once, never once per answer
        rows = project.db.execute("SELECT item_id FROM responses WHERE run_id = ? AND status = 'ok'", [run.id])
        answered.update((run.config.question_set, item) for (item,) in rows.fetchall())
    return answered


def resume(project: "Project", run_id: int, state: TaskState, retry_failed: bool) -> JobReport:
    """Continue a ``reading-answer`` run (Jobs page, ``palimpsest continue``)."""
    from workbench.models.catalog import get_model, open_backend

    run = get_run(project, run_id)
    if run.model_id is None:
        raise UserError(f"Run {run_id} was made with a model that is no longer in the project.")
    spec = get_model(project, run.model_id)
    with open_backend(spec, project) as backend:
        config = run.config
        fit = _check(project, get_question_set(project, config.question_set), backend, spec.label,
                     dict(config.templates), run.params, config.context_words)
        return execute(project, run_id, backend, fit, state, retry_failed=retry_failed)


def _units(project: "Project", run: Run[AnswerConfig]) -> list[Unit]:
    """One unit per question of the run's question set."""
    return [Unit(q.id) for q in load_questions(project, run.config.question_set)]


def _answer_generation(record: dict) -> str:
    """The methods text's Generation line: a run has the choices' settings and the reconstructions'."""
    params = record["generation"]
    choice, rebuild = params.get("choice") or {}, params.get("reconstruct") or {}
    if not choice:
        return "not recorded (imported results)"
    line = (f"choices: temperature {number(choice.get('temperature'))}, at most {choice.get('max_tokens')} new tokens"
            + (f", logit bias on {len(choice['logit_bias'])} token(s)" if choice.get("logit_bias") else "")
            + f"; reconstructions: temperature {number(rebuild.get('temperature'))}, at most "
              f"{rebuild.get('max_tokens')} new tokens; seed {choice.get('seed')}; one sample per question")
    return line


ANSWER_RUN = declare_run_kind(RunKind("reading-answer", "reading questions answered", "question",
                                      generation=_answer_generation, config=AnswerConfig, resume=resume,
                                      units=_units))
