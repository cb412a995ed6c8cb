"""Word-level surprisal of a text for reading-time studies (the leakage study's Study 2), run kind ``surprisal``.

The model reads the text once (``Backend.score_texts``, its start-of-text token first so that the first
word is scored too; a text longer than the model's context in half-overlapping windows). The run
stores each token's log-probability, its place in the text, and at every place the probability that
the next token begins a new word.

Words are the text's white-space separated words (as reading-time corpora count them); a token belongs
to the word that holds its first character that is not white space, and a token of white space only
(a line break) to the word after it. A word's surprisal in bits is

    -log2 P(word | before) = -(sum of its tokens' ln p + ln B(after) - ln B(before)) / ln 2

where B(place) is the probability that the token at that place begins a new word (a token with a
leading space, a line break, or the end of the text). This is the correction of Pimentel & Meister
(2024) and Oh & Schuler (2024) for tokenizers whose tokens carry their leading space: the probability
of a word then includes the white space after it, so the probabilities of all words that can follow a
context sum to one. Without it, "car" and "car pet" after "I sold the" could together be more likely
than certain. The first word of a text has no B(before) (nothing was read before it); tokenizers that
do not put spaces in front of words (the correction does not apply) get the plain sum, and the
``corrected`` column says which was used.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence

import pandas as pd

from workbench.errors import UserError
from workbench.jobs import JobReport, Outcome, Unit, find_or_create_run, get_run
from workbench.models.base import Failure
from workbench.probes.leakage import passages as passage_store
from workbench.probes.leakage.kinds import SURPRISAL_KIND as KIND
from workbench.probes.leakage.runs import open_model, responses, run_on_model
from workbench.progress import TaskState

if TYPE_CHECKING:
    from workbench.models.base import Backend
    from workbench.project import Project

COLUMNS = ["word", "position", "surprisal", "tokens", "pieces", "corrected"]
_WORD = re.compile(r"\S+")


def word_surprisal(text: str, raw: dict[str, Any], *, correct: bool | None = None) -> pd.DataFrame:
    """One row per white-space word of ``text``: position (from 1), surprisal in bits, its tokens.

    ``correct``: apply the leading-white-space correction (None: when the tokenizer puts spaces in front
    of words)."""
    offsets = [tuple(o) for o in raw["offsets"]]
    logprobs = raw["logprobs"]
    starts = raw["word_start"]
    words = [(m.start(), m.end(), m.group()) for m in _WORD.finditer(text)]
    owners = _token_owners(text, offsets, words)
    tokens_of: list[list[int]] = [[] for _ in words]
    for token, owner in enumerate(owners):
        if owner is not None:
            tokens_of[owner].append(token)
    if correct is None:
        correct = leading_space_tokenizer(text, offsets, tokens_of)
    rows = []
    for number, ((_, _, word), tokens) in enumerate(zip(words, tokens_of)):
        values = [logprobs[t] for t in tokens]
        if not tokens or any(v is None for v in values):
            surprisal = math.nan
        else:
            total = sum(values)
            if correct:
                after = starts[tokens[-1] + 1]
                total += math.log(after) if after and after > 0 else -math.inf
                if number > 0:
                    before = starts[tokens[0]]
                    total -= math.log(before) if before and before > 0 else -math.inf
            surprisal = -total / math.log(2)
        rows.append({"word": word, "position": number + 1, "surprisal": surprisal, "tokens": len(tokens),
                     "pieces": "|".join(text[offsets[t][0] : offsets[t][1]] for t in tokens), "corrected": bool(correct)})
    return pd.DataFrame(rows, columns=COLUMNS)


def _token_owners(text: str, offsets: Sequence[tuple[int, int]], words) -> list[int | None]:
    """The word (index) each token belongs to: the word holding its first non-space character; a token of
    white space only belongs to the next word."""
    word_starts = [w[0] for w in words]
    owners: list[int | None] = []
    import bisect

    for start, end in offsets:
        piece = text[start:end]
        stripped = len(piece) - len(piece.lstrip())
        if piece.strip():
            at = start + stripped
            owners.append(max(0, bisect.bisect_right(word_starts, at) - 1) if words else None)
        else:
            following = bisect.bisect_left(word_starts, end)
            owners.append(following if following < len(words) else (len(words) - 1 if words else None))
    return owners


def leading_space_tokenizer(text: str, offsets, tokens_of: list[list[int]]) -> bool:
    """Whether the words after the first start with a token that carries the white space before them."""
    firsts = [tokens[0] for tokens in tokens_of[1:] if tokens]
    if not firsts:
        return False
    led = sum(1 for t in firsts if text[offsets[t][0] : offsets[t][1]][:1].isspace())
    return led > len(firsts) / 2


# ---------------------------------------------------------------------------------------------- running
def scoring_process(backend: "Backend", texts: dict[int, str]):
    def process(units: Sequence[Unit], state: TaskState) -> Iterable[tuple[Unit, Outcome]]:
        for unit in units:
            state.check()
            result = backend.score_texts([texts[unit.item_id]], start_token=True, word_boundaries=True)[0]
            if isinstance(result, Failure):
                yield unit, Outcome.failure(result.error, extra={"failure_kind": result.kind})
                continue
            raw = {"offsets": [list(o) for o in result.offsets], "logprobs": result.logprobs,
                   "word_start": result.word_start}
            yield unit, Outcome(raw=json.dumps(raw), prompt_tokens=len(result.logprobs))

    return process


def run_surprisal(project: "Project", model: str, path: str | Path, *, state: TaskState | None = None,
                  backend: "Backend | None" = None) -> tuple[JobReport, int]:
    """Read the text file ``path`` with ``model``; returns the job report and the stored passage id."""
    from workbench.corpus.decode import decode_text

    path = Path(path)
    if not path.exists() or path.is_dir():
        raise UserError(f"There is no text file at {path}.")
    text = decode_text(path.read_bytes(), path.name)
    if not text.strip():
        raise UserError(f"{path.name} holds no text.")
    [item] = passage_store.store_passages(project, f"text:{path.name}", [("1", None, path.stem, text)])
    spec = _spec(project, model)
    run_id = find_or_create_run(project, KIND, model_id=spec.id, params={"start_token": True},
                                config={"passage_ids": [item]})
    return _execute(project, run_id, spec, [item], state, False, backend), item


def _spec(project: "Project", label: str):
    return open_model(project, label, "surprisal")


def _execute(project, run_id, spec, ids, state, retry_failed, backend=None) -> JobReport:
    return run_on_model(project, run_id, spec, ids, scoring_process, state, retry_failed, backend)


def resume(project: "Project", run_id: int, state: TaskState, retry_failed: bool) -> JobReport:
    from workbench.models.catalog import get_model

    run = get_run(project, run_id)
    return _execute(project, run_id, get_model(project, int(run["model_id"])), list(run["config"]["passage_ids"]),
                    state, retry_failed)


def surprisal_frame(project: "Project", model: str, item: int, *, correct: bool | None = None) -> pd.DataFrame:
    spec = _spec(project, model)
    found = responses(project, KIND, model_id=spec.id, item_ids=[item])
    if found.empty:
        raise UserError(f"'{spec.label}' has not read this text yet (or reading it failed); run it again.")
    text = passage_store.passage_texts(project, [item])[item]
    return word_surprisal(text, json.loads(found["raw"].iloc[0]), correct=correct)
