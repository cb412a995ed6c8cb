"""The continuation probe's model work, planned once for the command line and the Continuation page
(``workbench.work.Work``): one model asked to continue passages of the books, its cost estimated from the
passages it will be given, run resumably, and how it went said in the one wording."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from workbench.errors import UserError
from workbench.progress import TaskState

if TYPE_CHECKING:
    from workbench.project import Project
    from workbench.work import Work

#: what a continuation run changes, for the views that show it
CHANGES = ("continuation-results",)


def continuation_work(project: "Project", model: str, *, book_ids: Sequence[int] | None = None,
                      per_book: int | None = None, prefix_tokens: int | None = None,
                      continue_tokens: int | None = None, seed: int | None = None, retry_failed: bool = False,
                      next_step: str = "ask again for just those to retry them") -> "Work":
    """``model`` continues ``per_book`` passages of each of ``book_ids`` (None: every book with a text); the
    settings left out are the probe's defaults."""
    from workbench.models.catalog import runnable_model
    from workbench.probes.continuation import run
    from workbench.work import Work

    per_book = run.DEFAULT_PER_BOOK if per_book is None else int(per_book)
    prefix_tokens = run.DEFAULT_PREFIX_TOKENS if prefix_tokens is None else int(prefix_tokens)
    continue_tokens = run.DEFAULT_CONTINUE_TOKENS if continue_tokens is None else int(continue_tokens)
    seed = run.DEFAULT_SEED if seed is None else int(seed)
    for name, value in (("passages per book", per_book), ("prefix tokens", prefix_tokens),
                        ("continuation tokens", continue_tokens)):
        if value < 1:
            raise UserError(f"The number of {name} must be at least 1.")
    books = [int(b) for b in book_ids] if book_ids else None
    spec = runnable_model(project, model)

    def perform(state: TaskState):
        return run.run_continuation(project, spec, book_ids=books, per_book=per_book, prefix_tokens=prefix_tokens,
                                    continue_tokens=continue_tokens, seed=seed, state=state,
                                    retry_failed=retry_failed)

    title = f"Continuation on {spec.label}"
    work = Work(project, f"Retrying failed answers: continuation on {spec.label}" if retry_failed else title,
                [spec], perform, changes=CHANGES, retry_failed=retry_failed, unit="passages", next_step=next_step,
                labels=[title],
                cost=lambda s: run.estimate(project, s, books, per_book, prefix_tokens, continue_tokens))
    work.heading = title
    return work
