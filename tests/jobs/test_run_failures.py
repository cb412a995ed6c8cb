"""Why a run's items failed: reasons read from the stored responses, grouped when only their numbers differ."""

from __future__ import annotations

from workbench import jobs
from workbench.jobs import Outcome, Unit
from workbench.run_failures import failure_reasons, group_failures


def test_failures_that_differ_only_in_numbers_are_counted_together():
    reasons = [("The prompt is 598 tokens; the model reads 512.", 9), ("The prompt is 604 tokens; the model reads 512.", 7),
               ("The server failed (HTTP 500).", 3)]
    grouped = group_failures(reasons)
    assert grouped[0] == ("The prompt is 598 tokens; the model reads 512. (the numbers vary)", 16)
    assert grouped[1] == ("The server failed (HTTP 500).", 3)


def test_a_runs_failure_reasons_come_from_its_stored_responses(project):
    errors = {0: "The prompt is 598 tokens; the model reads 512.", 1: "The prompt is 604 tokens; the model reads 512.",
              2: "The prompt is 598 tokens; the model reads 512.", 3: None}

    def process(units, state):
        for unit in units:
            if unit.item_id in errors:
                yield unit, Outcome(status="failed", error=errors[unit.item_id])
            else:
                yield unit, Outcome(raw="Elizabeth")

    run_id = jobs.create_run(project, "cloze")
    other = jobs.create_run(project, "cloze")
    jobs.run_job(project, run_id, [Unit(i) for i in range(6)], process)
    jobs.run_job(project, other, [Unit(0)], process)
    assert failure_reasons(project, run_id) == [
        ("The prompt is 598 tokens; the model reads 512. (the numbers vary)", 3),
        ("unknown error", 1),
    ]
    assert failure_reasons(project, other) == [("The prompt is 598 tokens; the model reads 512.", 1)]
