"""The leakage probe's evidence of exposure (for the exposure report, ``export.evidence``): four sources, each
read from the frames the probe's own tables show (nothing is asked of a model or an index here).

**Overlap** (``overlap``, about a corpus): for each reference corpus, the longest sequence any of the book's
passages shares with it (in the corpus's tokens) and whether the chance model of ``overlap`` calls it unlikely
to be a coincidence (p < 0.05, the default chance model: the same corpus less the match's own occurrences).
That model flags many short common phrases (``chance.CAVEAT``), so only long matches count:

- ``strong``: a passage shares at least ``LONG_TOKENS`` (20) tokens with the corpus, unlikely by chance;
- ``some``: the longest such flagged match has ``SOME_TOKENS`` (12) to 19 tokens;
- ``none``: no flagged match of 12 tokens or more (shorter flagged matches are counted in ``basis`` only).

**N-gram frequency** (``frequency``, about a corpus): of the book's sampled runs of words (``frequency``: 10
passages, 10 words each by default), the share found at least once in the corpus, with its Wilson interval,
and their mean count (*Speak, Memory* section 6.2's book frequency):

- ``strong``: the interval's lower end is at least half (most of the sampled text is in the corpus);
- ``some``: at least one run found;
- ``none``: none found.

For both corpus sources the corpus with the strongest reading is shown (then the larger number), the others
named in ``basis``; they are the same for every model and bear on a model only as far as the corpus stands
for its training data (the verdict treats them so: ``export.verdict``).

**Membership** (``membership``, about the model): the ROC AUC of the Min-K%++ score (k = 20%) of the book's
passages against the passages of the books tagged ``member=no`` (the book itself left out), with a percentile
bootstrap interval that redraws the book's passages one by one and the clean books whole
(``statistics.clustered_roc_auc``). Membership scores are near chance on large pretrained models in published
evaluations, so they are weak evidence alone:

- ``strong``: only when strongly separated: the interval's lower end is at least ``MEMBERSHIP_STRONG`` (0.8);
- ``some``: the interval's lower end is above 0.5;
- ``none``: otherwise. Without books tagged ``member=no`` nothing is measured.

**DE-COP** (``decop``, about the model): the book score (mean passage score: the model picks the verbatim
passage among three paraphrases) with its Wilson interval over passages, the one-sided test against chance
(25%), and the mean score of the clean books (``member=no`` or published after the model's training cutoff;
the book itself left out). Being above chance alone can come from style rather than memory (``decop_scores``),
so:

- ``strong``: above chance (p < 0.05) and the interval's lower end above the clean books' mean score;
- ``some``: above chance, but there are no clean books or the interval reaches their mean;
- ``none``: not above chance, or not above the clean books' mean. Where the model was asked with several
  settings (paraphraser, orders, seed), those covering the most books are read.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from workbench.errors import UserError
from workbench.export.evidence import (
    CORPUS,
    EVIDENCE_COLUMNS,
    NONE,
    SOME,
    STRONG,
    EvidenceSource,
    register_evidence,
)

if TYPE_CHECKING:
    from workbench.project import Project

LONG_TOKENS = 20
SOME_TOKENS = 12
FOUND_STRONG = 0.5
MEMBERSHIP_SCORE = "min_k_pp"
MEMBERSHIP_K = 20.0
MEMBERSHIP_STRONG = 0.8
P_LEVEL = 0.05
RANK = {STRONG: 2, SOME: 1, NONE: 0}


def _empty(extra: list[str], note: str = "") -> pd.DataFrame:
    frame = pd.DataFrame(columns=EVIDENCE_COLUMNS + extra)
    if note:
        frame.attrs["note"] = note
    return frame


def _strongest(rows: list[dict[str, Any]], others_said: str) -> pd.DataFrame:
    """Per book, the corpus row with the strongest signal (then the larger value); the others named in its
    basis."""
    frame = pd.DataFrame(rows)
    frame["_rank"] = frame["signal"].map(RANK)
    frame = frame.sort_values(["book_id", "_rank", "value", "corpus"], ascending=[True, False, False, True],
                              kind="stable")
    chosen = []
    for _, group in frame.groupby("book_id", sort=True):
        best = group.iloc[0].to_dict()
        others = group.iloc[1:]
        if len(others):
            best["basis"] += " Other corpora: " + "; ".join(
                f"'{o.corpus}' {others_said.format(o.value)} ({o.signal})" for o in others.itertuples()) + "."
        chosen.append(best)
    return pd.DataFrame(chosen).drop(columns="_rank").reset_index(drop=True)


# ---------------------------------------------------------------------------------------------- overlap
OVERLAP_EXTRA = ["corpus", "flagged_long", "flagged_some", "flagged_short"]


def overlap_signal(longest_flagged: int) -> str:
    """The overlap rule, from the longest match the chance model flags (0: none flagged)."""
    if longest_flagged >= LONG_TOKENS:
        return STRONG
    if longest_flagged >= SOME_TOKENS:
        return SOME
    return NONE


def overlap_evidence(project: "Project", model: str) -> pd.DataFrame:
    """Per book: the longest overlap with the corpus that reads strongest (``OVERLAP_EXTRA`` besides)."""
    from workbench.probes.leakage.overlap import overlap_frame

    frame = overlap_frame(project).dropna(subset=["book_id"])
    if frame.empty:
        return _empty(OVERLAP_EXTRA)
    frame = frame.assign(flagged_length=np.where(frame["unlikely_by_chance"].astype(bool), frame["longest"], 0))
    rows = []
    for (corpus, book_id), group in frame.groupby(["corpus", "book_id"], sort=True):
        flagged = group["flagged_length"].to_numpy()
        longest, top_flagged = int(group["longest"].max()), int(flagged.max())
        counts = (int((flagged >= LONG_TOKENS).sum()), int(((flagged >= SOME_TOKENS) & (flagged < LONG_TOKENS)).sum()),
                  int(((flagged > 0) & (flagged < SOME_TOKENS)).sum()))
        signal = overlap_signal(top_flagged)
        basis = (f"Against the corpus '{corpus}': of {len(group)} passages the longest shared sequence has {longest} "
                 f"tokens; unlikely by chance (p < 0.05): {counts[0]} of {LONG_TOKENS}+ tokens, {counts[1]} of "
                 f"{SOME_TOKENS}-{LONG_TOKENS - 1}, {counts[2]} shorter")
        if signal == STRONG:
            basis += f". A match of {LONG_TOKENS}+ tokens unlikely by chance: the book's text is in this corpus."
        elif signal == SOME:
            basis += f". The longest match unlikely by chance has {top_flagged} tokens, under {LONG_TOKENS}."
        else:
            basis += (f". No match of {SOME_TOKENS}+ tokens is unlikely by chance (the default chance model flags many "
                      "short common phrases, so shorter ones are not counted).")
        rows.append({"book_id": int(book_id), "value": float(longest), "ci_low": math.nan, "ci_high": math.nan,
                     "n": len(group), "signal": signal, "basis": basis, "corpus": corpus, "flagged_long": counts[0],
                     "flagged_some": counts[1], "flagged_short": counts[2]})
    return _strongest(rows, "{:.0f} tokens")[EVIDENCE_COLUMNS + OVERLAP_EXTRA]


# ---------------------------------------------------------------------------------------------- frequency
FREQUENCY_EXTRA = ["corpus", "found", "mean_count"]


def frequency_signal(found: int, ci_low: float) -> str:
    if ci_low >= FOUND_STRONG:
        return STRONG
    return SOME if found > 0 else NONE


def frequency_evidence(project: "Project", model: str) -> pd.DataFrame:
    """Per book: the share of its sampled n-grams found in the corpus that reads strongest."""
    from workbench.analysis.intervals import wilson_interval
    from workbench.probes.leakage.corpora import list_corpora
    from workbench.probes.leakage.frequency import counted_settings, grams_frame

    rows = []
    for corpus in list_corpora(project):
        settings = counted_settings(project, corpus.name)
        grams = grams_frame(project, corpus.name, settings).dropna(subset=["book_id"]) if settings else None
        if grams is None or grams.empty:
            continue
        for book_id, group in grams.groupby("book_id", sort=True):
            counts = group["count"].astype(int).to_numpy()
            found, n = int((counts > 0).sum()), len(counts)
            low, high = wilson_interval(found, n)
            signal = frequency_signal(found, low)
            basis = (f"Against the corpus '{corpus.name}': {found} of {n} sampled runs of {settings['gram']} words "
                     f"found ({found / n:.0%}, 95% Wilson {low:.0%}-{high:.0%}), mean count {counts.mean():.1f}")
            basis += {STRONG: ": most of the sampled text is in this corpus.",
                      SOME: ": some of the book's text occurs in this corpus (quoted, or a copy).",
                      NONE: ": none of the sampled text occurs in this corpus."}[signal]
            rows.append({"book_id": int(book_id), "value": found / n, "ci_low": low, "ci_high": high, "n": n,
                         "signal": signal, "basis": basis, "corpus": corpus.name, "found": found,
                         "mean_count": float(counts.mean())})
    if not rows:
        return _empty(FREQUENCY_EXTRA)
    return _strongest(rows, "{:.0%} found")[EVIDENCE_COLUMNS + FREQUENCY_EXTRA]


# ---------------------------------------------------------------------------------------------- membership
MEMBERSHIP_EXTRA = ["score_mean", "clean_books", "member_tag"]


def membership_signal(ci_low: float) -> str:
    if ci_low >= MEMBERSHIP_STRONG:
        return STRONG
    return SOME if ci_low > 0.5 else NONE


def membership_evidence(project: "Project", model: str) -> pd.DataFrame:
    """Per book the model scored: the AUC of its passages' Min-K%++ against the clean books' passages."""
    from workbench.probes.leakage import membership
    from workbench.probes.leakage.statistics import clustered_roc_auc

    try:
        passages = membership.scores(project, model, k_percent=MEMBERSHIP_K)
    except UserError:
        return _empty(MEMBERSHIP_EXTRA)
    passages = passages.dropna(subset=["book_id", MEMBERSHIP_SCORE])
    if passages.empty:
        return _empty(MEMBERSHIP_EXTRA)
    labels = membership.member_labels(project)
    direction = membership.DIRECTION[MEMBERSHIP_SCORE]
    by_book = {int(b): (direction * g[MEMBERSHIP_SCORE].astype(float)).to_numpy()
               for b, g in passages.groupby("book_id", sort=True)}
    clean = [b for b in by_book if labels.get(b) is False]
    if not clean:
        return _empty(MEMBERSHIP_EXTRA, f"Membership scores of '{model}' exist for {len(by_book)} books, but no book "
                      "tagged member=no has scores to compare them with: tag books the model cannot have seen "
                      "member=no (Library page) and score their passages too.")
    rows = []
    for book_id, values in by_book.items():
        others = [by_book[b] for b in clean if b != book_id]
        if not others:
            continue
        result = clustered_roc_auc([[v] for v in values], others)
        signal = membership_signal(result.ci_low) if not math.isnan(result.ci_low) else NONE
        tag = {True: "yes", False: "no"}.get(labels.get(book_id), "")
        basis = (f"Min-K%++ (k = {MEMBERSHIP_K:.0f}%) of {len(values)} passages against {sum(len(o) for o in others)} "
                 f"passages of {len(others)} books tagged member=no: ROC AUC {result.auc:.2f} (95% bootstrap "
                 f"{result.ci_low:.2f}-{result.ci_high:.2f}; 0.5 is no difference)")
        basis += {STRONG: ": strongly separated from the clean books.",
                  SOME: ": above the clean books, but membership scores are weak evidence on large pretrained models "
                        "(near chance in published tests), so no more than some.",
                  NONE: ": not above the clean books."}[signal]
        rows.append({"book_id": book_id, "value": result.auc, "ci_low": result.ci_low, "ci_high": result.ci_high,
                     "n": len(values), "signal": signal, "basis": basis,
                     "score_mean": float(direction * values.mean()), "clean_books": len(others), "member_tag": tag})
    return pd.DataFrame(rows, columns=EVIDENCE_COLUMNS + MEMBERSHIP_EXTRA) if rows else _empty(MEMBERSHIP_EXTRA)


# ---------------------------------------------------------------------------------------------- DE-COP
DECOP_EXTRA = ["p_value", "clean_mean", "group", "paraphraser", "orders"]


def decop_signal(p_value: float, ci_low: float, clean_mean: float | None) -> str:
    if not p_value < P_LEVEL:
        return NONE
    if clean_mean is None:
        return SOME
    return STRONG if ci_low > clean_mean else SOME


def decop_evidence(project: "Project", model: str) -> pd.DataFrame:
    """Per book the model was quizzed on: the DE-COP book score against chance and the clean books."""
    from workbench.probes.leakage.decop import accuracy_frame

    try:
        books = accuracy_frame(project, model)
    except UserError:
        return _empty(DECOP_EXTRA)
    books = books.dropna(subset=["score", "book_id"])
    if books.empty:
        return _empty(DECOP_EXTRA)
    settings = ["paraphraser", "orders", "seed"]
    sizes = books.groupby(settings, sort=True).size()
    chosen = sizes[sizes == sizes.max()].index[0]
    books = books[(books[settings] == pd.Series(chosen, index=settings)).all(axis=1)]
    rows = []
    for row in books.itertuples(index=False):
        clean = books[(books["group"] == "clean") & (books["book_id"] != row.book_id)]
        clean_mean = float(clean["score"].mean()) if len(clean) else None
        signal = decop_signal(float(row.p_value), float(row.ci_low), clean_mean)
        basis = (f"Picked the verbatim passage in {row.score:.0%} of answers over {row.passages} passages (95% Wilson "
                 f"{row.ci_low:.0%}-{row.ci_high:.0%}); against chance (25%) p = {row.p_value:.3g}; ")
        basis += (f"the {len(clean)} clean books score {clean_mean:.0%} on average" if clean_mean is not None else
                  "no clean books to compare with (tag books member=no, or give the model's training cutoff)")
        basis += {STRONG: ": above chance and above the clean books.",
                  SOME: ": above chance, but " + ("the interval reaches the clean books' mean." if clean_mean is not None
                                                  else "that alone can come from style rather than memory."),
                  NONE: ": " + ("not above chance." if not row.p_value < P_LEVEL else "not above the clean books.")}[signal]
        rows.append({"book_id": int(row.book_id), "value": float(row.score), "ci_low": float(row.ci_low),
                     "ci_high": float(row.ci_high), "n": int(row.passages), "signal": signal, "basis": basis,
                     "p_value": float(row.p_value), "clean_mean": clean_mean if clean_mean is not None else math.nan,
                     "group": row.group, "paraphraser": row.paraphraser, "orders": int(row.orders)})
    return pd.DataFrame(rows, columns=EVIDENCE_COLUMNS + DECOP_EXTRA)


OVERLAP_RULE = (f"strong: a passage shares at least {LONG_TOKENS} tokens with the corpus, and the chance model calls "
                f"the match unlikely by chance (p < 0.05); some: the longest such match has {SOME_TOKENS}-"
                f"{LONG_TOKENS - 1} tokens; none: no flagged match of {SOME_TOKENS}+ tokens (the default chance model "
                "flags many short common phrases, so shorter matches do not count). The corpus reading strongest is "
                "shown; it says the text is in the corpus, not that the model read it.")
FREQUENCY_RULE = (f"strong: the 95% Wilson interval of the share of the book's sampled n-grams found in the corpus has "
                  f"its lower end at {FOUND_STRONG:.0%} or more; some: at least one found; none: none found. About the "
                  "corpus, not the model.")
MEMBERSHIP_RULE = (f"ROC AUC of Min-K%++ (k = {MEMBERSHIP_K:.0f}%) of the book's passages against those of books tagged "
                   f"member=no. Membership scores are weak on large pretrained models, so strong only when strongly "
                   f"separated: the bootstrap interval's lower end at least {MEMBERSHIP_STRONG}; some: above 0.5; "
                   "none: otherwise.")
DECOP_RULE = ("strong: the book score is above chance (25%; one-sided randomisation test over passages, p < 0.05) and "
              "its 95% Wilson interval lies above the mean score of the clean books (member=no or published after "
              "the training cutoff); some: above chance but no clean books, or the interval reaches their mean; "
              "none: not above chance or not above the clean books.")
register_evidence(EvidenceSource("overlap", "Overlap with a reference corpus", "longest shared sequence (tokens)",
                                 overlap_evidence, order=40, about=CORPUS, rule=OVERLAP_RULE))
register_evidence(EvidenceSource("frequency", "N-gram frequency in a reference corpus",
                                 "share of sampled n-grams found", frequency_evidence, order=50, about=CORPUS,
                                 rule=FREQUENCY_RULE))
register_evidence(EvidenceSource("decop", "DE-COP", "verbatim passage picked (share)", decop_evidence, order=30,
                                 rule=DECOP_RULE))
register_evidence(EvidenceSource("membership", "Membership score", "ROC AUC against clean books",
                                 membership_evidence, order=60, rule=MEMBERSHIP_RULE))
