"""DE-COP's model work, planned once for the command line and the Leakage page's DE-COP tab
(``workbench.work.Work``): the paraphraser writes three paraphrases of each passage, then the tested model picks
the verbatim passage among them in every order asked for; and new paraphrases for the passages that lack three
usable ones. Each looks its models up once (a paraphraser that is the tested model is asked about once), finds
its passages once (on the worker that estimates or runs it, not on the page), estimates what is still to be
asked, runs resumably and says how it went."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Sequence

from workbench.progress import TaskState

if TYPE_CHECKING:
    from workbench.models.prices import CostEstimate
    from workbench.models.spec import ModelSpec
    from workbench.project import Project
    from workbench.work import Work

#: what DE-COP work changes, for the views that show it
CHANGES = ("leakage-results",)
#: the label of the passages the tested model was not asked about (they lack usable paraphrases)
NOT_ASKED = "Passages not asked"


def _once(make: Callable[[], object]) -> Callable[[], object]:
    """``make()`` worked out the first time it is wanted, and kept."""
    kept: list = []

    def get():
        if not kept:
            kept.append(make())
        return kept[0]

    return get


def decop_work(project: "Project", model: str, paraphraser: str, source: str = "cloze", *,
               book_ids: Sequence[int] | None = None, orders: int | None = None, seed: int = 0,
               retry_failed: bool = False, project_path: str = "PROJECT",
               lacking_words: Callable[[str], str] | None = None,
               next_step: str = "ask again for just those to retry them") -> "Work":
    """Paraphrases of the passages of ``source`` by ``paraphraser``, then the questions to ``model``
    (``orders`` per passage) about those with three usable paraphrases; the others are named as not asked,
    in the core's words (``lacking_words`` rewords them for a page)."""
    from workbench.models.catalog import runnable_model
    from workbench.probes.leakage import decop, passages
    from workbench.work import Work, WorkOutcome

    orders = decop.check_orders(decop.DEFAULT_ORDERS if orders is None else int(orders))
    specs = [runnable_model(project, paraphraser), runnable_model(project, model)]
    ids = _once(lambda: passages.gather(project, source, book_ids=book_ids))
    costs = _once(lambda: decop.estimate_costs(project, model, paraphraser, ids(), orders=orders, seed=seed))

    def cost(spec: "ModelSpec") -> "CostEstimate":
        return costs()[spec.label]

    def perform(state: TaskState) -> WorkOutcome:
        chosen = ids()
        paraphrased = decop.run_paraphrases(project, paraphraser, passage_ids=chosen, seed=seed,
                                            retry_failed=retry_failed, state=state)
        outcome = WorkOutcome(reports=[paraphrased], labels=[f"Paraphrases by {paraphraser}"])
        if paraphrased.status == "cancelled" or state.cancelled:
            return outcome
        lacking = decop.lacking_paraphrases(project, paraphraser, chosen)
        message = decop.lacking_message(lacking, paraphraser, project_path)
        if message:
            outcome.problems[NOT_ASKED] = lacking_words(message) if lacking_words else message
        if len(lacking) < len(set(chosen)):
            asked = decop.run_quiz(project, model, paraphraser, orders=orders, seed=seed, passage_ids=chosen,
                                   retry_failed=retry_failed, state=state)
            outcome.reports.append(asked)
            outcome.labels.append(f"Questions to {model} ({orders} orders per passage)")
        return outcome

    work = Work(project, f"DE-COP on {model} (paraphrases by {paraphraser})", specs, perform, cost=cost,
                changes=CHANGES, retry_failed=retry_failed, next_step=next_step)
    work.heading = "DE-COP"
    return work


def regeneration_work(project: "Project", paraphraser: str,
                      passage_ids: "Sequence[int] | Callable[[], Sequence[int]]", *,
                      next_step: str = "ask again for just those to retry them") -> "Work":
    """Three new paraphrases by ``paraphraser`` of each of ``passage_ids`` (or of those a function gives, found
    when first wanted: on the worker); none to write is said as nothing left to ask."""
    from workbench.models.catalog import runnable_model
    from workbench.probes.leakage import decop
    from workbench.work import Work, WorkOutcome

    spec = runnable_model(project, paraphraser)
    ids = _once(lambda: [int(i) for i in (passage_ids() if callable(passage_ids) else passage_ids)])

    def cost(spec: "ModelSpec") -> "CostEstimate":
        from workbench.models.prices import estimate_cost

        return decop.estimate_regeneration(project, paraphraser, ids()) if ids() else \
            estimate_cost(spec, [], 0, project=project)

    def perform(state: TaskState):
        if not ids():
            return WorkOutcome()
        return decop.regenerate(project, paraphraser, ids(), state=state)

    return Work(project, f"New paraphrases by {paraphraser}", [spec], perform, cost=cost, changes=CHANGES,
                unit="paraphrases", next_step=next_step)
