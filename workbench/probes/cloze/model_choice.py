"""Which model a name-cloze chart shows when nobody has chosen one.

The model with the most answered passages (answers stored with status ok, over its name-cloze runs), so
the chart opens on the fullest evidence rather than on whichever label sorts first; among models with as
many answers, the one run (or imported) most recently, the one the scholar is most likely working on.
The Charts page and ``palimpsest chart`` without a model option both use this order.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Sequence

from workbench.probes.cloze.kinds import ANSWER_KINDS
from workbench.runs import runs

if TYPE_CHECKING:
    from workbench.project import Project


def models_by_preference(project: "Project", kinds: Sequence[str] = ANSWER_KINDS) -> list[str]:
    """Labels of the models with name-cloze responses (those of ``analysis.model_labels``), the default
    first: most answered passages, then the newest run, then the label. Counted per run through the (run,
    status) index: milliseconds on 114,000 answers, so the window may ask on its own thread."""
    found = [run for run in runs(project, list(kinds), with_responses=True) if run.model is not None]
    answered = dict(project.db.execute(
        "SELECT run_id, SUM(status = 'ok') FROM responses WHERE run_id IN (SELECT value FROM json_each(?))"
        " GROUP BY run_id", [json.dumps([run.id for run in found])]).fetchall())
    per_model: dict[int, list] = {}  # model id -> [label, answered passages, newest run]
    for run in found:
        entry = per_model.setdefault(run.model_id, [run.model, 0, 0])
        entry[1] += int(answered.get(run.id) or 0)
        entry[2] = max(entry[2], run.id)
    return [label for label, _, _ in sorted(per_model.values(), key=lambda e: (-e[1], -e[2], e[0]))]
