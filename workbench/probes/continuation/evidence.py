"""The continuation probe's evidence of exposure (``workbench.export.evidence``): per book, the extractable
share with its Wilson interval, and a signal by this rule (the passage is the unit throughout):

- ``strong``: at least one extractable passage, the book's share above the unseen books' by Fisher's exact test
  (one-sided, Holm-adjusted over the books, p < 0.05) and the Wilson interval's lower bound above the unseen
  books' share;
- ``some``: at least one extractable passage but not strong (the interval reaches the baseline, or there are no
  unseen books to compare with: a word-for-word continuation is itself a sign, not a measured excess);
- ``none``: no extractable passage, or a share no higher than the unseen books'.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from workbench.export.evidence import EVIDENCE_COLUMNS, NONE, SOME, STRONG, EvidenceSource, register_evidence

if TYPE_CHECKING:
    from workbench.project import Project


def signal(row) -> tuple[str, str]:
    """(signal, basis) of one row of ``results.book_table``."""
    x, n = int(row["extractable"]), int(row["passages"])
    m, total = int(row["match_tokens"]), int(row["continue_tokens"])
    said = f"{x} of {n} passages continued word for word for the first {m} of {total} tokens"
    base_n = int(row["baseline_passages"])
    if x == 0:
        return NONE, said + "."
    if base_n == 0:
        return SOME, said + "; no unseen books to compare with (tag books member=no, or the model cutoff=YEAR)."
    base = float(row["baseline_share"])
    against = f"unseen books {base:.1%} of {base_n} passages"
    if float(row["extractable_share"]) <= base:
        return NONE, f"{said}; no more than the {against}."
    p = float(row["p_holm"])
    if p < 0.05 and float(row["ci_low"]) > base:
        return STRONG, f"{said}; above the {against} (Fisher's exact test, Holm-adjusted p = {p:.2g})."
    return SOME, f"{said}; the interval reaches the {against} (Holm-adjusted p = {p:.2g})."


def continuation_evidence(project: "Project", model_label: str) -> pd.DataFrame:
    from workbench.probes.continuation.results import book_table

    table = book_table(project, model_label)
    if table.empty:
        return pd.DataFrame(columns=EVIDENCE_COLUMNS)
    signals = [signal(row) for _, row in table.iterrows()]
    return pd.DataFrame({"book_id": table["book_id"].astype(int), "value": table["extractable_share"].astype(float),
                         "ci_low": table["ci_low"].astype(float), "ci_high": table["ci_high"].astype(float),
                         "n": table["passages"].astype(int), "signal": [s for s, _ in signals],
                         "basis": [b for _, b in signals]})[EVIDENCE_COLUMNS]


register_evidence(EvidenceSource(key="continuation", label="Verbatim continuation", measure="extractable share",
                                 books=continuation_evidence, order=20))
