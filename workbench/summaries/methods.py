"""Summaries in the methods text: the retry rule, the paragraph, and the statistics of the annotation task."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.export.methods import MethodsSection, RunFacts, Statistic, number, register_methods, same
from workbench.summaries.runs import DISTORT_RUN, RETRY_TEMPERATURE, SUMMARY_RUN

if TYPE_CHECKING:
    from workbench.project import Project

# ``workbench.annotation.agreement`` gives 95% intervals (Wilson at alpha 0.05; the 2.5th and 97.5th
# percentiles of its bootstrap draws).
LEVEL = "95%"


def summaries_facts(_project: "Project", run: dict) -> RunFacts:
    """The annotation task a run writes items for, and its retry rule."""
    return RunFacts({"summaries": {"annotation_task": run["config"].get("annotation_task"),
                                   "max_attempts": run["params"].get("max_attempts"),
                                   "retry_temperature": RETRY_TEMPERATURE}})


def summaries_paragraph(runs: list[dict]) -> str:
    attempts = same((r.get("summaries") or {}).get("max_attempts") for r in runs)
    retry = same((r.get("summaries") or {}).get("retry_temperature") for r in runs)
    limit = f"at most {attempts} attempts in all" if attempts else "a limited number of attempts"
    warmer = f", later attempts at a temperature of at least {number(retry)} and with another seed" if retry else ""
    return (
        "For the summary-validity task a model first summarized each scene with the summary template, then rewrote "
        "its own summary with the distortion template, keeping the characters and the setting but changing what "
        "happens. An answer is used only when text follows the marker the prompt asks for; otherwise the request "
        f"is repeated ({limit}{warmer}), and a unit that never succeeds is stored as a failure and left out of the "
        "annotation items. Annotators, who do not know which side is which, then pick the summary that is true to "
        "the scene.")


def summaries_statistics() -> list[Statistic]:
    from workbench.annotation import agreement

    return [
        Statistic(f"Accuracy with a Wilson score interval ({LEVEL})", "for how often annotators pick the true summary",
                  "statsmodels `proportion_confint` (method 'wilson')"),
        Statistic("Krippendorff's alpha (nominal)",
                  f"for agreement among the annotators' choices, with a {LEVEL} percentile bootstrap interval over "
                  f"items ({agreement.BOOTSTRAP_DRAWS:,} draws, seeded by the task)",
                  "the `krippendorff` package"),
        Statistic("Cohen's kappa (two annotators) or Fleiss' kappa (three or more)",
                  "for agreement on the items every annotator answered",
                  "statsmodels `cohens_kappa` and `fleiss_kappa`"),
    ]


register_methods(MethodsSection(
    key="summaries",
    title="Summaries for the summary-validity task",
    kinds=(SUMMARY_RUN, DISTORT_RUN),
    facts=summaries_facts,
    procedure=summaries_paragraph,
    statistics=summaries_statistics,
    order=50,
))
