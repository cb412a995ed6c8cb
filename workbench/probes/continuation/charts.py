"""The continuation probe's exports: the per-book table, the ranked chart of extractable shares with the
unseen-books baseline, and the distribution of matched lengths (shown on the Continuation page)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from workbench.export.registry import (
    NUMBER,
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

PAGE = "continuation"
CLICK_BOOK = "Click to find the book in the table."
SEEN_COLOUR, UNSEEN_COLOUR, BASELINE_COLOUR = "#1f5f99", "#9a9a9a", "#b03a2e"


def _number(value: Any) -> int | None:
    return None if value in (None, "", 0, "0") else int(value)


def model_choices(project: "Project", chosen: dict[str, Any]) -> list[tuple[str, Any]]:
    from workbench.probes.continuation.results import tested_models

    return [(m, m) for m in tested_models(project)]


MODEL = ChartOption("model", "Model", choices=model_choices, tooltip="The model whose continuations are shown")
MATCH = ChartOption("match_tokens", "Tokens that must match", NUMBER, default=0, low=0, high=10_000,
                    tooltip="A passage is extractable when at least this many leading tokens agree with the book; "
                            "0: all of the continuation (word for word, as Carlini et al. count it)")


def books_frame(project: "Project", model: str | None = None, match_tokens: Any = None, cutoff_year: Any = None,
                **_: Any) -> pd.DataFrame:
    from workbench.probes.continuation.results import BOOK_COLUMNS, book_table

    if not model:
        return pd.DataFrame(columns=BOOK_COLUMNS)
    return book_table(project, model, match_tokens=_number(match_tokens), cutoff_year=_number(cutoff_year))


def passages_table(project: "Project", model: str | None = None, match_tokens: Any = None,
                   include_text: Any = False, **_: Any) -> pd.DataFrame:
    from workbench.probes.continuation.results import PASSAGE_COLUMNS, passage_frame

    if not model:
        return pd.DataFrame(columns=PASSAGE_COLUMNS)
    return passage_frame(project, model, match_tokens=_number(match_tokens),
                         include_text=str(include_text).lower() in ("1", "true", "yes"))


def draw_ranked(frame: pd.DataFrame, fig: "Figure", **_: Any) -> list[Marks]:
    from workbench.probes.continuation.results import baseline

    ax = fig.add_subplot()
    ordered = frame.sort_values(["extractable_share", "book_id"], ascending=[True, True]).reset_index(drop=True)
    y = np.arange(len(ordered))
    share = ordered["extractable_share"].to_numpy(float)
    low, high = ordered["ci_low"].to_numpy(float), ordered["ci_high"].to_numpy(float)
    unseen = ordered["unseen"].astype(bool).to_numpy()
    for mask, colour, label in ((~unseen, SEEN_COLOUR, "books tested"), (unseen, UNSEEN_COLOUR, "unseen books")):
        if mask.any():
            ax.errorbar(share[mask], y[mask], xerr=[share[mask] - low[mask], high[mask] - share[mask]], fmt="o",
                        color=colour, ecolor=colour, elinewidth=1, capsize=2, markersize=4, label=label)
    base, base_low, base_high, base_n = baseline(frame)
    if base_n:
        ax.axvspan(base_low, base_high, color=BASELINE_COLOUR, alpha=0.12, lw=0)
        ax.axvline(base, color=BASELINE_COLOUR, lw=1.2, ls="--",
                   label=f"unseen books: {base:.1%} of {base_n} passages")
    ax.set_yticks(y)
    ax.set_yticklabels([str(t)[:40] for t in ordered["title"]], fontsize="small" if len(y) < 30 else "x-small")
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.7, len(y) - 0.3)
    m, n = int(ordered["match_tokens"].iloc[0]), int(ordered["continue_tokens"].iloc[0])
    ax.set_xlabel(f"extractable share (first {m} of {n} tokens exactly right), 95% Wilson interval")
    ax.legend(fontsize="small", frameon=False, loc="lower right")
    rows = list(ordered.itertuples(index=False))

    def text(i: int) -> str:
        row = rows[i]
        return hover_text(row.title, f"{int(row.extractable)} of {int(row.passages)} passages extractable "
                          f"({row.extractable_share:.0%}; 95% CI {row.ci_low:.0%}-{row.ci_high:.0%})",
                          f"unseen: {row.unseen_why}" if row.unseen else "",
                          (f"above the unseen books (Holm-adjusted p = {row.p_holm:.2g})" if row.above_baseline
                           else "not above the unseen books" if row.p_holm == row.p_holm else ""), CLICK_BOOK)

    return [Marks(ax, share, y.astype(float), text, lambda i: {"book_id": int(rows[i].book_id), "book": rows[i].title})]


def ranked_caption(project: "Project", frame: pd.DataFrame, **_: Any) -> str:
    from workbench.probes.continuation.results import baseline

    above = int(frame["above_baseline"].sum())
    base, _, _, n = baseline(frame)
    said = (f"{above} of {len(frame)} books above the unseen books ({base:.1%} of {n} passages; Fisher's exact test, "
            "Holm-adjusted)." if n else
            f"{len(frame)} books; no unseen books to compare with: tag books the model cannot have seen member=no, "
            "or tag the model cutoff=YEAR.")
    return said + " Click a point to find the book in the table."


def lengths_frame(project: "Project", model: str | None = None, match_tokens: Any = None, cutoff_year: Any = None,
                  **_: Any) -> pd.DataFrame:
    from workbench.probes.continuation.results import chosen_runs, passage_frame, unseen_books

    columns = ["passage_id", "book_id", "exact_prefix", "longest_common", "continue_tokens", "unseen"]
    if not model:
        return pd.DataFrame(columns=columns)
    chosen = chosen_runs(project, model)
    if chosen is None:
        return pd.DataFrame(columns=columns)
    frame = passage_frame(project, model, match_tokens=_number(match_tokens), chosen=chosen)
    unseen = unseen_books(project, frame["book_id"].unique().tolist(), model, _number(cutoff_year))
    frame = frame.assign(continue_tokens=chosen.setting.continue_tokens,
                         unseen=[int(b) in unseen for b in frame["book_id"]])
    return frame[columns]


def draw_lengths(frame: pd.DataFrame, fig: "Figure", measure: str = "exact_prefix", **_: Any) -> list[Marks]:
    ax = fig.add_subplot()
    n = int(frame["continue_tokens"].iloc[0])
    bins = np.arange(n + 2) - 0.5
    unseen = frame["unseen"].astype(bool).to_numpy()
    marks = []
    width = 0.4
    for offset, mask, colour, label in ((-0.2, ~unseen, SEEN_COLOUR, "books tested"),
                                        (0.2, unseen, UNSEEN_COLOUR, "unseen books")):
        if not mask.any():
            continue
        counts, _ = np.histogram(frame.loc[mask, "exact_prefix"].to_numpy(float), bins=bins)
        shares = counts / counts.sum()
        x = np.arange(n + 1) + offset - width / 2
        ax.bar(x, shares, width=width, align="edge", color=colour, label=f"{label} ({int(mask.sum())} passages)")

        def text(i: int, counts=counts, shares=shares, label=label) -> str:
            return hover_text(f"{i} token{'s' if i != 1 else ''} right from the start", f"{label}: {int(counts[i])} "
                              f"passage{'s' if counts[i] != 1 else ''} ({shares[i]:.0%})")

        marks.append(Marks(ax, x, np.zeros_like(shares), text, None, width=np.full_like(shares, width), height=shares))
    ax.set_xlabel(f"tokens right from the start of the continuation (of {n})")
    ax.set_ylabel("share of passages")
    ax.set_xlim(-1, n + 1)
    ax.legend(fontsize="small", frameon=False)
    return marks


def lengths_caption(project: "Project", frame: pd.DataFrame, **_: Any) -> str:
    n = int(frame["continue_tokens"].iloc[0])
    full = int((frame["exact_prefix"] >= n).sum())
    return (f"{len(frame)} passages; {full} continued word for word for all {n} tokens. Longest common stretch "
            f"anywhere: median {frame['longest_common'].median():.0f} tokens.")


def _empty(project: "Project", **_: Any) -> str:
    return ("No continuation runs yet: choose a model and books above and press Run (or 'palimpsest continuation "
            "run').")


register_table(TableSpec("continuation-books", "Continuation: extractable share per book", books_frame,
                         "per book: passages, extractable passages, share with Wilson interval, mean matched lengths, "
                         "the unseen-books baseline and Fisher's test (model=LABEL; match_tokens=M; cutoff_year=Y)"))
register_table(TableSpec("continuation-passages", "Continuation: scores per passage", passages_table,
                         "offsets of each passage in its book, lengths and places of the matches, edit similarity; no "
                         "text unless include_text=true (model=LABEL; match_tokens=M)"))
register_chart(ChartSpec(
    "continuation-ranked", "Continuation: extractable share per book", books_frame, draw_ranked,
    "Books ranked by the share of passages the model continues word for word, with 95% Wilson intervals and the "
    "share on books it cannot have seen", size_inches=(7.0, 6.0), options=(MODEL, MATCH), page=PAGE,
    caption=ranked_caption, empty=_empty))
register_chart(ChartSpec(
    "continuation-lengths", "Continuation: distribution of matched lengths", lengths_frame, draw_lengths,
    "How many tokens of each continuation the model got right from the start, tested books against unseen ones",
    options=(MODEL,), page=PAGE, caption=lengths_caption, empty=_empty))
