"""Why items of a run failed, said once per reason: messages that differ only in their numbers (token counts,
line numbers, HTTP codes) are counted together, most frequent first. The Jobs and Name cloze pages show these;
``describe_outcome`` says how a run ended in a page's words."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from workbench.project import Project


class RunOutcome(Protocol):
    """What ``describe_outcome`` reads of a run's report (``jobs.JobReport``; this module stays below the runner,
    which uses it)."""

    run_id: int
    total: int
    answered: int
    failed: int
    failed_total: int
    status: str
    message: str

UNKNOWN = "unknown error"


def group_failures(reasons: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """[(message, count)] -> the same, grouped; each group shows its commonest wording, marked when the
    numbers in it vary."""
    groups: dict[str, list] = {}
    for error, n in reasons:
        text = str(error or UNKNOWN)
        group = groups.setdefault(re.sub(r"\d+", "#", text), [text, 0, 0])
        group[1] += int(n)
        group[2] += 1
    ordered = sorted(groups.values(), key=lambda g: -g[1])
    return [(example + (" (the numbers vary)" if variants > 1 else ""), total) for example, total, variants in ordered]


def failure_reasons(project: "Project", run_id: int) -> list[tuple[str, int]]:
    """The grouped reasons of a run's failed items (read from the stored responses)."""
    rows = project.db.execute(
        "SELECT error, COUNT(*) AS n FROM responses WHERE run_id = ? AND status = 'failed' GROUP BY error"
        " ORDER BY n DESC", [run_id]).fetchall()
    return group_failures([(error, n) for error, n in rows])


def describe_outcome(project: "Project", report: RunOutcome, what: str) -> str:
    """How a run ended, in a page's words: how many items have an answer and how many failed, the commonest
    reason, how to ask again for just the failures (the command line says the same through
    ``cli.common.report_run``), and why the run stopped when it did not finish."""
    failed = report.failed_total or report.failed  # a stopped run has no total yet
    text = f"{what}: {report.answered:,} of {report.total:,} answered" + (f", {failed:,} failed." if failed else ".")
    if failed:
        reasons = failure_reasons(project, report.run_id)
        if reasons:
            reason = reasons[0][0].rstrip(".")
            text += f" {'All' if reasons[0][1] == failed else 'Most'} failed because: {reason}."
        text += (f" To ask again for just those, choose run {report.run_id} on the Jobs page and press "
                 "Retry failed only.")
    if report.status in ("cancelled", "interrupted") and report.message:
        text += f" {report.message}"
    return text
