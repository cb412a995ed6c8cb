"""Whether the prompts of a run fit the model that reads them, known before any question is sent.

**What the model reads at once** (``model_context``), prompt and answer together: a local model's own
context (llama.cpp's ``n_ctx``, a transformers model's positions), a server model's ``n_ctx`` parameter
(what the server was started with, given on the Models page), else what the server says of itself where it
says it (llama.cpp's server: ``/props``; vLLM: ``max_model_len`` in ``/v1/models``). Where none of these
is known (an API, a server that does not say), nothing can be checked: ``run.context_note`` says so.

**How long a prompt is** (``TokenCounter``): counted with the model's own tokenizer (local models), else
with the server's where it offers one (llama-cpp-python's ``/extras/tokenize/count``, llama.cpp's and
vLLM's ``/tokenize``), else estimated on the safe side: ``rough_token_count`` (tiktoken's count, else
characters / 4) times ``ESTIMATE_SAFETY``. A chat counted without the chat template's own tokens gets
``CHAT_ALLOWANCE`` more a message; every prompt leaves room for the longest answer and
``CONTEXT_MARGIN_TOKENS`` to spare.

**Before a run** (``check_questions``), where the context is known, every prompt of the run is built and
counted, and the run is refused, with nothing sent, when

- with a word limit (``context_words``), a read-along prompt does not fit: the message names the longest
  prompt and the most words of the book that let every question fit;
- a read-along question does not fit even without the book (its options alone are too long);
- a reconstruction prompt does not fit (with the scene's text, or with the stretch of the book a
  hierarchical summary covers): the message says which questions to build instead.

Without a word limit each read-along prompt gets as much of the book before its checkpoint as fits
(``fitting_choice``): a first cut at ``TOKENS_PER_WORD``, then shortened in proportion, counted again,
until it fits.
"""

from __future__ import annotations

import http.client
import json
import math
import urllib.request
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

from workbench.errors import UserError
from workbench.models.base import GenerationParams, Request, prompt_request
from workbench.models.prompt_text import flatten_messages
from workbench.probes.reading.asking import BookText, Context, choice_prompt, passage_of, reconstruct_prompt
from workbench.probes.reading.questions import Question

if TYPE_CHECKING:
    from workbench.models.base import Backend
    from workbench.prompt_templates import Template

TOKENS_PER_WORD = 1.4  # a first guess at a book's tokens per word, before counting
CONTEXT_MARGIN_TOKENS = 32  # left free beside the prompt and the longest answer
FIT_ROUNDS, FIT_SHRINK = 4, 0.95  # tries at cutting the book to fit, and how much more than in proportion
ESTIMATE_SAFETY = 1.25  # an estimated count is taken this much longer
CHAT_ALLOWANCE = 16  # tokens a chat template may add per message, where the count leaves it out
SERVER_TIMEOUT = 10.0  # seconds to wait for a server's report or token count

#: (path under the server's root, request body) of the tokenizers OpenAI-compatible servers offer
_TOKENIZERS: tuple[tuple[str, Callable[[str, str], dict]], ...] = (
    ("/extras/tokenize/count", lambda text, model: {"input": text, "model": model}),  # llama-cpp-python
    ("/tokenize", lambda text, model: {"content": text, "add_special": True}),  # llama.cpp's server
    ("/tokenize", lambda text, model: {"model": model, "prompt": text}),  # vLLM
)


@dataclass(frozen=True)
class ModelContext:
    tokens: int  # what the model reads at once, prompt and answer together
    source: str  # where that number comes from, as words that follow it ("as its n_ctx setting says")


# ---------------------------------------------------------------------------------------------- servers
def _server(backend: "Backend") -> tuple[str, str, str] | None:
    """(root address, API address, model name) of a model on an OpenAI-compatible server at a given
    address; None for a local model and for OpenAI's own API."""
    base = getattr(backend, "base_url", None)
    if not isinstance(base, str) or not base.strip():
        return None
    api = base.strip().rstrip("/")
    root = api[: -len("/v1")] if api.endswith("/v1") else api
    return root, api, str(getattr(backend, "model_name", "") or "")


def _ask(url: str, body: dict | None = None) -> Any:
    """The JSON a server answers at ``url`` (a POST of ``body``, else a GET); None for anything else."""
    data = None if body is None else json.dumps(body).encode("utf-8")
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"} if data else {})
    try:
        with urllib.request.urlopen(request, timeout=SERVER_TIMEOUT) as answer:
            return json.load(answer)
    except (OSError, ValueError, http.client.HTTPException):  # refused, 404, timeout, not JSON
        return None


def _reported_context(root: str, api: str, model: str) -> int | None:
    props = _ask(f"{root}/props")
    if isinstance(props, dict):
        settings = props.get("default_generation_settings")
        for value in ((settings or {}).get("n_ctx") if isinstance(settings, dict) else None, props.get("n_ctx")):
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
    models = _ask(f"{api}/models")
    for entry in models.get("data") or [] if isinstance(models, dict) else []:
        if isinstance(entry, dict) and entry.get("id") == model:
            value = entry.get("max_model_len")
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
    return None


def model_context(backend: "Backend") -> ModelContext | None:
    """What the model reads at once, and where that is known from; None where it cannot be known."""
    server = _server(backend)
    tokens = backend.context_tokens
    if tokens:
        return ModelContext(int(tokens), "as its n_ctx setting says" if server or getattr(backend, "n_ctx", None)
                            else "as the model was opened")
    if server is None:
        return None
    reported = _reported_context(*server)
    return ModelContext(reported, "as the server reports") if reported else None


def _tokens_in(reply: Any) -> int | None:
    if not isinstance(reply, dict):
        return None
    if isinstance(reply.get("count"), int):
        return reply["count"]
    if isinstance(reply.get("tokens"), list):
        return len(reply["tokens"])
    return None


class TokenCounter:
    """How many tokens a request's prompt is for the model that reads it (see the module's description).
    ``how`` says how the last prompt was counted: "model", "server" or "estimate"."""

    def __init__(self, backend: "Backend"):
        self.backend = backend
        self.how = ""
        self._server = _server(backend)
        self._tokenizer: tuple[str, Callable[[str, str], dict]] | None = None  # the server's, once one answered
        self._looked = False

    def __call__(self, request: Request) -> int:
        counted = self.backend.request_tokens(request)
        if counted is not None:
            self.how = "model"
            return counted
        text = request.prompt if request.prompt is not None else flatten_messages(request.messages or ())
        allowance = CHAT_ALLOWANCE * (len(request.messages or ()) + 1) if request.is_chat else 0
        counted = self._server_count(text)
        if counted is not None:
            self.how = "server"
            return counted + allowance
        from workbench.models.prices import rough_token_count

        self.how = "estimate"
        return math.ceil(rough_token_count(text) * ESTIMATE_SAFETY) + allowance

    def _server_count(self, text: str) -> int | None:
        if self._server is None:
            return None
        root, _, model = self._server
        if self._tokenizer is not None:
            tries: Sequence = (self._tokenizer,)
        elif not self._looked:
            tries = _TOKENIZERS
        else:
            return None
        self._looked = True
        for path, body in tries:
            counted = _tokens_in(_ask(root + path, body(text, model)))
            if counted is not None:
                self._tokenizer = (path, body)
                return counted
        return None


@dataclass(frozen=True)
class Fit:
    """What a run knows about the model's room: its context (None: unknown) and how prompts are counted."""
    context: ModelContext | None
    counter: TokenCounter


def fit_for(backend: "Backend") -> Fit:
    return Fit(model_context(backend), TokenCounter(backend))


# ---------------------------------------------------------------------------------------------- fitting
def room_for(context: ModelContext, params: GenerationParams) -> int:
    """The longest prompt that leaves room for the answer and the margin."""
    return context.tokens - params.max_tokens - CONTEXT_MARGIN_TOKENS


def fitting_choice(backend: "Backend", fit: Fit, book: BookText, template: "Template", question: Question,
                   params: GenerationParams) -> tuple[Request, Context]:
    """A read-along request with as much of the book before the checkpoint as fits the model beside the
    question and the answer: a first cut at ``TOKENS_PER_WORD``, then, counted, shortened in proportion
    until the prompt fits (a small model's tokenizer may need several tokens a word)."""
    room = room_for(fit.context, params)
    fixed = fit.counter(prompt_request(backend, choice_prompt(template, question, book.before(0)), params))
    words = max(0, int((room - fixed) / TOKENS_PER_WORD))
    for _ in range(FIT_ROUNDS):
        context = book.before(question.checkpoint_char, words)
        request = prompt_request(backend, choice_prompt(template, question, context), params)
        used = fit.counter(request)
        if used <= room or context.words == 0:
            break
        words = int(context.words * max(0, room - fixed) / max(1, used - fixed) * FIT_SHRINK)
    return request, context


# ---------------------------------------------------------------------------------------------- checking
def _of(part: int, whole: int) -> str:
    return f"all {whole:,}" if part == whole else f"{part:,} of the {whole:,}"


def _room_phrase(label: str, context: ModelContext, params: GenerationParams, what: str) -> str:
    return (f"'{label}' has room for {room_for(context, params):,} ({context.tokens:,} tokens read at once, "
            f"{context.source}, less {params.max_tokens:,} for the {what} and {CONTEXT_MARGIN_TOKENS} to spare)")


def _round_down(words: int) -> int:
    step = 100 if words >= 1000 else 50 if words >= 100 else 10 if words >= 10 else 1
    return words // step * step


def _most_words(count_at: Callable[[int, int], int], read_along: Sequence[Question], over: Sequence[int],
                used: dict[int, tuple[int, int]], bare: dict[int, int], room: int) -> int:
    """The most words of the book before each question with which every read-along prompt fits: a guess from
    each failing prompt's tokens per word, checked by counting every prompt again, shortened until it fits."""
    guesses = []
    for i in over:
        tokens, given = used[i]
        per_word = max(1, tokens - bare[i]) / max(1, given)
        guesses.append(int((room - bare[i]) / per_word))
    words = _round_down(max(0, min(guesses)))
    for _ in range(FIT_ROUNDS):
        if words <= 0:
            return 0
        worst = max(range(len(read_along)), key=lambda i: count_at(i, words) - room)
        tokens = count_at(worst, words)
        if tokens <= room:
            return words
        shown = min(words, used[worst][1]) or 1
        per_word = max(1, tokens - bare[worst]) / shown
        words = _round_down(min(int(words * FIT_SHRINK), int((room - bare[worst]) / per_word)))
    return max(0, words)


def _read_along_problems(backend: "Backend", fit: Fit, label: str, questions: Sequence[Question], book: BookText,
                         template: "Template", params: GenerationParams, limit: int | None) -> list[str]:
    read_along = [q for q in questions if q.read_along]
    if not read_along:
        return []
    room = room_for(fit.context, params)
    counted: dict[tuple[int, int | None], int] = {}

    def count_at(i: int, words: int | None) -> int:
        if (i, words) not in counted:
            question = read_along[i]
            context = book.before(0) if words is None else book.before(question.checkpoint_char, words)
            counted[i, words] = fit.counter(prompt_request(backend, choice_prompt(template, question, context), params))
        return counted[i, words]

    bare = {i: count_at(i, None) for i in range(len(read_along))}
    worst = max(bare, key=bare.get)
    if bare[worst] > room:
        crowded = sum(1 for n in bare.values() if n > room)
        return [f"{_of(crowded, len(read_along)).capitalize()} read-along questions do not fit even without any of the "
                f"book: the longest, its instructions and options alone, is {bare[worst]:,} tokens, and "
                f"{_room_phrase(label, fit.context, params, 'answer')}. Build the questions again with fewer "
                "choices (--options; 'Choices' on the Reading page), or use a model that reads more at once."]
    if limit is None:
        return []  # each question gets the book that fits
    used = {i: (count_at(i, limit), book.before(q.checkpoint_char, limit).words) for i, q in enumerate(read_along)}
    over = [i for i, (tokens, _) in used.items() if tokens > room]
    if not over:
        return []
    longest = max(tokens for tokens, _ in used.values())
    words = _most_words(count_at, read_along, over, used, bare, room)
    head = (f"With {limit:,} words of the book, {_of(len(over), len(read_along))} read-along prompts do not "
            f"fit: the longest is {longest:,} tokens, and {_room_phrase(label, fit.context, params, 'answer')}.")
    if words <= 0:
        return [head + " There is room for the question but hardly any of the book: build the questions again with "
                       "fewer choices (--options; 'Choices' on the Reading page), or use a model that reads more at once."]
    return [head + f" Show at most {words:,} words of the book before each question (--context-words {words}; on the "
                   "Reading page, 'Words of book shown')."]


def _what(question: Question) -> str:
    level = int(question.body.get("level", 0))
    if "passage_start" not in question.body:
        return "without the text" + (f", level {level}" if level else "")
    if level:
        first, last = question.body.get("first_scene"), question.body.get("last_scene")
        return f"with the text of scenes {first}-{last}, a level-{level} summary"
    return "with the scene's text"


def _reconstruction_problems(backend: "Backend", fit: Fit, label: str, questions: Sequence[Question], book: BookText,
                             templates: dict[str, "Template"], params: GenerationParams) -> list[str]:
    rebuild = [q for q in questions if not q.read_along]
    if not rebuild:
        return []
    room = room_for(fit.context, params)
    sizes = []
    for question in rebuild:
        passage = passage_of(question, book.text)
        template = templates["reconstruct-passage" if passage is not None else "reconstruct"]
        sizes.append((fit.counter(prompt_request(backend, reconstruct_prompt(template, question, passage), params)),
                      question))
    over = [(tokens, q) for tokens, q in sizes if tokens > room]
    if not over:
        return []
    longest, question = max(over, key=lambda pair: pair[0])
    text = (f"{_of(len(over), len(rebuild)).capitalize()} reconstruction questions do not fit: the longest "
            f"({_what(question)}) is {longest:,} tokens, and {_room_phrase(label, fit.context, params, 'corrected summary')}.")
    levels = {int(q.body.get("level", 0)) for _, q in over}
    if min(levels) >= 1:
        top = min(levels) - 1
        return [text + f" Build the questions again with summary levels up to {top} only (--max-level {top}; "
                       "'Summary levels' on the Reading page), or use a model that reads more at once."]
    return [text + " Build the questions again from shorter scenes (palimpsest reading scenes --words N; 'Words per "
                   "scene' on the Reading page) or without reconstruction questions (--reconstruction 0), or use a "
                   "model that reads more at once."]


def check_questions(backend: "Backend", fit: Fit, label: str, questions: Sequence[Question], book: BookText,
                    templates: dict[str, "Template"], choice: GenerationParams, rebuild: GenerationParams,
                    limit: int | None) -> None:
    """Refuse (``UserError``, nothing sent) a run some of whose prompts cannot fit the model; nothing to check
    where its context is unknown. ``templates``: "choice", "reconstruct" and "reconstruct-passage"."""
    if fit.context is None:
        return
    problems = _read_along_problems(backend, fit, label, questions, book, templates["choice"], choice, limit)
    problems += _reconstruction_problems(backend, fit, label, questions, book, templates, rebuild)
    if problems:
        raise UserError(" ".join(problems) + " Nothing was sent.")
