"""The exposure report's verdict: one plain phrase per book from the signals of every source of evidence.

Each source of evidence (``export.evidence``) reads its own number as ``strong``, ``some`` or ``none`` by a
rule it states; a source that has not measured a book gives no signal for it. The verdict combines them:

1. **not measured**: no source has measured the book.
2. **strong evidence of exposure**: at least one measure of *the model's own behaviour* (name cloze, verbatim
   continuation, DE-COP, membership scores) reads ``strong``.
3. **some evidence**: otherwise, at least one source reads ``strong`` or ``some``. A ``strong`` reading of a
   *reference corpus* (long verbatim overlaps, most of a book's n-grams found) counts here: it shows the book's
   text is in that corpus, not that this model read it; the program cannot know whether the corpus stands for
   the model's training data, so alone it is never more than some evidence.
4. **none found**: every source that measured the book reads ``none``. This is an absence of evidence, not
   evidence of absence: each measure misses books a model did see (the name cloze needs named characters and
   famous books; membership scores are near chance on large pretrained models).

**Measures disagree** is flagged beside the verdict when one source reads ``strong`` and another ``none``
for the same book (a corpus source included): such a book deserves a look at both measures before its
verdict is quoted.

``rests_on`` names the signals a verdict rests on (``cloze strong; overlap some``), so every verdict in a
table or a paper can be traced to the measures behind it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from workbench.export.evidence import CORPUS, NONE, SIGNALS, SOME, STRONG

STRONG_VERDICT = "strong evidence of exposure"
SOME_VERDICT = "some evidence"
NONE_VERDICT = "none found"
NOT_MEASURED = "not measured"
VERDICTS = (STRONG_VERDICT, SOME_VERDICT, NONE_VERDICT, NOT_MEASURED)

#: the rule in plain words, for the report, the methods text and the app
RULE = [
    ("strong evidence of exposure", "at least one measure of the model's own behaviour (name cloze, verbatim "
     "continuation, DE-COP, membership) reads strong by its own stated rule."),
    ("some evidence", "no measure of the model reads strong, but at least one source reads strong or some. A strong "
     "reading of a reference corpus (long verbatim overlaps, most of the book's n-grams found) counts only as some "
     "evidence: it shows the text is in that corpus, not that this model read it."),
    ("none found", "every source that measured the book reads none. This is an absence of evidence, not evidence "
     "of absence: each measure misses books a model did see."),
    ("not measured", "no source has measured the book for this model."),
    ("measures disagree (flag)", "one source reads strong and another none for the same book: look at both before "
     "quoting the verdict."),
]


@dataclass(frozen=True)
class Verdict:
    verdict: str
    disagree: bool
    rests_on: str


def verdict(signals: Mapping[str, str | None], about: Mapping[str, str] | None = None) -> Verdict:
    """The verdict for one book from ``signals`` (source key -> ``strong``/``some``/``none``, or None where the
    source did not measure the book), ``about`` giving each source's ``MODEL`` or ``CORPUS`` (default: model).
    Pure: the rule of the module text."""
    about = about or {}
    measured = {key: signal for key, signal in signals.items() if signal is not None}
    unknown = set(measured.values()) - set(SIGNALS)
    if unknown:
        raise ValueError(f"unknown signals: {sorted(unknown)}")
    if not measured:
        return Verdict(NOT_MEASURED, False, "no measure")
    of_model = {k: s for k, s in measured.items() if about.get(k) != CORPUS}
    values = set(measured.values())
    disagree = STRONG in values and NONE in values
    if STRONG in of_model.values():
        label = STRONG_VERDICT
        cited = [k for k, s in of_model.items() if s == STRONG]
    elif values & {STRONG, SOME}:
        label = SOME_VERDICT
        cited = [k for k, s in measured.items() if s in (STRONG, SOME)]
    else:
        label = NONE_VERDICT
        cited = list(measured)
    if disagree:
        cited += [k for k, s in measured.items() if s in (STRONG, NONE) and k not in cited]
    rests = "; ".join(f"{key} {measured[key]}" + (" (corpus)" if about.get(key) == CORPUS else "")
                      for key in sorted(dict.fromkeys(cited), key=list(measured).index))
    return Verdict(label, disagree, rests)
