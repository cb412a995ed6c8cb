"""The reading probe's model work, planned once for the command line and the Reading page
(``workbench.work.Work``): a model writing a book's scene summaries (and their false versions), and a model
answering a book's questions. Each looks its model up once, estimates what is still to be asked, runs resumably
and says how it went (the summaries: what was made, then the runs that stopped early or have failures)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from workbench.progress import TaskState

if TYPE_CHECKING:
    from workbench.project import Project
    from workbench.work import Work

#: what the reading probe's work changes, for the views that show it
CHANGES = ("reading-results",)


def summaries_work(project: "Project", book_id: int, model: str, *, hierarchical: bool = False,
                   group: int | None = None, max_tokens: int | None = None, max_attempts: int | None = None,
                   next_step: str = "ask again for just those to retry them") -> "Work":
    """``model`` summarizes the scenes of ``book_id`` (and, ``hierarchical``, groups of them), each summary
    followed by a false version; the settings left out are the probe's defaults."""
    from workbench.models.catalog import runnable_model
    from workbench.probes.reading import summaries
    from workbench.work import Work, WorkOutcome

    spec = runnable_model(project, model, "write summaries")
    settings = {"hierarchical": hierarchical,
                "group": summaries.DEFAULT_GROUP if group is None else int(group),
                "max_tokens": summaries.SUMMARY_PARAMS.max_tokens if max_tokens is None else int(max_tokens)}
    attempts = summaries.DEFAULT_MAX_ATTEMPTS if max_attempts is None else int(max_attempts)

    def perform(state: TaskState) -> WorkOutcome:
        made = summaries.summarize_with_model(project, book_id, spec, max_attempts=attempts, state=state, **settings)
        unfinished = made.unfinished()
        return WorkOutcome(reports=[report for _, report in unfinished], labels=[what for what, _ in unfinished],
                           value=made)

    work = Work(project, f"Summarizing book {book_id} with {spec.label}", [spec], perform,
                cost=lambda s: summaries.estimate_summary_cost(project, book_id, s, **settings), changes=CHANGES,
                unit="scenes", next_step=next_step, headline=lambda outcome: outcome.value.describe())
    work.heading = f"Summaries by {spec.label}"
    return work


def questions_work(project: "Project", model: str, *, variant: str = "original",
                   book_ids: Sequence[int] | None = None, context_words: int | None = None,
                   choice_params: dict[str, Any] | None = None, retry_failed: bool = False,
                   next_step: str = "ask again for just those to retry them") -> "Work":
    """``model`` answers every question of the newest question set of each book (of ``book_ids``, if given)
    in the ``variant``: one run per question set."""
    from workbench.models.catalog import runnable_model
    from workbench.probes.reading.run import estimate_questions_cost, run_questions
    from workbench.work import Work

    spec = runnable_model(project, model, "answer questions")
    books = list(book_ids) if book_ids else None
    where = {"variant": variant, "book_ids": books, "context_words": context_words, "choice_params": choice_params}

    def perform(state: TaskState):
        return run_questions(project, spec, state=state, retry_failed=retry_failed, **where)

    work = Work(project, f"Reading questions to {spec.label}", [spec], perform,
                cost=lambda s: estimate_questions_cost(project, s, **where), changes=CHANGES,
                retry_failed=retry_failed, unit="questions", next_step=next_step,
                labels=[f"Questions to {spec.label}"])
    return work
