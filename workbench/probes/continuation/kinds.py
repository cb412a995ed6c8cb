"""The continuation probe's run kind, declared once (``workbench.runs``): ``responses.item_id`` is a
``continuation_passages`` id, one sample, the model's raw continuation stored as it came and its tokens (in the
run's tokenization) in ``extra``."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.runs import RunKind, declare_run_kind

#: how the prefix reaches the model: as bare text to continue (local models, completion APIs), or inside a
#: chat message asking for the continuation (chat APIs)
RAW, CHAT = "raw", "chat"


@dataclass(frozen=True)
class ContinuationConfig:
    """A run's config: its books and the passage setting (which passages: tokenization, seed, passages per book,
    prefix and continuation lengths), and how the prefix was sent. The passages themselves are the rows of
    ``continuation_passages`` with this setting for these books."""

    book_ids: tuple[int, ...] = ()
    per_book: int = 50
    prefix_tokens: int = 50
    continue_tokens: int = 50
    seed: int = 0
    tokenizer: str = ""
    prompt_form: str = RAW


def _generation(run: dict) -> str:
    facts = run.get("continuation") or {}  # the facts ``methods`` adds to the run's record
    form = ("the prefix sent as bare text to continue" if facts.get("prompt_form", RAW) == RAW
            else "the prefix sent inside a chat message asking for the continuation")
    return f"greedy decoding (temperature 0), at most {run['generation'].get('max_tokens')} new tokens; {form}"


CONTINUATION_KIND = declare_run_kind(RunKind(
    "continuation", "verbatim continuation of book passages", "passage", generation=_generation,
    config=ContinuationConfig, resume="workbench.probes.continuation.run:resume_run",
    units="workbench.probes.continuation.run:passage_units"))
