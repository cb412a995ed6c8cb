"""Fine-tuning data for a "decade model": passage starts and their continuations, as chat JSONL.

Each book's text is cut into passages of whole sentences (about ``chunk_words`` words each; sentence
boundaries from spaCy's rule-based sentencizer, fast enough for whole novels). A passage becomes one
example: the user turn gives its first ``prompt_share`` of the words (after a short instruction), the
assistant turn the rest. One JSON object per line::

    {"messages": [{"role": "system", ...}?, {"role": "user", ...}, {"role": "assistant", ...}]}

which OpenAI-compatible fine-tuning services and local trainers (e.g. TRL's SFT) read as they are.
The order of examples (and which are kept, with ``max_examples``) is drawn with ``seed``.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from workbench.corpus.library import book_text, get_book
from workbench.errors import UserError
from workbench.probes.rep.books import select_books
from workbench.progress import TaskState

if TYPE_CHECKING:
    from workbench.project import Project

DEFAULT_INSTRUCTION = "Continue this passage from a novel, in the same style:"
_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class FinetuneSettings:
    chunk_words: int = 200
    prompt_share: float = 0.5
    seed: int = 0
    max_examples: int | None = None
    instruction: str = DEFAULT_INSTRUCTION
    system: str = ""

    def check(self) -> None:
        if self.chunk_words < 10:
            raise UserError("Passages need at least 10 words each.")
        if not 0.1 <= self.prompt_share <= 0.9:
            raise UserError("The share of a passage given as its start must be between 0.1 and 0.9.")
        if self.max_examples is not None and self.max_examples < 1:
            raise UserError("The maximum number of examples must be at least 1.")


@dataclass
class FinetuneReport:
    path: Path
    books: int
    examples: int
    words: int


def _sentencizer():
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.max_length = 10_000_000
    return nlp


def sentences(text: str, nlp=None) -> Iterator[str]:
    """The text's sentences, paragraph by paragraph (whitespace inside a sentence made single)."""
    nlp = nlp or _sentencizer()
    paragraphs = [p for p in re.split(r"\n\s*\n", text) if p.strip()]
    for doc in nlp.pipe(paragraphs, batch_size=64):
        for sent in doc.sents:
            cleaned = " ".join(sent.text.split())
            if cleaned:
                yield cleaned


def passages(text: str, chunk_words: int, nlp=None) -> list[str]:
    """Consecutive whole sentences joined until each passage has at least ``chunk_words`` words."""
    chunks, current, count = [], [], 0
    for sentence in sentences(text, nlp):
        current.append(sentence)
        count += len(_WORD.findall(sentence))
        if count >= chunk_words:
            chunks.append(" ".join(current))
            current, count = [], 0
    if current and count >= chunk_words // 2:  # a short tail is kept only if it is half a passage
        chunks.append(" ".join(current))
    return chunks


def split_passage(passage: str, prompt_share: float) -> tuple[str, str]:
    """(start, continuation), cut between words after ``prompt_share`` of them."""
    words = list(_WORD.finditer(passage))
    cut = min(max(1, round(len(words) * prompt_share)), len(words) - 1)
    position = words[cut].start()
    return passage[:position].rstrip(), passage[position:].strip()


def example(start: str, continuation: str, settings: FinetuneSettings) -> dict:
    messages = [{"role": "system", "content": settings.system}] if settings.system.strip() else []
    user = f"{settings.instruction.strip()}\n\n{start}" if settings.instruction.strip() else start
    messages += [{"role": "user", "content": user}, {"role": "assistant", "content": continuation}]
    return {"messages": messages}


def export_finetune(project: "Project", out: str | Path, *, tag: str | None = None, book_set: str | None = None,
                    settings: FinetuneSettings = FinetuneSettings(), state: TaskState | None = None) -> FinetuneReport:
    """Write the fine-tuning JSONL for the chosen books to ``out``."""
    settings.check()
    state = state or TaskState()
    out = Path(out)
    if out.suffix.lower() != ".jsonl":
        raise UserError(f"Fine-tuning data is written as JSON lines: give the file a .jsonl ending, not '{out.name}'.")
    book_ids = select_books(project, tag=tag, book_set=book_set)
    nlp = _sentencizer()
    examples: list[tuple[dict, int]] = []  # (example, words of book text in it)
    for done, book_id in enumerate(book_ids):
        state.check()
        state.progress(done, len(book_ids), f"Cutting {get_book(project, book_id).display_name} into passages")
        for passage in passages(book_text(project, book_id), settings.chunk_words, nlp):
            words = len(_WORD.findall(passage))
            if words >= 2:
                examples.append((example(*split_passage(passage, settings.prompt_share), settings), words))
    if not examples:
        raise UserError("The chosen books are too short for even one passage. Choose more books or smaller passages.")
    random.Random(settings.seed).shuffle(examples)
    if settings.max_examples is not None:
        examples = examples[: settings.max_examples]
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as fh:
        for item, _ in examples:
            fh.write(json.dumps(item, ensure_ascii=False) + "\n")
    state.progress(len(book_ids), len(book_ids), f"Wrote {len(examples)} examples", force=True)
    return FinetuneReport(path=out, books=len(book_ids), examples=len(examples), words=sum(w for _, w in examples))
