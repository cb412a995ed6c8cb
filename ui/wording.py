"""How the window names things: run kinds, statuses, times, parameters and run settings in plain words.

The project stores short machine names ("cloze-logprob", "rep-judge", ISO timestamps, JSON parameters);
every page shows them through these functions, so a scholar reads the same words everywhere.
"""

from __future__ import annotations

from typing import Any

# the words for runs are the core's (``workbench.runs.views``): the Jobs page's table is built there
from workbench.runs.views import PARAMETERS, STATUSES, missing, number, parameters, run_about, when  # noqa: F401
from workbench.runs.views import kind_words as run_kind  # noqa: F401
from workbench.runs.views import status_words as status  # noqa: F401

#: how the REP results are labelled, by classifier key prefix
LEXICAL = "lexical"


def classifier(key: str) -> str:
    """A REP classifier key as the Results tab offers it: 'lexical' -> 'Word lists', 'judge:M' -> 'Judge: M'."""
    if key == LEXICAL:
        return "Word lists"
    if key.startswith("judge:"):
        return f"Judge: {key.partition(':')[2]}"
    return key


def role_key(key: Any) -> str:
    """A role or demographic key for reading: 'top_student' -> 'top student'."""
    return "" if missing(key) else str(key).replace("_", " ")
