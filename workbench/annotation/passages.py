"""Cutting a book into windows of whole sentences: ~250-word passages, ~3,000-character scenes.

Sentences come from a light rule-based splitter (end punctuation followed by a capital, with common
abbreviations and initials kept together); paragraph breaks always end a sentence. Front matter before
the first chapter heading is left out. Short lines without end
punctuation (chapter headings, tables of contents, title pages) are barriers a window never crosses, so a
passage never straddles two chapters. Windows tile each stretch between barriers without overlapping; the
sample is drawn from them with a seed that depends on the book, so adding a book never changes another
book's sample.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Callable, Iterator

_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n\s*")
_SENTENCE_END = re.compile(r"[.!?]+[\"'\u2019\u201d)\]_]*(?=\s+[\"'\u2018\u201c(\[_]*[A-Z0-9])")
_ABBREVIATIONS = {
    "mr", "mrs", "ms", "dr", "st", "jr", "sr", "prof", "capt", "col", "gen", "lt", "rev", "hon", "mt",
    "messrs", "mme", "mlle", "no", "vs", "etc", "sgt", "gov", "esq", "ft", "vol", "ch",
}
_HEADING = re.compile(r"^(chapter|book|part|volume|act|scene|section|canto|letter)\b", re.IGNORECASE)
_CHAPTER_START = re.compile(r"^[ \t]*(chapter|book|part|letter)[ \t]+(i|1|one|first)\b[^\n]*$",
                            re.IGNORECASE | re.MULTILINE)
# a table of contents: another chapter heading right after this one
_LISTING = re.compile(r"^[ \t]*(chapter|book|part|letter)[ \t]+([ivxlc]+|\d+|two|second)\b[^\n]{0,60}$",
                      re.IGNORECASE | re.MULTILINE)


@dataclass(frozen=True)
class Span:
    start: int
    end: int


@dataclass(frozen=True)
class Window:
    start: int
    end: int
    text: str  # whitespace tidied: paragraphs joined by a blank line, lines within a paragraph by spaces


def paragraph_spans(text: str) -> Iterator[Span]:
    """The paragraphs of ``text`` (separated by blank lines), in order; the breaks between them left out."""
    position = 0
    for match in _PARAGRAPH_BREAK.finditer(text):
        if match.start() > position:
            yield Span(position, match.start())
        position = match.end()
    if position < len(text):
        yield Span(position, len(text))


def is_barrier(paragraph: str) -> bool:
    """A heading, a list line or other non-prose paragraph: no window may cross it."""
    stripped = paragraph.strip()
    if _HEADING.match(stripped) and len(stripped.split()) <= 12:
        return True
    words = stripped.split()
    if len(words) < 8 and not re.search(r"[.!?][\"'\u2019\u201d)\]_]*$", stripped):
        return True
    letters = [c for c in stripped if c.isalpha()]
    return bool(letters) and sum(c.isupper() for c in letters) / len(letters) > 0.8


def sentence_spans(text: str, para: Span) -> Iterator[Span]:
    """The sentences of one paragraph, in order; the whitespace between them left out."""
    start = para.start
    chunk = text[para.start : para.end]
    for match in _SENTENCE_END.finditer(chunk):
        before = chunk[: match.start() + 1].rstrip(".!?\"'\u2019\u201d)]_ ")
        last_word = re.findall(r"[A-Za-z]+$", before)
        if match.group().startswith(".") and last_word:
            word = last_word[0]
            if word.lower() in _ABBREVIATIONS or (len(word) == 1 and word.isupper()):
                continue
        end = para.start + match.end()
        yield Span(start, end)
        start = end
        while start < para.end and text[start].isspace():
            start += 1
    if start < para.end:
        yield Span(start, para.end)


def body_start(text: str) -> int:
    """Where the story begins: the first chapter heading, when there is one in the first third of the
    book. What comes before (title page, preface, dedication, contents) often names the book and its
    author, which would unblind a passage, and is not narrative anyway."""
    for match in _CHAPTER_START.finditer(text):
        if match.start() > len(text) / 3:
            break
        line_end = text.find("\n", match.start())
        line = text[match.start() : line_end if line_end >= 0 else len(text)]
        if is_barrier(line) and not _LISTING.search(text[match.end() : match.end() + 400]):
            return match.start()
    return 0


def prose_runs(text: str) -> list[list[list[Span]]]:
    """Stretches of prose between barriers (from the start of the story on): each a list of paragraphs,
    each a list of sentence spans."""
    runs: list[list[list[Span]]] = [[]]
    start = body_start(text)
    for para in paragraph_spans(text):
        if para.start < start:
            continue
        if is_barrier(text[para.start : para.end]):
            if runs[-1]:
                runs.append([])
            continue
        runs[-1].append(list(sentence_spans(text, para)))
    return [run for run in runs if run]


def tidy(text: str) -> str:
    paragraphs = [" ".join(p.split()) for p in _PARAGRAPH_BREAK.split(text)]
    return "\n\n".join(p for p in paragraphs if p)


def word_count(text: str) -> int:
    return len(text.split())


def char_count(text: str) -> int:
    return len(" ".join(text.split()))


def windows(
    text: str,
    target: int,
    measure: Callable[[str], int] = word_count,
    tolerance: float = 0.2,
) -> list[Window]:
    """Consecutive, non-overlapping windows of whole sentences whose size is within ``tolerance`` of
    ``target`` (in ``measure`` units). Each window stops at the sentence that brings it closest to target."""
    low, high = target * (1 - tolerance), target * (1 + tolerance)
    found: list[Window] = []
    for run in prose_runs(text):
        sentences = [s for para in run for s in para]
        sizes = [measure(text[s.start : s.end]) for s in sentences]
        i = 0
        while i < len(sentences):
            size, j = 0, i
            while j < len(sentences) and size + sizes[j] < target:
                size += sizes[j]
                j += 1
            if j < len(sentences) and abs(size + sizes[j] - target) <= abs(size - target):
                size += sizes[j]
                j += 1
            if j == i:  # one sentence longer than the window: step over it
                i += 1
                continue
            if low <= size <= high:
                start, end = sentences[i].start, sentences[j - 1].end
                found.append(Window(start, end, tidy(text[start:end])))
            i = j
    return found


def sample_windows(candidates: list[Window], n: int, seed: int | str) -> list[Window]:
    """``n`` windows drawn with ``seed`` (all of them if there are fewer), in book order."""
    if n >= len(candidates):
        return list(candidates)
    chosen = random.Random(str(seed)).sample(range(len(candidates)), n)
    return [candidates[i] for i in sorted(chosen)]


def context_around(text: str, start: int, end: int, chars: int) -> tuple[str, str]:
    """About ``chars`` characters before and after a span, cut at word boundaries."""
    before = text[max(0, start - chars) : start]
    if start - chars > 0 and " " in before:
        before = before[before.find(" ") + 1 :]
    after = text[end : end + chars]
    if end + chars < len(text) and " " in after.rstrip():
        after = after[: after.rstrip().rfind(" ")]
    return tidy(before), tidy(after)
