"""Continuation runs on any registered model, through the one job runner (kind ``continuation``).

Each passage's prefix goes to the model once, greedy (temperature 0), and the raw answer is stored as it came,
with its tokens (in the run's tokenization) in ``extra`` so that scoring needs neither the model nor its
tokenizer. Local models (transformers, GGUF) read the prefix as bare text and write at most N of their own
tokens; a transformers model does so in left-padded batches (``workbench.models.hf_backend``). An API model gets
the prefix as a completion prompt where it is registered as a completion (not chat) model; a chat model gets
``CHAT_PROMPT`` around it, and its answer is cut into words. Asking again for the same model, books and setting
continues the earlier run (``jobs.find_or_create_run``); answers already stored are kept and identical requests
come from the response cache.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Iterable, Sequence

from workbench.errors import UserError
from workbench.jobs import JobReport, Outcome, Unit, run_job
from workbench.models.base import GenerationParams, Request, prompt_request
from workbench.models.calls import generation_process, noting
from workbench.models.catalog import runnable_model
from workbench.probes.continuation.kinds import CHAT, CONTINUATION_KIND, RAW, ContinuationConfig
from workbench.probes.continuation.passages import Setting, ensure_passages, passage_ids, prefixes
from workbench.probes.continuation.tokens import Tokenizer, is_local, tokenizer_for
from workbench.progress import TaskState
from workbench.runs import Run, find_or_create_run, get_run

if TYPE_CHECKING:
    from workbench.models.base import Backend
    from workbench.models.catalog import ModelSpec
    from workbench.project import Project

DEFAULT_PREFIX_TOKENS = 50
DEFAULT_CONTINUE_TOKENS = 50
DEFAULT_PER_BOOK = 50
DEFAULT_SEED = 0
#: an API's tokens per word allowed for when N words are asked for (English runs ~1.3; the rest is slack)
API_TOKENS_PER_WORD = 2

#: the chat prompt (our own words) for a chat model; {words} is N, {prefix} the passage's beginning
CHAT_PROMPT = ("Below is the opening of a passage from a book. Go on with the text exactly as the book does, word "
               "for word, for about {words} words. Reply with the continuation only: no heading, no remarks, no "
               "quotation marks.\n\n{prefix}")


def generation_params(tokenizer: Tokenizer, continue_tokens: int) -> GenerationParams:
    max_tokens = continue_tokens if is_local(tokenizer) else math.ceil(continue_tokens * API_TOKENS_PER_WORD)
    return GenerationParams(temperature=0.0, max_tokens=int(max_tokens), seed=0)


def prompt_form(backend: "Backend", tokenizer: Tokenizer) -> str:
    return RAW if is_local(tokenizer) or not backend.is_chat else CHAT


def build_request(backend: "Backend", form: str, prefix: str, params: GenerationParams, words: int) -> Request:
    if form == CHAT:
        return prompt_request(backend, CHAT_PROMPT.format(words=words, prefix=prefix), params)
    return Request(prompt=prefix, params=params)


def all_books(project: "Project") -> list[int]:
    return [int(b) for (b,) in project.db.execute(
        "SELECT book_id FROM book_texts WHERE length(text) > 0 ORDER BY book_id").fetchall()]


def run_continuation(
    project: "Project",
    model: "str | int | ModelSpec",
    *,
    book_ids: Sequence[int] | None = None,
    per_book: int = DEFAULT_PER_BOOK,
    prefix_tokens: int = DEFAULT_PREFIX_TOKENS,
    continue_tokens: int = DEFAULT_CONTINUE_TOKENS,
    seed: int = DEFAULT_SEED,
    state: TaskState | None = None,
    retry_failed: bool = False,
    backend: "Backend | None" = None,
) -> JobReport:
    """Give ``model`` the first ``prefix_tokens`` tokens of ``per_book`` passages of each book (every book with a
    text when ``book_ids`` is None) and store its greedy continuation of ``continue_tokens`` tokens."""
    for name, value in (("passages per book", per_book), ("prefix tokens", prefix_tokens),
                        ("continuation tokens", continue_tokens)):
        if int(value) < 1:
            raise UserError(f"The number of {name} must be at least 1.")
    spec = runnable_model(project, model)
    books = [int(b) for b in book_ids] if book_ids else all_books(project)
    if not books:
        raise UserError("There are no books with a text to take passages from. Add books on the Library page.")
    state = state or TaskState()
    with _opened(project, spec, backend) as opened:
        tokenizer = tokenizer_for(opened)
        setting = Setting(tokenizer.name, int(seed), int(per_book), int(prefix_tokens), int(continue_tokens))
        ensure_passages(project, tokenizer, books, setting, state)
        ids = passage_ids(project, setting, books)
        if not ids:
            raise UserError("None of these books is long enough for a passage of this length. Choose longer books "
                            "or fewer prefix and continuation tokens.")
        config = ContinuationConfig(book_ids=tuple(sorted(books)), per_book=setting.per_book,
                                    prefix_tokens=setting.prefix_tokens, continue_tokens=setting.continue_tokens,
                                    seed=setting.seed, tokenizer=tokenizer.name,
                                    prompt_form=prompt_form(opened, tokenizer))
        params = generation_params(tokenizer, setting.continue_tokens)
        run_id = find_or_create_run(project, CONTINUATION_KIND, model_id=spec.id, params=params.as_dict(),
                                    config=config, total=len(ids))
        return _execute(project, run_id, opened, tokenizer, config, ids, params, state, retry_failed)


def _opened(project, spec, backend):
    import contextlib

    if backend is not None:
        return contextlib.nullcontext(backend)
    from workbench.models.catalog import open_backend

    return open_backend(spec, project)


def _execute(project, run_id, backend, tokenizer, config: ContinuationConfig, ids, params, state,
             retry_failed) -> JobReport:
    texts = prefixes(project, ids)

    def request(unit: Unit) -> Request:
        return build_request(backend, config.prompt_form, texts[unit.item_id], params, config.continue_tokens)

    process = tokenized(generation_process(backend, request), tokenizer)
    return run_job(project, run_id, [Unit(i) for i in ids], noting(process, backend), state,
                   retry_failed=retry_failed)


def tokenized(process, tokenizer: Tokenizer):
    """``process`` with each answer's tokens added to its ``extra`` (``tokens``) as it comes."""

    def with_tokens(units: Sequence[Unit], state: TaskState) -> Iterable[tuple[Unit, Outcome]]:
        for unit, outcome in process(units, state):
            if outcome.status == "ok":
                outcome.extra = {**(outcome.extra or {}), "tokens": tokenizer.encode(outcome.raw or "")}
            yield unit, outcome

    return with_tokens


def estimate(project: "Project", spec: "ModelSpec", book_ids: Sequence[int] | None, per_book: int,
             prefix_tokens: int, continue_tokens: int):
    """What a run will cost at most (an API: words counted as tokens, x ``API_TOKENS_PER_WORD`` for answers)."""
    from workbench.models.prices import estimate_cost

    books = list(book_ids) if book_ids else all_books(project)
    count = len(books) * int(per_book)
    prompt = " ".join(["word"] * int(prefix_tokens * API_TOKENS_PER_WORD))
    return estimate_cost(spec, [prompt] * count, int(continue_tokens * API_TOKENS_PER_WORD), project=project)


# ---------------------------------------------------------------------------- resuming from the Jobs page


def passage_units(project: "Project", run: Run) -> list[Unit]:
    config = run.config
    setting = Setting(config.tokenizer, config.seed, config.per_book, config.prefix_tokens, config.continue_tokens)
    return [Unit(i) for i in passage_ids(project, setting, config.book_ids)]


def resume_run(project: "Project", run_id: int, state: TaskState | None = None, retry_failed: bool = False) -> JobReport:
    """Continue (or retry the failures of) a ``continuation`` run with the model, books and setting it recorded."""
    from workbench.models.catalog import get_model, open_backend

    run = get_run(project, run_id)
    if run.model_id is None or not run.config.book_ids:
        raise UserError(f"Run {run_id} does not say which model and books it covers, so it cannot be continued.")
    spec = runnable_model(project, get_model(project, int(run.model_id)))
    config: ContinuationConfig = run.config
    with open_backend(spec, project) as backend:
        tokenizer = tokenizer_for(backend)
        if tokenizer.name != config.tokenizer:
            raise UserError(f"Run {run_id} cut its passages with another tokenizer than '{spec.label}' has now, so "
                            "it cannot be continued. Start a new run.")
        setting = Setting(config.tokenizer, config.seed, config.per_book, config.prefix_tokens, config.continue_tokens)
        ensure_passages(project, tokenizer, config.book_ids, setting, state)
        ids = passage_ids(project, setting, config.book_ids)
        params = GenerationParams.from_dict(run.params)
        return _execute(project, run_id, backend, tokenizer, config, ids, params, state or TaskState(), retry_failed)
