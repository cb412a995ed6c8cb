"""Quick text statistics for the book view: words, sentences, chapters detected.

Regular expressions, not a language model: fast on a whole novel, and close enough to tell a
scholar whether the import looks right (a novel with 0 chapters or 40 words did not import well).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

WORD_RE = re.compile(r"[^\W_]+(?:['’\-][^\W_]+)*")
# A sentence ends at . ! or ? (plus closing quotes or brackets) before whitespace and a capital or digit.
# The look-behinds let a match start only where a word or a row of marks starts: started inside one, the
# search would rescan the rest of it from every position (quadratic in a long run of letters or dots).
SENTENCE_END_RE = re.compile(r"(?<!\w)(\w*)(?<![.!?])([.!?]+)[\"'”’)\]_]*\s+(?=[\"'“‘(\[_]*[A-Z0-9])")
ABBREVIATIONS = {
    "mr", "mrs", "ms", "dr", "st", "mme", "mlle", "messrs", "jr", "sr", "capt", "col", "gen", "rev", "prof",
    "lt", "sgt", "hon", "no", "vol", "ch", "esq", "viz", "vs", "cf",
}  # fmt: skip

_CHAPTER_WORDS = "CHAPTER|Chapter|LETTER|Letter|STAVE|Stave|ADVENTURE|Adventure"
_PART_WORDS = "BOOK|Book|PART|Part|VOLUME|Volume"
_NUMBER = r"[IVXLCDM]+\b\.?|\d+\b\.?|[A-Z][A-Za-z]+(?:[- ][A-Za-z]+)?\b\.?"
HEADING_RE = re.compile(
    rf"^[ \t]*(?:(?P<kind>{_CHAPTER_WORDS}|{_PART_WORDS})[ \t]+(?P<number>{_NUMBER})[^\n]{{0,80}}"
    # A bare numeral ('IV', '12.'), or a roman numeral with a full stop and a title ('IV. THE LEECH').
    rf"|(?P<numeral>[IVXLCDM]+|\d{{1,3}})\.?|(?P<titled>[IVXLCDM]+)\.[ \t]+[^\n]{{1,60}})[ \t]*$",
    re.MULTILINE,
)
# Contents pages list headings with nothing between; a real chapter, even a very short one, has more words.
MIN_CHAPTER_WORDS = 30


@dataclass
class TextStats:
    words: int
    sentences: int
    chapters: int
    paragraphs: int
    chapter_headings: list[str] = field(default_factory=list)


def count_words(text: str) -> int:
    return sum(1 for _ in WORD_RE.finditer(text))


def count_sentences(text: str) -> int:
    ends = 0
    for match in SENTENCE_END_RE.finditer(text):
        word, marks = match.group(1), match.group(2)
        if marks == "." and (word.lower() in ABBREVIATIONS or (len(word) == 1 and word.isupper())):
            continue
        ends += 1
    tail = text.rstrip()
    return ends + (1 if tail and WORD_RE.search(tail[-200:]) else 0)


def count_paragraphs(text: str) -> int:
    return sum(1 for block in re.split(r"\n[ \t]*\n", text) if block.strip())


def _headings(text: str) -> list[tuple[int, int, str, str, str]]:
    """(start, end, level, label, line): level is 'chapter' or 'part'."""
    found = []
    for match in HEADING_RE.finditer(text):
        before = text[max(0, match.start() - 2) : match.start()]
        # A heading stands apart; a roman numeral inside running text does not.
        apart = match.start() == 0 or before == "\n\n" or before.endswith("\n\n")
        if not apart and (not match.group("kind") or not before.endswith("\n")):
            continue
        if match.group("kind"):
            kind = match.group("kind").lower()
            level = "part" if kind in _PART_WORDS.lower().split("|") else "chapter"
            label = f"{kind} {match.group('number').rstrip('.').lower()}"
        else:
            level, label = "numeral", match.group("numeral") or match.group("titled")
        found.append((match.start(), match.end(), level, label, match.group(0).strip()))
    return found


def _chapters_at(text: str, headings: list, wanted: str) -> list[str]:
    def few_words_between(start: int, end: int) -> bool:
        """Fewer than a chapter's least words (found without counting all the words of a long chapter)."""
        words = WORD_RE.finditer(text, start, end)
        return next(itertools.islice(words, MIN_CHAPTER_WORDS - 1, None), None) is None

    last_with_label = {heading[3]: i for i, heading in enumerate(headings) if heading[2] == wanted}
    chapters = []
    previous_end = None  # end of the previous heading of this level
    for i, (start, end, level, label, line) in enumerate(headings):
        if level != wanted:
            continue
        listed = previous_end is not None and few_words_between(previous_end, start)
        previous_end = end
        next_start = headings[i + 1][0] if i + 1 < len(headings) else len(text)
        if few_words_between(end, next_start):
            continue  # an entry of a contents page, or a heading with nothing under it
        if listed and last_with_label[label] > i:
            continue  # the contents page's last entry, followed by a long preface
        chapters.append(line)
    return chapters


def detect_chapters(text: str) -> list[str]:
    """Chapter headings: 'CHAPTER IV', 'Letter 2', 'Stave One', or numerals standing alone ('IV.', '12')."""
    headings = _headings(text)
    named = _chapters_at(text, headings, "chapter")
    numbered = _chapters_at(text, headings, "numeral")
    return named if len(named) >= len(numbered) else numbered


def text_statistics(text: str) -> TextStats:
    chapters = detect_chapters(text)
    return TextStats(
        words=count_words(text),
        sentences=count_sentences(text),
        chapters=len(chapters),
        paragraphs=count_paragraphs(text),
        chapter_headings=chapters,
    )
