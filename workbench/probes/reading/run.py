"""Asking a model the questions of a question set, through the one job runner (run kind ``reading-answer``).

One run per question set, model and settings; ``responses.item_id`` is the question's id. Read-along
questions go out with the ``reading-choice`` template and the choice parameters (greedy, a few tokens),
reconstruction questions with ``reading-reconstruct`` or ``reading-reconstruct-passage`` and the
reconstruction parameters. Every raw reply is stored; parsing and scoring happen when results are read.

**How much book.** A read-along prompt holds the variant's text up to the checkpoint. With
``context_words`` it holds at most that many words (cut from the start). Without it, a local model gets
what fits its context (``Backend.context_tokens``: llama.cpp's ``n_ctx``, a transformers model's
positions or its tokenizer's limit), less the answer and a margin: a first guess at ``TOKENS_PER_WORD``,
then, counted with the model's own tokenizer (``Backend.request_tokens``), cut further until it fits
(``_fitting_choice``); an API model, whose context cannot be known here, gets the whole text so far (``context_note`` says so
before a run). A prompt that does not fit is stored as a failure, and the report says to give
``context_words``. Each response records, in ``extra``, the words given (``context_words``), where they
start (``context_start_char``) and whether the text was cut.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from workbench.errors import UserError
from workbench.jobs import JobReport, Outcome, Unit, find_or_create_run, get_run, register_resumer, run_job
from workbench.models.base import GenerationParams, Request, prompt_request
from workbench.models.calls import generation_process
from workbench.probes.reading.asking import (
    CHOICE_TEMPLATE,
    PASSAGE_TEMPLATE,
    RECONSTRUCT_TEMPLATE,
    BookText,
    Context,
    choice_prompt,
    passage_of,
    reconstruct_prompt,
)
from workbench.probes.reading.questions import QuestionSet, get_question_set, latest_question_sets, load_questions
from workbench.progress import TaskState
from workbench.prompt_templates import get_template, template_by_id

if TYPE_CHECKING:
    from workbench.models.base import Backend
    from workbench.models.prices import CostEstimate
    from workbench.models.registry import ModelSpec
    from workbench.project import Project

ANSWER_RUN = "reading-answer"
CHOICE_PARAMS = GenerationParams(temperature=0.0, max_tokens=8, seed=0)
RECONSTRUCT_PARAMS = GenerationParams(temperature=0.0, max_tokens=300, seed=0)
TOKENS_PER_WORD = 1.4
CONTEXT_MARGIN_TOKENS = 32
FIT_ROUNDS, FIT_SHRINK = 4, 0.95  # tries at cutting the book to fit, and how much more than in proportion


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


def _fitting_choice(backend: "Backend", context_tokens: int, book: BookText, template, question,
                    params: GenerationParams) -> tuple[Request, "Context"]:
    """A read-along request with as much of the book before the checkpoint as fits ``context_tokens`` beside
    the question and the answer. The first cut guesses ``TOKENS_PER_WORD``; a model that can count a prompt's
    tokens then has the cut shortened in proportion until the prompt fits (a small model's tokenizer may need
    several tokens a word). A prompt that still does not fit is sent and fails, and is stored as a failure."""
    from workbench.models.prices import rough_token_count

    room = context_tokens - params.max_tokens - CONTEXT_MARGIN_TOKENS
    bare = choice_prompt(template, question, book.before(0))
    fixed = backend.request_tokens(prompt_request(backend, bare, params))
    words = max(0, int((room - (fixed if fixed is not None else rough_token_count(bare))) / TOKENS_PER_WORD))
    for _ in range(FIT_ROUNDS):
        context = book.before(question.checkpoint_char, words)
        request = prompt_request(backend, choice_prompt(template, question, context), params)
        used = backend.request_tokens(request) if fixed is not None else None
        if used is None or used <= room or context.words == 0:
            break
        words = int(context.words * max(0, room - fixed) / max(1, used - fixed) * FIT_SHRINK)
    return request, context


def context_note(spec: "ModelSpec", setting: str) -> str:
    """What a person should know about how much book a model will be shown when no limit is given: nothing
    for a local model (it gets what fits its context), for an API model a plain warning that says to set
    ``setting`` (the command's option, the page's field)."""
    from workbench.models.prices import LOCAL_BACKENDS

    if spec.backend in LOCAL_BACKENDS or spec.backend == "external":  # an API's context is unknown, paid or free
        return ""
    return (f"How much text '{spec.label}' reads at once is not known here, so each question shows the whole "
            "book up to its checkpoint, and questions late in a long book may not fit (they fail, and are stored "
            f"as failures). Set {setting} to about the model's context, in words.")


def _process(project: "Project", run: dict, backend: "Backend"):
    """The run's job process and units: one request per question, with the context record in ``extra``."""
    config = run["config"]
    question_set = get_question_set(project, config["question_set"])
    questions = {q.id: q for q in load_questions(project, question_set.id)}
    book = BookText(variant_text(project, question_set))
    templates = {kind: template_by_id(project, tid) for kind, tid in config["templates"].items()}
    choice = GenerationParams.from_dict(run["params"]["choice"])
    rebuild = GenerationParams.from_dict(run["params"]["reconstruct"])
    limit = config.get("context_words")
    context_tokens = backend.context_tokens if limit is None else None
    given: dict[int, dict[str, Any]] = {}

    def build(unit: Unit) -> Request:
        question = questions[unit.item_id]
        if question.read_along:
            if context_tokens:
                request, context = _fitting_choice(backend, context_tokens, book, templates["choice"], question,
                                                   choice)
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


def execute(project: "Project", run_id: int, backend: "Backend", state: TaskState | None = None, *,
            retry_failed: bool = False) -> JobReport:
    process, units = _process(project, get_run(project, run_id), backend)
    return run_job(project, run_id, units, process, state, retry_failed=retry_failed)


def run_set(project: "Project", question_set: QuestionSet, spec: "ModelSpec", backend: "Backend", *,
            context_words: int | None = None, choice_params: GenerationParams = CHOICE_PARAMS,
            reconstruct_params: GenerationParams = RECONSTRUCT_PARAMS, state: TaskState | None = None,
            retry_failed: bool = False) -> JobReport:
    """Ask one question set (continuing the run with the same settings, if there is one)."""
    if context_words is not None and context_words < 0:
        raise UserError("The number of words of book to show cannot be negative.")
    templates = {"choice": get_template(project, CHOICE_TEMPLATE, kind=CHOICE_TEMPLATE).id,
                 "reconstruct": get_template(project, RECONSTRUCT_TEMPLATE, kind=RECONSTRUCT_TEMPLATE).id,
                 "reconstruct-passage": get_template(project, PASSAGE_TEMPLATE, kind=PASSAGE_TEMPLATE).id}
    config = {"question_set": question_set.id, "book_id": question_set.book_id, "variant": question_set.variant,
              "context_words": context_words, "templates": templates}
    params = {"choice": choice_params.as_dict(), "reconstruct": reconstruct_params.as_dict()}
    run_id = find_or_create_run(project, ANSWER_RUN, model_id=spec.id, template_id=templates["choice"], params=params,
                                config=config)
    return execute(project, run_id, backend, state, retry_failed=retry_failed)


def run_questions(project: "Project", model: "str | ModelSpec", *, variant: str = "original",
                  book_ids: Sequence[int] | None = None, context_words: int | None = None,
                  choice_params: dict[str, Any] | None = None, reconstruct_params: dict[str, Any] | None = None,
                  state: TaskState | None = None, retry_failed: bool = False,
                  backend: "Backend | None" = None) -> list[JobReport]:
    """Ask ``model`` every question of the newest question set of each book (of ``book_ids``, if given)
    in the ``variant``; one report per question set. ``choice_params`` / ``reconstruct_params`` change
    the generation parameters (``{"max_tokens": 4}``, a ``logit_bias`` ...)."""
    from workbench.models.registry import open_backend, runnable_model

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
        for question_set in sets:
            if state is not None and state.cancelled:
                break
            reports.append(run_set(project, question_set, spec, live, context_words=context_words,
                                   choice_params=choice, reconstruct_params=rebuild, state=state,
                                   retry_failed=retry_failed))
    return reports


def estimate_questions_cost(project: "Project", model: "str | ModelSpec", *, variant: str = "original",
                            book_ids: Sequence[int] | None = None, context_words: int | None = None,
                            choice_params: dict[str, Any] | None = None,
                            reconstruct_params: dict[str, Any] | None = None) -> "CostEstimate":
    """Requests, tokens and the most that asking the questions still unanswered can cost. A read-along
    prompt counts the book before its checkpoint (at most ``context_words`` words) at ``TOKENS_PER_WORD``,
    the rest of it as the template renders it; every answer as long as allowed."""
    from workbench.models.prices import CostEstimate, costs_nothing, price_for, rough_token_count
    from workbench.models.registry import ModelSpec, get_model

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
    runs = project.db.execute("SELECT id, json_extract(config, '$.question_set') FROM runs WHERE kind = ? AND model_id = ?",
                              [ANSWER_RUN, spec.id]).fetchall()  # each run's config once, never once per answer
    answered: set[tuple[int, int]] = set()
    for run_id, question_set in runs:
        rows = project.db.execute("SELECT item_id FROM responses WHERE run_id = ? AND status = 'ok'", [run_id])
        answered.update((question_set, item) for (item,) in rows.fetchall())
    return answered


def resume(project: "Project", run_id: int, state: TaskState, retry_failed: bool) -> JobReport:
    """Continue a ``reading-answer`` run (Jobs page, ``palimpsest continue``)."""
    from workbench.models.registry import get_model, open_backend

    run = get_run(project, run_id)
    if run["model_id"] is None:
        raise UserError(f"Run {run_id} was made with a model that is no longer in the project.")
    with open_backend(get_model(project, run["model_id"]), project) as backend:
        return execute(project, run_id, backend, state, retry_failed=retry_failed)


register_resumer(ANSWER_RUN, resume)
