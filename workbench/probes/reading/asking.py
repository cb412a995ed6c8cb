"""What a model is shown for a question, and what its answer means (pure functions).

A read-along prompt (template kind ``reading-choice``) holds the book as far as the checkpoint, then
the numbered options and, as the last number, "None of the above". When only ``context_words`` words
may be given, the text is cut from the start (at a word), marked "[...]", and the question records how
many words it got. The answer is the first number in the reply that names a choice (or the words
"none of the above"); anything else is *unparsed*: it stays in the results as an answer that is not
right, and is counted.

A reconstruction prompt (``reading-reconstruct``, ``reading-reconstruct-passage``) holds the false
summary (and the scene's text); the answer is the text after the ``<summary>`` line when there is one,
else the whole reply.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Sequence

from workbench.probes.reading.questions import NONE_OF_THE_ABOVE, Question
from workbench.prompt_templates import Template, register_kind
from workbench.summaries.runs import FormatError, parse_marked

CHOICE_TEMPLATE = "reading-choice"
RECONSTRUCT_TEMPLATE = "reading-reconstruct"
PASSAGE_TEMPLATE = "reading-reconstruct-passage"
CUT_MARK = "[...] "

register_kind(CHOICE_TEMPLATE, required=["book", "options"], allowed=["book", "options"],
              description="a read-along question: the book so far and the options")
register_kind(RECONSTRUCT_TEMPLATE, required=["false_summary"], allowed=["false_summary"],
              description="correct a false scene summary from memory")
register_kind(PASSAGE_TEMPLATE, required=["false_summary", "passage"], allowed=["false_summary", "passage"],
              description="correct a false scene summary with the scene at hand")

_NUMBER = re.compile(r"(?<![\w.])(\d{1,3})(?![\w])")
_NONE = re.compile(r"none\s+of\s+the\s+above", re.IGNORECASE)


@dataclass(frozen=True)
class Context:
    text: str
    words: int  # words given
    start_char: int  # where the given text starts in the variant's text
    truncated: bool


class BookText:
    """A variant's text with the start of every word, so a context of the last N words is cut quickly."""

    def __init__(self, text: str):
        self.text = text
        self.word_starts = [m.start() for m in re.finditer(r"\S+", text)]

    def before(self, end_char: int, max_words: int | None = None) -> Context:
        """The text before ``end_char``, cut to its last ``max_words`` words when longer."""
        words = bisect.bisect_left(self.word_starts, end_char)
        if max_words is None or words <= max_words:
            return Context(self.text[:end_char].strip(), words, 0, False)
        start = self.word_starts[words - max_words] if max_words > 0 else end_char
        return Context(CUT_MARK + self.text[start:end_char].strip(), max_words, start, True)


def numbered_options(question: Question) -> str:
    lines = [f"{number}) {' '.join(text.split())}" for number, text in enumerate(question.options, start=1)]
    lines.append(f"{len(question.options) + 1}) {NONE_OF_THE_ABOVE}")
    return "\n".join(lines)


def choice_prompt(template: Template, question: Question, context: Context) -> str:
    return template.render(book=context.text, options=numbered_options(question))


def reconstruct_prompt(template: Template, question: Question, passage: str | None = None) -> str:
    values = {"false_summary": question.body["false_summary"]}
    if passage is not None:
        values["passage"] = passage
    return template.render(**values)


def parse_choice(raw: str | None, choices: int) -> int | None:
    """The 0-based choice a reply names, or None when it names none of the ``choices``."""
    text = raw or ""
    for match in _NUMBER.finditer(text):
        number = int(match.group(1))
        if 1 <= number <= choices:
            return number - 1
        break
    if _NONE.search(text):
        return choices - 1
    return None


def parse_reconstruction(raw: str | None, prompt: str | None = None) -> str:
    """The corrected summary of a reply: after the ``<summary>`` line if there is one, else all of it."""
    try:
        return parse_marked(raw, prompt)
    except FormatError:
        return " ".join((raw or "").split())


def choice_correct(question: Question, choice: int | None) -> bool:
    return choice is not None and choice == question.correct_choice


def passage_of(question: Question, text: str) -> str | None:
    if "passage_start" not in question.body:
        return None
    return text[question.body["passage_start"] : question.body["passage_end"]].strip()


def chance(questions: Sequence[Question]) -> float:
    """The accuracy of guessing: the mean of 1 / choices."""
    read_along = [q for q in questions if q.read_along]
    return sum(1 / q.choices for q in read_along) / len(read_along) if read_along else float("nan")
