"""Which model a name-cloze chart shows when nobody has chosen one.

The model with the most answered passages (answers stored with status ok, over its name-cloze runs), so
the chart opens on the fullest evidence rather than on whichever label sorts first; among models with as
many answers, the one run (or imported) most recently, the one the scholar is most likely working on.
The Charts page and ``palimpsest chart`` without a model option both use this order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from workbench.probes.cloze.analysis import ANSWER_KINDS

if TYPE_CHECKING:
    from workbench.project import Project


def models_by_preference(project: "Project", kinds: Sequence[str] = ANSWER_KINDS) -> list[str]:
    """Labels of the models with name-cloze responses (those of ``analysis.model_labels``), the default
    first: most answered passages, then the newest run, then the label. Counted per run through the (run,
    status) index: milliseconds on 114,000 answers, so the window may ask on its own thread."""
    rows = project.db.execute(
        f"""SELECT m.label, SUM(k.answered) AS answered, MAX(r.id) AS newest
            FROM runs r JOIN models m ON m.id = r.model_id
            JOIN (SELECT run_id, SUM(status = 'ok') AS answered FROM responses GROUP BY run_id) k
              ON k.run_id = r.id
            WHERE r.kind IN ({','.join('?' * len(kinds))})
            GROUP BY m.id ORDER BY answered DESC, newest DESC, m.label""",
        list(kinds),
    ).fetchall()
    return [r[0] for r in rows]

