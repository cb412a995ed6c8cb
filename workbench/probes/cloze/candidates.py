"""Which name mentions in a spaCy ``Doc`` make a name-cloze passage, and why the others do not.

A mention qualifies when

1. it is a PERSON entity of exactly one word once leading titles are set aside ("Mr. Darcy" -> "Darcy"),
   tagged as a proper noun (NNP/NNPS), shaped like a name (letters, capitalised, not all capitals);
2. the word is not in the exclusion list (kinship terms, forms of address, deities);
3. a window of whole sentences around it has between ``min_tokens`` and ``max_tokens`` tokens,
4. in which no other proper named entity of any type occurs (and, by default, no other word tagged as
   a proper noun that the recogniser missed),
5. and the name does not occur again (case-insensitive).

Of the windows that meet 3-5, the one whose length is closest to ``target_tokens`` is used; then the
one most centred on the name; then the earliest. A mention with no such window is refused for the
rule its preferred window broke.

Character offsets are into the text the ``Doc`` was made from, plus ``offset`` (where that text starts
in the book), so ``book_text[start_char:end_char]`` is the passage with the name still in place.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.probes.cloze import MASK
from workbench.probes.cloze.rules import ExtractionSettings, normalise_word

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

PROPER_NOUN_TAGS = frozenset({"NNP", "NNPS"})
NAME_SHAPE = re.compile(r"^[^\W\d_]+(?:['’-][^\W\d_]+)*$")

#: why a mention was not used, in words a scholar can read
REASONS = {
    "multi-word": "the name has more than one word",
    "not-proper-noun": "the word is not tagged as a proper noun",
    "not-name-shaped": "the word does not look like a name (capitals, digits or symbols)",
    "excluded-word": "the word is in the exclusion list (kinship, address, deity)",
    "no-window": "no run of whole sentences around it has the required length",
    "other-entity": "another named entity is in the window",
    "other-proper-noun": "another proper noun is in the window",
    "name-repeated": "the name occurs again in the window",
}


@dataclass(frozen=True)
class Candidate:
    """A qualifying passage: the window and the name inside it, as character offsets into the book."""

    start_char: int
    end_char: int
    name_start: int
    name_end: int
    gold: str
    tokens: int

    def passage(self, text: str) -> str:
        """The window of ``text`` with the name replaced by ``[MASK]``."""
        return text[self.start_char : self.name_start] + MASK + text[self.name_end : self.end_char]


@dataclass
class BookSample:
    """What extraction found in one text: its sample of candidates (``extract``), as stored (``passages``)."""

    candidates: int
    passages: list[Candidate]
    #: each sampled passage as stored: the window with ``[MASK]`` in place of the name
    texts: list[str]
    blocks: int
    blocks_read: int
    per_book: int

    @property
    def flagged(self) -> bool:
        return len(self.passages) < self.per_book


@dataclass(frozen=True)
class Verdict:
    """One PERSON mention and what became of it: ``reason`` is None when it made a ``candidate``."""

    name: str
    name_start: int
    reason: str | None
    candidate: Candidate | None = None

    @property
    def explanation(self) -> str:
        return "used" if self.reason is None else REASONS[self.reason]


def fitting_windows(counts: list[int], index: int, settings: ExtractionSettings) -> list[tuple[int, int]]:
    """Every sentence range ``(first, last)`` around sentence ``index`` whose token count fits the settings,
    best first: closest to the target length, then most centred on ``index``, then earliest."""
    ranked = []
    before = 0
    for first in range(index, -1, -1):
        before += counts[first]
        if before > settings.max_tokens:
            break
        total = before
        for last in range(index, len(counts)):
            if last > index:
                total += counts[last]
            if total > settings.max_tokens:
                break
            if total >= settings.min_tokens:
                key = (abs(total - settings.target_tokens), abs((index - first) - (last - index)), first)
                ranked.append((key, (first, last)))
    return [window for _, window in sorted(ranked)]


def best_window(counts: list[int], index: int, settings: ExtractionSettings) -> tuple[int, int] | None:
    """The preferred fitting window (see ``fitting_windows``), or None."""
    windows = fitting_windows(counts, index, settings)
    return windows[0] if windows else None


def _word_count(span: "Span") -> int:
    return sum(1 for token in span if not token.is_space)


def _name_token(entity: "Span", settings: ExtractionSettings) -> "Token | None":
    """The one name word of a PERSON entity, titles in front of it set aside; None if not one word."""
    words = [t for t in entity if not t.is_space and not t.is_punct]
    while len(words) > 1 and normalise_word(words[0].text) in settings.titles:
        words = words[1:]
    return words[0] if len(words) == 1 else None


def _looks_like_name(word: str) -> bool:
    return bool(NAME_SHAPE.match(word)) and word[0].isupper() and not (len(word) > 1 and word.isupper())


def _repeats(name: str, text: str) -> bool:
    pattern = r"(?<![^\W_])" + re.escape(name) + r"(?![^\W_])"
    return re.search(pattern, text, re.IGNORECASE) is not None


def judge_mentions(doc: "Doc", settings: ExtractionSettings, offset: int = 0) -> list[Verdict]:
    """Every PERSON mention of ``doc`` with its verdict (used, or the first rule it breaks)."""
    sentences = list(doc.sents)
    if not sentences:
        return []
    sentence_of = {}
    for number, sentence in enumerate(sentences):
        for token in sentence:
            sentence_of[token.i] = number
    counts = [_word_count(s) for s in sentences]
    proper_entities = [e for e in doc.ents if e.label_ in settings.proper_labels]
    verdicts = []
    for entity in doc.ents:
        if entity.label_ != "PERSON":
            continue
        verdicts.append(_judge(doc, entity, sentences, sentence_of, counts, proper_entities, settings, offset))
    return verdicts


def _judge(doc, entity, sentences, sentence_of, counts, proper_entities, settings, offset) -> Verdict:
    token = _name_token(entity, settings)
    if token is None:
        return Verdict(entity.text, offset + entity.start_char, "multi-word")
    name = token.text
    start = offset + token.idx

    def refuse(reason: str) -> Verdict:
        return Verdict(name, start, reason)

    if not _looks_like_name(name):
        return refuse("not-name-shaped")
    if token.tag_ not in PROPER_NOUN_TAGS:
        return refuse("not-proper-noun")
    if normalise_word(name) in settings.excluded_words:
        return refuse("excluded-word")
    windows = fitting_windows(counts, sentence_of[token.i], settings)
    if not windows:
        return refuse("no-window")
    # The preferred window may hold another name where a slightly longer or shorter one does not.
    first_problem = None
    for window in windows:
        words = [t for t in doc[sentences[window[0]].start : sentences[window[1]].end] if not t.is_space]
        problem = _window_problem(doc, entity, token, words, proper_entities, settings)
        if problem is None:
            return Verdict(name, start, None, _candidate(token, words, offset))
        first_problem = first_problem or problem
    return refuse(first_problem)


def _window_problem(doc, entity, token, words, proper_entities, settings) -> str | None:
    """The rule a window breaks (another entity, another proper noun, the name again), or None."""
    lo, hi = words[0].i, words[-1].i + 1
    if any(e.start < hi and e.end > lo and e != entity for e in proper_entities):
        return "other-entity"
    if settings.reject_other_proper_nouns and any(
        t.tag_ in PROPER_NOUN_TAGS
        and not (entity.start <= t.i < entity.end)
        and normalise_word(t.text) not in settings.titles
        and normalise_word(t.text) not in settings.excluded_words
        for t in words
    ):
        return "other-proper-noun"
    before = doc.text[words[0].idx : token.idx]
    after = doc.text[token.idx + len(token.text) : words[-1].idx + len(words[-1].text)]
    if _repeats(token.text, before) or _repeats(token.text, after):
        return "name-repeated"
    return None


def _candidate(token: "Token", words: list["Token"], offset: int) -> Candidate:
    return Candidate(
        start_char=offset + words[0].idx,
        end_char=offset + words[-1].idx + len(words[-1].text),
        name_start=offset + token.idx,
        name_end=offset + token.idx + len(token.text),
        gold=token.text,
        tokens=len(words),
    )


def find_candidates(doc: "Doc", settings: ExtractionSettings, offset: int = 0) -> list[Candidate]:
    """The qualifying passages of ``doc`` in text order."""
    return [v.candidate for v in judge_mentions(doc, settings, offset) if v.candidate is not None]
