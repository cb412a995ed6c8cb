"""The prompt around a passage, and the answer as the template asks for it.

- The passage goes into the template's ``{passage}`` with runs of whitespace (the hard line breaks of
  Gutenberg texts) collapsed to single spaces, and the prompt's trailing whitespace is dropped (a base
  model should continue right after ``Answer:``).
- The answer format is ``<name>NAME</name>``. For the log-probability score (``expected_answer``), the
  scored continuation is exactly that text, preceded by one space for base models (their prompt ends
  with ``Answer:``); for chat models it is the start of the assistant's reply.
"""

from __future__ import annotations

import re

from workbench.prompt_templates import Template

DEFAULT_TEMPLATE = "name-cloze"
OPEN_TAG, CLOSE_TAG = "<name>", "</name>"
WHITESPACE = re.compile(r"\s+")


def passage_for_prompt(passage: str) -> str:
    return WHITESPACE.sub(" ", passage).strip()


def cloze_prompt(template: Template, passage: str) -> str:
    """The full prompt text for one passage."""
    return template.render(passage=passage_for_prompt(passage)).rstrip()


def expected_answer(gold: str, *, chat: bool) -> str:
    """The continuation whose log-probability measures how readily the model writes the gold name."""
    answer = f"{OPEN_TAG}{gold}{CLOSE_TAG}"
    return answer if chat else " " + answer
