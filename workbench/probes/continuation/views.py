"""What the Continuation page shows for the choices made on it: ``ContinuationChoices`` (every option the page
offers: the model, the book, the run's settings) and ``continuation_table``, the per-book frame its table shows.
``palimpsest continuation scores`` builds the same choices from its options and prints the same query. Qt-free."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd

from workbench.probes.continuation.run import DEFAULT_CONTINUE_TOKENS, DEFAULT_PER_BOOK, DEFAULT_PREFIX_TOKENS

if TYPE_CHECKING:
    from workbench.project import Project


@dataclass(frozen=True)
class ContinuationChoices:
    """The Continuation page: the model; the book (None: every book) a run covers and the table shows; a run's
    passages per book, prefix and continuation lengths; and how the runs are read: ``prefix_tokens`` and
    ``continue_tokens`` of the runs shown (None: as the model's newest run has them; the page shows the newest
    run's, its spin boxes set the next run's), the leading tokens that must match (None: all of the
    continuation) and the training cutoff (None: the model's tag ``cutoff=YEAR``)."""

    model: str | None = None
    book_id: int | None = None
    per_book: int = DEFAULT_PER_BOOK
    run_prefix_tokens: int = DEFAULT_PREFIX_TOKENS
    run_continue_tokens: int = DEFAULT_CONTINUE_TOKENS
    prefix_tokens: int | None = None
    continue_tokens: int | None = None
    match_tokens: int | None = None
    cutoff_year: int | None = None


def continuation_table(project: "Project", choices: ContinuationChoices) -> pd.DataFrame:
    """Per book (``results.book_table``) for the choices. With a book chosen, its row of the table of every book
    the runs cover: the baseline (the unseen books) and the Holm adjustment stay those over every book, so a
    book's numbers do not change with what is shown."""
    from workbench.probes.continuation.results import BOOK_COLUMNS, book_table

    if not choices.model:
        return pd.DataFrame(columns=BOOK_COLUMNS)
    table = book_table(project, choices.model, match_tokens=choices.match_tokens, cutoff_year=choices.cutoff_year,
                       prefix_tokens=choices.prefix_tokens, continue_tokens=choices.continue_tokens)
    if choices.book_id is not None:
        table = table[table["book_id"] == int(choices.book_id)].reset_index(drop=True)
    return table
