"""Evidence of exposure: what each probe says, book by book, about whether a model saw a book.

The exposure report (``palimpsest report``) sets every probe's evidence side by side. A probe brings its own:
a module named in its part's ``evidence`` that calls ``register_evidence`` when imported. Each source gives,
for a project and a model, one row per book it has measured (``EVIDENCE_COLUMNS``); a book it has not
measured is absent, which the report shows as "not measured". ``signal`` is the source's own reading of its
number, by a rule the source states in ``basis`` and in its methods text:

- ``strong``: the measure clearly exceeds what an unseen book gets (e.g. its interval lies above the
  baseline);
- ``some``: it exceeds the baseline, but the interval reaches it, or the measure is known to be weak alone;
- ``none``: no sign above the baseline.

``about`` says what a source measures: the model's own behaviour (``MODEL``: the name cloze, continuation,
DE-COP, membership scores) or a reference corpus (``CORPUS``: overlap and n-gram frequency, the same for every
model; they bear on a model only as far as the corpus stands for its training data). The verdict rule
(``export.verdict``) reads the two differently.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

import pandas as pd

if TYPE_CHECKING:
    from workbench.project import Project

STRONG, SOME, NONE = "strong", "some", "none"
MODEL, CORPUS = "model", "corpus"
SIGNALS = (STRONG, SOME, NONE)
#: one row per measured book: the headline number, its interval and unit count, the source's signal and the
#: plain words of what the signal rests on
EVIDENCE_COLUMNS = ["book_id", "value", "ci_low", "ci_high", "n", "signal", "basis"]


@dataclass(frozen=True)
class EvidenceSource:
    """One probe's evidence: ``key`` (a column prefix, e.g. "cloze"), ``label`` (plain words for the report's
    column), ``measure`` (what ``value`` is, e.g. "accuracy"), ``books(project, model_label)`` the frame (it may
    carry further columns of its own, shown beside the evidence columns, and ``attrs["note"]``: why books it
    could not judge are absent), ``about``: ``MODEL`` or ``CORPUS`` (see the module text)."""

    key: str
    label: str
    measure: str
    books: Callable[["Project", str], pd.DataFrame]
    order: int = 100
    about: str = MODEL
    #: how the source reads its signal, in plain words (the report prints it beside the verdict rule)
    rule: str = ""


_SOURCES: dict[str, EvidenceSource] = {}


def register_evidence(source: EvidenceSource) -> EvidenceSource:
    _SOURCES[source.key] = source
    return source


def evidence_sources() -> list[EvidenceSource]:
    """Every probe's evidence source, loaded from the parts list, in report order."""
    from workbench.parts import load

    load("evidence", skip_missing=True)
    return sorted(_SOURCES.values(), key=lambda s: (s.order, s.key))


def checked_frame(source: EvidenceSource, frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` as a source must give it: the evidence columns, one row per book, known signals."""
    missing = [c for c in EVIDENCE_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"the evidence of {source.key} lacks {', '.join(missing)}")
    if frame["book_id"].duplicated().any():
        raise ValueError(f"the evidence of {source.key} has a book twice")
    unknown = set(frame["signal"]) - set(SIGNALS)
    if unknown:
        raise ValueError(f"the evidence of {source.key} has unknown signals: {sorted(unknown)}")
    return frame
