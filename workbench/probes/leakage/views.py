"""What each results view of the Leakage page shows, for the choices made on it: one frozen ``...Choices`` per view
(every option the tab offers for it: corpus, model, passages, settings, books) and one query per view returning
exactly the frame the tab's table shows, with what the tab writes above it in ``attrs["note"]``.

The Leakage page holds one ``Choices`` per tab, changed by its widgets, and passes it to the query on a worker;
the commands that print the same tables (``palimpsest leakage overlap|frequency``, ``membership scores --books``,
``decop accuracy``, ``surprisal``) build the same ``Choices`` from their options and call the same query, so the
terminal and the page show the same numbers. Qt-free."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import pandas as pd

from workbench.probes.leakage import frequency as _frequency
from workbench.probes.leakage import membership as _membership
from workbench.probes.leakage.decop import DEFAULT_ORDERS

if TYPE_CHECKING:
    from workbench.project import Project

#: the titles the Membership tab gives its scores (its columns and the AUC sentence above them)
SCORE_TITLES = {"perplexity": "Perplexity", "zlib_ratio": "zlib ratio", "min_k": "Min-K%", "min_k_pp": "Min-K%++",
                "ref_ratio": "Reference ratio", "ref_diff": "Reference difference"}
#: with fewer books with name-cloze accuracy, no Spearman's rho is worked out
RHO_BOOKS = 3


def _books(book_ids: Sequence[int] | None) -> tuple[int, ...] | None:
    return None if book_ids is None else tuple(int(b) for b in book_ids)


def _only_books(frame: pd.DataFrame, book_ids: tuple[int, ...] | None) -> pd.DataFrame:
    """The rows of ``frame`` of the books ``book_ids`` (every row when None), ``attrs`` kept."""
    if book_ids is None or frame.empty:
        return frame
    kept = frame[frame["book_id"].isin(book_ids)].reset_index(drop=True)
    kept.attrs = dict(frame.attrs)
    return kept


def empty_frame(columns: Sequence[str]) -> pd.DataFrame:
    """An empty table with ``columns``: what a tab shows before there is anything to read."""
    return pd.DataFrame(columns=list(columns))


# ---------------------------------------------------------------------------------------------- corpora
def corpora_table(project: "Project") -> pd.DataFrame:
    """The Corpora tab and ``palimpsest corpus list``: the project's reference corpora (no choices)."""
    from workbench.probes.leakage.corpora import corpora_frame

    return corpora_frame(project)


# ---------------------------------------------------------------------------------------------- overlap
@dataclass(frozen=True)
class OverlapChoices:
    """The Overlap tab: the corpus searched, where the chance comes from (None: the same corpus less the
    overlap's own occurrences), the passages a run reads (``cloze``, ``validity`` or a file's path), and which
    rows the table holds: ``passage_ids`` (None: every passage compared with the corpus; the command line gives
    those of its ``--source``/``--book``), ``book_ids`` (None: every book); ``positions`` adds the longest match
    ending at every token."""

    corpus: str | None = None
    background: str | None = None
    source: str = "cloze"
    passage_ids: tuple[int, ...] | None = None
    book_ids: tuple[int, ...] | None = None
    positions: bool = False


def overlap_table(project: "Project", choices: OverlapChoices) -> pd.DataFrame:
    """One row per passage compared with ``choices.corpus`` (``overlap.overlap_frame``), of the passages and
    books chosen; ``attrs["note"]``: which chance model the chance column comes from, and the passages without an
    estimate and why. Empty (with the columns) before a corpus is chosen."""
    from workbench.probes.leakage.overlap import COLUMNS, overlap_frame

    if not choices.corpus:
        frame = empty_frame(COLUMNS)
    else:
        frame = overlap_frame(project, choices.corpus, background=choices.background,
                              passage_ids=choices.passage_ids, positions=choices.positions)
        frame = _only_books(frame, choices.book_ids)
    frame.attrs["note"] = chance_note(frame)
    return frame


def chance_note(frame: pd.DataFrame) -> str:
    """Which chance model the table's chance column comes from, and the passages without an estimate and why."""
    from workbench.probes.leakage.chance import CAVEAT

    if frame.empty:
        return ""
    estimated = frame["chance_p"].notna()
    lines = []
    if estimated.any():
        model = str(frame.loc[estimated, "chance_model"].mode().iloc[0])
        lines.append("Chance: " + model + "." + ("" if "background corpus" in model else " " + CAVEAT))
    missing = frame.loc[~estimated & (frame["longest"] > 0), "chance_model"]
    for reason, rows in missing.value_counts().items():
        lines.append(f"{rows:,} passage{'s' if rows != 1 else ''}: {reason}.")
    return " ".join(lines)


# ---------------------------------------------------------------------------------------------- frequency
@dataclass(frozen=True)
class FrequencyChoices:
    """The Book frequency tab: the corpus, whose name-cloze accuracy (None: the only model with results), the book
    tag to compare within (None: before/after 1928), the count's settings (passages per book, words per n-gram,
    seed; ``per_book`` or ``gram`` None: the newest count's) and the books shown (None: every book)."""

    corpus: str | None = None
    model: str | None = None
    split: str | None = None
    per_book: int | None = _frequency.PER_BOOK
    gram: int | None = _frequency.GRAM
    seed: int = _frequency.SEED
    book_ids: tuple[int, ...] | None = None

    @property
    def settings(self) -> dict[str, int] | None:
        if self.per_book is None or self.gram is None:
            return None
        return {"per_book": int(self.per_book), "gram": int(self.gram), "seed": int(self.seed)}


def frequency_table(project: "Project", choices: FrequencyChoices) -> pd.DataFrame:
    """Per book (``frequency.book_frequency``) for the choices; ``attrs["rho"]``: Spearman's rho overall and per
    group (None with name-cloze accuracy for fewer than three books), ``attrs["note"]`` the same in words."""
    from workbench.probes.leakage.frequency import BOOK_COLUMNS, book_frequency, correlations

    if not choices.corpus:
        table = empty_frame(BOOK_COLUMNS)
        table.attrs.update(rho=None, note="")
        return table
    chosen = {"model": choices.model, "split": choices.split, "settings": choices.settings,
              "book_ids": choices.book_ids}
    table = book_frequency(project, choices.corpus, **chosen)
    enough = table["accuracy"].notna().sum() >= RHO_BOOKS
    rho = correlations(project, choices.corpus, books=table, **chosen) if enough else None
    table.attrs["rho"] = rho
    table.attrs["note"] = rho_note(rho)
    return table


def frequency_correlations(project: "Project", choices: FrequencyChoices) -> pd.DataFrame:
    """Spearman's rho of the choices' book frequency against name-cloze accuracy (``frequency.correlations``)."""
    from workbench.probes.leakage.frequency import correlations

    return correlations(project, choices.corpus, model=choices.model, split=choices.split,
                        settings=choices.settings, book_ids=choices.book_ids)


def rho_note(rho: pd.DataFrame | None) -> str:
    """Spearman's rho overall and per group, with its interval and the books behind it, in one line."""
    if rho is None or rho.empty:
        return "Spearman's rho needs name-cloze accuracy for at least three books."
    parts = []
    for row in rho.itertuples():
        interval = "" if row.ci_low != row.ci_low else f", 95% CI {row.ci_low:.2f} to {row.ci_high:.2f}"
        value = "n/a" if row.rho != row.rho else f"{row.rho:.2f} (p = {row.p_value:.2g}{interval})"
        parts.append(f"{row.group}: rho = {value}, {row.books} book{'' if row.books == 1 else 's'}")
    return "Frequency against cloze accuracy — " + "; ".join(parts)


# ---------------------------------------------------------------------------------------------- membership
@dataclass(frozen=True)
class MembershipChoices:
    """The Membership tab: the open model whose scores are shown, the reference model (None: none), Min-K%'s
    share of tokens, the passages a run reads, the book tag holding yes/no, and the books shown (None: all)."""

    model: str | None = None
    reference: str | None = None
    k_percent: float = _membership.K_PERCENT
    source: str = "cloze"
    tag: str = _membership.MEMBER_TAG
    book_ids: tuple[int, ...] | None = None


def membership_table(project: "Project", choices: MembershipChoices) -> pd.DataFrame:
    """Per book, the mean of each membership score and its member tag (``membership.per_book``);
    ``attrs["auc"]``: each score's ROC AUC over books and passages (None where the tags do not allow one),
    ``attrs["note"]``: the AUCs in words, or what to tag for them."""
    from workbench.probes.leakage import membership

    if not choices.model:
        books = membership.per_book(empty_frame(membership.PASSAGE_COLUMNS))
        books.attrs.update(auc=None, note="")
        return books
    passages = membership.scores(project, choices.model, reference=choices.reference, k_percent=choices.k_percent)
    labels = membership.member_labels(project, choices.tag)
    books = _only_books(membership.per_book(passages, labels), choices.book_ids)
    note = membership.auc_note(passages, labels, model=choices.model, tag=choices.tag)
    books.attrs["auc"] = None if note else membership.auc_table(passages, labels)
    books.attrs["note"] = note or membership.auc_summary(books.attrs["auc"], SCORE_TITLES)
    return books


# ---------------------------------------------------------------------------------------------- surprisal
@dataclass(frozen=True)
class SurprisalChoices:
    """The Surprisal tab: the open model and the text it read (its passage ``item``: None before one is read);
    ``correct``: the leading-white-space correction (None: where the tokenizer needs it)."""

    model: str | None = None
    item: int | None = None
    correct: bool | None = None


def surprisal_table(project: "Project", choices: SurprisalChoices) -> pd.DataFrame:
    """Word by word, the surprisal of the text ``choices.item`` under ``choices.model`` (``surprisal_frame``)."""
    from workbench.probes.leakage.surprisal import COLUMNS, surprisal_frame

    if not choices.model or choices.item is None:
        return empty_frame(COLUMNS)
    return surprisal_frame(project, choices.model, choices.item, correct=choices.correct)


# ---------------------------------------------------------------------------------------------- DE-COP
@dataclass(frozen=True)
class DecopChoices:
    """The DE-COP tab: the model tested (None: every model asked), the model writing paraphrases, the passages a
    run reads, option orders per passage, the training cutoff (None: the model's tag ``cutoff=YEAR``), the
    book tag holding yes/no, and the books shown (None: all)."""

    model: str | None = None
    paraphraser: str | None = None
    source: str = "cloze"
    orders: int = DEFAULT_ORDERS
    cutoff_year: int | None = None
    tag: str = _membership.MEMBER_TAG
    book_ids: tuple[int, ...] | None = None


def decop_table(project: "Project", choices: DecopChoices) -> pd.DataFrame:
    """Per model, paraphrases, orders and book, the DE-COP score against chance (``decop.accuracy_frame``);
    ``attrs["decided"]``: DE-COP's decision (``decop.decision_frame``, over every book), ``attrs["note"]``: the
    decision in words and where the training cutoff comes from."""
    from workbench.probes.leakage import decop
    from workbench.probes.leakage.decop_scores import describe_decision

    books = decop.accuracy_frame(project, choices.model, cutoff_year=choices.cutoff_year, tag=choices.tag)
    decided = decop.decision_frame(project, choices.model, cutoff_year=choices.cutoff_year, tag=choices.tag,
                                   books=books)
    lines = [describe_decision(row) for _, row in decided.iterrows()]
    if not books.empty:
        lines.append(decop.cutoff_note(project, choices.model, choices.cutoff_year))
    books = _only_books(books, choices.book_ids)
    books.attrs["decided"] = decided
    books.attrs["note"] = "\n".join(lines)
    return books
