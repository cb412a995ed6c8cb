"""Figures and tables of the leakage probe, registered in the export registry.

Charts (options as ``key=value``; ``corpus`` names a reference corpus, ``model`` a model label):

- ``leakage-overlap``: each passage's longest overlap against its length, with the y = x line (the
  whole passage occurs) and the overlaps unlikely to be chance in red (the leakage study's Figure 1);
  ``background`` names the corpus the chance is estimated on (default: the same corpus less the match's
  own occurrences), and the chance model is written under the figure;
- ``leakage-overlap-frequency``: the longest overlap's frequency in the corpus against its length
  (Figure 2);
- ``leakage-frequency``: book frequency in the corpus against name-cloze accuracy, with Spearman's rho
  overall and per group (*Speak, Memory* Table 3);
- ``membership-scores``: each membership score's distribution over books, members against
  non-members, with the ROC AUC;
- ``membership-roc``: the ROC curve of each membership score over books and over passages, with the AUC
  and its bootstrap interval (passages: books redrawn).

Where books lack member / non-member tags, the membership charts say what to tag instead of drawing. Both
membership charts take ``score`` (one score; default: every score, a panel or a curve each).

The Leakage page shows them in its tabs (``page``: ``leakage.overlap``, ``leakage.frequency``,
``leakage.membership``), drawn by these same functions: a passage's point opens the passage, a book's point
finds the book in the tab's table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from workbench.errors import UserError
from workbench.export.registry import (
    ChartOption,
    ChartSpec,
    Marks,
    TableSpec,
    hover_text,
    register_chart,
    register_table,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from workbench.project import Project

FLAG_COLOUR, PLAIN_COLOUR, LINE_COLOUR = "#c0392b", "#2c3e50", "#e67e22"
SCORE_TITLES = {"perplexity": "perplexity", "zlib_ratio": "zlib ratio", "min_k": "Min-K%", "min_k_pp": "Min-K%++",
                "ref_ratio": "reference ratio", "ref_diff": "reference difference"}
UNIT_TITLES = {"book": "by book (book means)", "passage": "by passage"}
REFERENCE_SCORES = ("ref_ratio", "ref_diff")  # only where a reference model read the passages
CLICK_PASSAGE = "click to read the passage"
CLICK_BOOK = "click to find the book in the table"
EVERY_SCORE = ""


def times(count: int) -> str:
    """How often, in words: once, twice, 7 times."""
    return "once" if count == 1 else "twice" if count == 2 else f"{count:,} times"


def chance_line(value: Any) -> str:
    if value is None or value != value:
        return ""
    return f"chance of it by accident {float(value):.2g}" + (" (below 0.05)" if float(value) < 0.05 else "")


def _corpus(project: "Project", corpus: str | None) -> str:
    from workbench.probes.leakage.corpora import list_corpora

    if corpus:
        return corpus
    names = [c.name for c in list_corpora(project)]
    if not names:
        raise UserError("The project has no reference corpus yet: build one (palimpsest corpus index) first.")
    return names[0]


# ---------------------------------------------------------------------------------------------- overlap
def overlap_chart_frame(project: "Project", corpus: str | None = None, background: str | None = None,
                        **_: Any) -> pd.DataFrame:
    from workbench.probes.leakage.overlap import overlap_frame

    frame = overlap_frame(project, _corpus(project, corpus), background=background or None)
    return frame[["corpus", "book", "book_id", "passage_id", "item_id", "tokens", "longest", "frequency", "log_prob",
                  "chance_p", "unlikely_by_chance", "chance_model", "longest_text"]]


def _chance_caption(fig: "Figure", frame: pd.DataFrame) -> None:
    """The chance model under the figure (the one most rows have; passages without an estimate say why in
    the CSV)."""
    if "chance_model" in frame and not frame.empty:
        # as the figure's bottom label: the constrained layout makes room for it (a plain text lay over the x axis's)
        fig.supxlabel(f"Chance: {frame['chance_model'].mode().iloc[0]}", x=0.01, ha="left", fontsize=6, wrap=True)


def _scatter_flagged(ax, frame: pd.DataFrame, x: str, y: str) -> None:
    """Passages as crosses, those unlikely to be chance in red. Each place is drawn once: passages have whole
    numbers of tokens, so tens of thousands of them share a few thousand places, and a cross drawn again on
    itself changes nothing but the time it takes (and the size of a PDF)."""
    flagged = frame["unlikely_by_chance"].fillna(False).astype(bool)
    for part, colour, label in ((~flagged, PLAIN_COLOUR, "could be chance"),
                                (flagged, FLAG_COLOUR, "chance of occurring < 0.05")):
        places = frame.loc[part, [x, y]].drop_duplicates()
        ax.scatter(places[x], places[y], marker="+", color=colour, linewidths=0.8,
                   label=f"{label} ({int(part.sum()):,})")


def passage_marks(ax, frame: pd.DataFrame, x: str, y: str) -> Marks:
    """A mark per passage: its book, number and overlap on hover (written then: 57,000 passages' texts written
    at once held the window for seconds); a click opens the passage."""
    rows = frame.reset_index(drop=True)

    def text(i: int) -> str:
        row = rows.iloc[i]
        longest, tokens = int(row["longest"]), int(row["tokens"])
        share = f" ({longest / tokens:.0%})" if tokens else ""
        lines = [f"longest overlap {longest} of {tokens} tokens{share}",
                 f"found {times(int(row['frequency']))} in the corpus", chance_line(row["chance_p"])] if longest \
            else ["no token of it is in the corpus"]
        return hover_text(f"{row['book']}, passage {row['passage_id']}", *lines, CLICK_PASSAGE)

    def target(i: int) -> dict[str, Any]:
        row = rows.iloc[i]
        return {"item_id": int(row["item_id"]), "book": row["book"], "passage_id": str(row["passage_id"])}

    return Marks(ax, rows[x].to_numpy(float), rows[y].to_numpy(float), text, target)


def draw_overlap(frame: pd.DataFrame, fig: "Figure", **_: Any) -> list[Marks]:
    ax = fig.add_subplot()
    _scatter_flagged(ax, frame, "tokens", "longest")
    top = max(1, int(frame["tokens"].max()))
    ax.plot([0, top], [0, top], color=LINE_COLOUR, linewidth=1, label="y = x (the whole passage)")
    ax.legend(loc="upper left", fontsize="small", frameon=False)
    ax.set_xlim(0, top * 1.03)
    ax.set_ylim(0, top * 1.03)
    ax.set_xlabel("passage length (tokens)")
    ax.set_ylabel("longest overlap (tokens)")
    ax.set_title(f"Longest overlap with {frame['corpus'].iloc[0]} ({len(frame):,} passages)")
    _chance_caption(fig, frame)
    return [passage_marks(ax, frame, "tokens", "longest")]


def overlap_caption(project: "Project", frame: pd.DataFrame, **_: Any) -> str:
    flagged = int(frame["unlikely_by_chance"].fillna(False).astype(bool).sum())
    whole = int((frame["longest"] >= frame["tokens"]).sum())
    corpus = frame["corpus"].iloc[0]
    return (f"{flagged:,} of {len(frame):,} passages share a sequence with {corpus} that is unlikely to occur by "
            f"chance; {whole:,} occur whole (on the line y = x). Click a point to read its passage.")


def draw_overlap_frequency(frame: pd.DataFrame, fig: "Figure", **_: Any) -> list[Marks]:
    shown = frame[(frame["longest"] > 0) & (frame["frequency"] > 0)]
    if shown.empty:
        raise UserError(f"No passage shares even one token with {frame['corpus'].iloc[0]}.")
    ax = fig.add_subplot()
    _scatter_flagged(ax, shown, "longest", "frequency")
    ax.set_yscale("log")
    ax.legend(loc="upper right", fontsize="small", frameon=False)
    ax.set_xlabel("longest overlap (tokens)")
    ax.set_ylabel("its frequency in the corpus")
    ax.set_title(f"Frequency of the longest overlap in {frame['corpus'].iloc[0]}")
    _chance_caption(fig, frame)
    return [passage_marks(ax, shown, "longest", "frequency")]


def overlap_frequency_caption(project: "Project", frame: pd.DataFrame, **_: Any) -> str:
    return ("Long overlaps found only a few times point to the text itself; short ones found often are common "
            "phrases. Click a point to read its passage.")


# ---------------------------------------------------------------------------------------------- book frequency
def frequency_chart_frame(project: "Project", corpus: str | None = None, model: str | None = None,
                          split: str | None = None, per_book: Any = None, gram: Any = None, seed: Any = None,
                          **_: Any) -> pd.DataFrame:
    from workbench.probes.leakage.frequency import book_frequency, chosen_settings, correlations

    name = _corpus(project, corpus)
    chosen = {"model": model or None, "split": split or None, "settings": chosen_settings(per_book, gram, seed)}
    books = book_frequency(project, name, **chosen).dropna(subset=["accuracy"])
    if books.empty:
        return books
    rho = correlations(project, name, **chosen).set_index("group")
    books = books.copy()
    books["rho_group"] = [rho.loc[g, "rho"] if g in rho.index else np.nan for g in books["group"]]
    books["rho_all"] = rho.loc["all", "rho"]
    books["corpus"] = name
    return books


def draw_frequency(frame: pd.DataFrame, fig: "Figure", **_: Any) -> list[Marks]:
    from matplotlib import colormaps

    ax = fig.add_subplot()
    palette = colormaps["tab10"]
    for number, (group, part) in enumerate(frame.groupby("group", sort=True)):
        rho = part["rho_group"].iloc[0]
        label = f"{group or '(no group)'}: rho = {rho:.2f}" if np.isfinite(rho) else (group or "(no group)")
        ax.scatter(part["mean_count"].astype(float) + 1, part["accuracy"], s=18, color=palette(number % 10), label=label)
    ax.set_xscale("log")
    ax.set_xlabel("mean n-gram count in the corpus + 1 (log scale)")
    ax.set_ylabel("name-cloze accuracy")
    ax.set_ylim(-0.02, 1.02)
    ax.legend(fontsize="small", frameon=False)
    ax.set_title(f"Book frequency in {frame['corpus'].iloc[0]} and accuracy (all books: rho = {frame['rho_all'].iloc[0]:.2f})")
    rows = list(frame.itertuples(index=False))

    def text(i: int) -> str:
        row = rows[i]
        return hover_text(row.book, f"{row.group}" if row.group else "",
                          f"mean count of its n-grams {row.mean_count:,.2f}; {int(row.zero_counts)} of "
                          f"{int(row.passages)} not found", f"name-cloze accuracy {row.accuracy:.0%}", CLICK_BOOK)

    return [Marks(ax, frame["mean_count"].to_numpy(float) + 1, frame["accuracy"].to_numpy(float), text,
                  lambda i: {"book_id": int(rows[i].book_id), "book": rows[i].book})]


def frequency_caption(project: "Project", frame: pd.DataFrame, **_: Any) -> str:
    rho = frame["rho_all"].iloc[0]
    said = (f"All {len(frame)} books: Spearman's \u03c1 = {rho:.2f}." if rho == rho else
            f"{len(frame)} books: too few or too alike for a correlation.")
    return said + " Click a point to find the book in the table."


# ---------------------------------------------------------------------------------------------- membership
def _one_score(frame: pd.DataFrame, score: str | None) -> pd.DataFrame:
    """The rows of ``score`` (all of them without one)."""
    if not score:
        return frame
    if score not in SCORE_TITLES:
        raise UserError(f"The score is one of {', '.join(SCORE_TITLES)}, not '{score}'.")
    return frame[frame["score"] == score].reset_index(drop=True)


def score_choices(project: "Project", chosen: dict[str, Any]) -> list[tuple[str, Any]]:
    """Every score, the reference ones only where a reference model is chosen; or every score at once."""
    scores = [(title, score) for score, title in SCORE_TITLES.items()
              if chosen.get("reference") or score not in REFERENCE_SCORES]
    return scores + [("every score", EVERY_SCORE)]


SCORE = ChartOption("score", "Score", choices=score_choices, default="perplexity",
                    tooltip="Which membership score to draw (or every score, as the paper's figure does)")


def _labelled_scores(project: "Project", model: str | None, reference: str | None, k: Any, tag: str,
                     verb: str) -> tuple[pd.DataFrame, dict[int, bool]]:
    """The model's membership scores per passage and the books' member labels, refused (``UserError``, saying
    why) where no AUC can be computed from them."""
    from workbench.probes.leakage import membership

    if not model:
        raise UserError(f"Choose the model whose membership scores to {verb} (model=LABEL).")
    passages = membership.scores(project, model, reference=reference or None, k_percent=float(k))
    labels = membership.member_labels(project, tag)
    note = membership.auc_note(passages, labels, model=model, tag=tag)
    if note:
        raise UserError(note)
    return passages, labels


def membership_chart_frame(project: "Project", model: str | None = None, reference: str | None = None,
                           k: Any = 20, tag: str = "member", score: str | None = None, **_: Any) -> pd.DataFrame:
    from workbench.probes.leakage import membership

    passages, labels = _labelled_scores(project, model, reference, k, tag, "draw")
    books = membership.per_book(passages, labels)
    books = books[books["member"].isin(["yes", "no"])]
    aucs = membership.auc(books).set_index("score")
    long = books.melt(id_vars=["book", "book_id", "member", "passages"], value_vars=membership.SCORES,
                      var_name="score", value_name="value").dropna(subset=["value"])
    long["auc"] = long["score"].map(aucs["auc"])
    long["auc_low"] = long["score"].map(aucs["ci_low"])
    long["auc_high"] = long["score"].map(aucs["ci_high"])
    long["model"] = model
    return _one_score(long, score)


def draw_membership(frame: pd.DataFrame, fig: "Figure", **_: Any) -> list[Marks]:
    scores = [s for s in SCORE_TITLES if s in set(frame["score"])]
    fig.set_size_inches(2.4 * len(scores) + 0.6 + (0.8 if len(scores) == 1 else 0), 3.6)
    axes = fig.subplots(1, len(scores), squeeze=False)[0]
    marks = []
    for ax, score in zip(axes, scores):
        part = frame[frame["score"] == score]
        books = [part[part["member"] == g] for g in ("yes", "no")]
        groups = [b["value"].astype(float).to_numpy() for b in books]
        ax.boxplot([g for g in groups], tick_labels=[f"members ({len(books[0])})", f"non-members ({len(books[1])})"],
                   widths=0.5, showfliers=False)
        for position, (rows, values) in enumerate(zip(books, groups), start=1):
            jitter = np.random.default_rng(position).uniform(-0.12, 0.12, values.size)
            ax.scatter(position + jitter, values, s=8, color=FLAG_COLOUR if position == 1 else PLAIN_COLOUR, alpha=0.7)
            marks.append(_book_marks(ax, rows, position + jitter, values, score))
        auc, low, high = part["auc"].iloc[0], part["auc_low"].iloc[0], part["auc_high"].iloc[0]
        interval = f" [{low:.2f}, {high:.2f}]" if np.isfinite(low) else ""
        ax.set_title(f"{SCORE_TITLES[score]}\nAUC {auc:.2f}{interval}", fontsize="small")
        if len(scores) == 1:
            ax.set_ylabel(f"{SCORE_TITLES[score]} (mean over the book's passages)")
    fig.suptitle(f"Membership scores by book: {frame['model'].iloc[0]}", fontsize="medium")
    return marks


def _book_marks(ax, rows: pd.DataFrame, x: np.ndarray, values: np.ndarray, score: str) -> Marks:
    rows = list(rows.itertuples(index=False))

    def text(i: int) -> str:
        row = rows[i]
        return hover_text(row.book, f"{SCORE_TITLES[score]} {values[i]:.3g} (mean of {int(row.passages)} passages)",
                          f"member tag: {row.member}", CLICK_BOOK)

    return Marks(ax, x, values, text, lambda i: {"book_id": int(rows[i].book_id), "book": rows[i].book})


def membership_caption(project: "Project", frame: pd.DataFrame, **_: Any) -> str:
    scores = list(dict.fromkeys(frame["score"]))
    if len(scores) != 1:
        return ("ROC AUC (95% bootstrap CI) in each panel's title: how well the score tells members from non-members "
                "(1: perfectly; 0.5: not at all; below 0.5: the other way round).")
    first = frame.iloc[0]
    interval = "" if first["auc_low"] != first["auc_low"] else f" [{first['auc_low']:.2f}, {first['auc_high']:.2f}]"
    return (f"ROC AUC {first['auc']:.2f}{interval} (95% bootstrap CI): how well {SCORE_TITLES[scores[0]]} tells "
            "members from non-members (1: perfectly; 0.5: not at all; below 0.5: the other way round).")


def membership_roc_frame(project: "Project", model: str | None = None, reference: str | None = None,
                         k: Any = 20, tag: str = "member", score: str | None = None, **_: Any) -> pd.DataFrame:
    from workbench.probes.leakage import membership

    passages, labels = _labelled_scores(project, model, reference, k, tag, "draw")
    frame = membership.roc_points(passages, labels)
    frame["model"] = model
    return _one_score(frame, score)


def draw_membership_roc(frame: pd.DataFrame, fig: "Figure", **_: Any) -> None:
    from matplotlib import colormaps

    palette = colormaps["tab10"]
    axes = fig.subplots(1, 2, squeeze=False)[0]
    for ax, unit in zip(axes, ("book", "passage")):
        part = frame[frame["unit"] == unit]
        for number, score in enumerate(SCORE_TITLES):
            curve = part[part["score"] == score]
            if curve.empty:
                continue
            first = curve.iloc[0]
            interval = f" [{first['auc_low']:.2f}, {first['auc_high']:.2f}]" if np.isfinite(first["auc_low"]) else ""
            ax.plot(curve["fpr"], curve["tpr"], linewidth=1.2, color=palette(number % 10),
                    label=f"{SCORE_TITLES[score]}: AUC {first['auc']:.2f}{interval}")
        ax.plot([0, 1], [0, 1], linestyle="--", linewidth=0.8, color="#909090")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1.005)
        ax.set_aspect("equal")
        ax.set_xlabel("false positive rate (non-members taken for members)")
        ax.set_ylabel("true positive rate (members found)")
        if not part.empty:
            ax.set_title(f"{UNIT_TITLES[unit]}: {int(part['members'].iloc[0])} members, "
                         f"{int(part['non_members'].iloc[0])} non-members", fontsize="small")
            ax.legend(loc="lower right", fontsize="x-small", frameon=False)
    fig.suptitle(f"ROC curves of the membership scores: {frame['model'].iloc[0]}", fontsize="medium")


def roc_caption(project: "Project", frame: pd.DataFrame, **_: Any) -> str:
    return ("Each curve runs through every threshold of the score; the dashed line is guessing. Passages of one book "
            "are not independent: their interval redraws whole books.")


# ---------------------------------------------------------------------------------------------- tables
def _overlap_table(project: "Project", corpus: str | None = None, background: str | None = None,
                   **_: Any) -> pd.DataFrame:
    from workbench.probes.leakage.overlap import overlap_frame

    return overlap_frame(project, corpus or None, background=background or None)


def _frequency_table(project: "Project", corpus: str | None = None, model: str | None = None,
                     split: str | None = None, per_book: Any = None, gram: Any = None, seed: Any = None,
                     **_: Any) -> pd.DataFrame:
    from workbench.probes.leakage.frequency import book_frequency, chosen_settings

    return book_frequency(project, _corpus(project, corpus), model=model or None, split=split or None,
                          settings=chosen_settings(per_book, gram, seed))


def _correlation_table(project: "Project", corpus: str | None = None, model: str | None = None,
                       split: str | None = None, per_book: Any = None, gram: Any = None, seed: Any = None,
                       **_: Any) -> pd.DataFrame:
    from workbench.probes.leakage.frequency import chosen_settings, correlations

    return correlations(project, _corpus(project, corpus), model=model or None, split=split or None,
                        settings=chosen_settings(per_book, gram, seed))


def _membership_table(project: "Project", model: str | None = None, reference: str | None = None, k: Any = 20,
                      **_: Any) -> pd.DataFrame:
    from workbench.probes.leakage import membership

    if not model:
        raise UserError("Choose the model whose membership scores to export (model=LABEL).")
    return membership.scores(project, model, reference=reference or None, k_percent=float(k))


def _cutoff(value: Any) -> int | None:
    if value in (None, ""):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise UserError(f"cutoff_year={value} is not a year: write the last year of the model's training data, "
                        "such as 2023.") from None


def _membership_auc_table(project: "Project", model: str | None = None, reference: str | None = None, k: Any = 20,
                          tag: str = "member", **_: Any) -> pd.DataFrame:
    from workbench.probes.leakage import membership

    passages, labels = _labelled_scores(project, model, reference, k, tag, "export")
    return membership.auc_table(passages, labels)


def _decop_table(project: "Project", model: str | None = None, cutoff_year: Any = None, **_: Any) -> pd.DataFrame:
    from workbench.probes.leakage.decop import accuracy_frame

    return accuracy_frame(project, model or None, cutoff_year=_cutoff(cutoff_year))


def _decop_decision_table(project: "Project", model: str | None = None, cutoff_year: Any = None,
                          **_: Any) -> pd.DataFrame:
    from workbench.probes.leakage.decop import decision_frame

    return decision_frame(project, model or None, cutoff_year=_cutoff(cutoff_year))


def _corpora_table(project: "Project", **_: Any) -> pd.DataFrame:
    from workbench.probes.leakage.corpora import corpora_frame

    return corpora_frame(project)


register_chart(ChartSpec("leakage-overlap", "Leakage: longest overlap against passage length", overlap_chart_frame,
                         draw_overlap, "Each passage's longest sequence shared with a reference corpus, with y = x "
                         "and the overlaps unlikely to be chance in red", size_inches=(5.5, 5.0),
                         page="leakage.overlap", caption=overlap_caption))
register_chart(ChartSpec("leakage-overlap-frequency", "Leakage: frequency of the longest overlap", overlap_chart_frame,
                         draw_overlap_frequency, "How often each passage's longest overlap occurs in the corpus, "
                         "against its length", page="leakage.overlap", caption=overlap_frequency_caption))
register_chart(ChartSpec("leakage-frequency", "Leakage: book frequency and name-cloze accuracy", frequency_chart_frame,
                         draw_frequency, "Mean count of each book's n-grams in a corpus against name-cloze accuracy, "
                         "with Spearman's rho", page="leakage.frequency", caption=frequency_caption))
register_chart(ChartSpec("membership-scores", "Membership scores by member tag", membership_chart_frame,
                         draw_membership, "Per-book membership scores of known members and non-members, with ROC AUC",
                         size_inches=(12.0, 3.6), options=(SCORE,), page="leakage.membership",
                         caption=membership_caption))
register_chart(ChartSpec("membership-roc", "Membership: ROC curves by book and by passage", membership_roc_frame,
                         draw_membership_roc, "ROC curve of each membership score over tagged books and over their "
                         "passages, with the AUC and its bootstrap interval", size_inches=(10.0, 5.2),
                         options=(SCORE,), page="leakage.membership", caption=roc_caption))
register_table(TableSpec("leakage-overlap", "Leakage: overlap per passage", _overlap_table,
                         "longest shared sequence, its frequency, share of the passage, log-probability and chance "
                         "(background=CORPUS: the chance from another corpus's counts), and the chance model"))
register_table(TableSpec("leakage-frequency", "Leakage: book frequency", _frequency_table,
                         "mean n-gram count per book in a corpus, with name-cloze accuracy"))
register_table(TableSpec("leakage-frequency-correlations", "Leakage: frequency against accuracy", _correlation_table,
                         "Spearman's rho with p and bootstrap CI, overall and per group"))
register_table(TableSpec("membership-scores", "Membership scores per passage", _membership_table,
                         "perplexity, zlib ratio, Min-K%, Min-K%++, reference ratio and difference"))
register_table(TableSpec("membership-auc", "Membership: ROC AUC by book and by passage", _membership_auc_table,
                         "each score's ROC AUC over tagged books and over their passages, with bootstrap intervals"))
register_table(TableSpec("decop-accuracy", "DE-COP score per book", _decop_table,
                         "passages, orders, mean passage score with a Wilson CI over passages, passage-level test "
                         "against 25%, suspect or clean"))
register_table(TableSpec("decop-decision", "DE-COP decision: suspect against clean books", _decop_decision_table,
                         "ROC AUC of book scores, suspect vs clean books (member=no or after the training cutoff), "
                         "with bootstrap CI"))
register_table(TableSpec("reference-corpora", "Reference corpora", _corpora_table,
                         "the project's n-gram indexes: kind, tokenizer, size, where"))
