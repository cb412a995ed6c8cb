"""Every REP completion with its label and category, by the lexical baseline or by a judge.

``classified_responses`` is the one table behind the statistics, the charts and the click-through
to raw text: a row per completion with the model, its decade and stage, the role and stem, the raw
completion, and what the chosen classifier made of it. Labels are computed here from stored raw
text (the completion, or the judge's stored answer), never stored themselves.

``outcome`` says how a row counts:

- ``labelled``: it has a label and a category;
- ``unparsed``: the judge answered, but not with exactly one label (counted in the denominators);
- ``unjudged``: the judge has not seen it yet; ``judge-failed``: the judge call failed (both left
  out of denominators, shown beside, and picked up by judging again);
- ``failed``: the model itself failed to produce a completion (shown beside).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import pandas as pd

from workbench.errors import UserError
from workbench.probes.rep.decades import model_facts
from workbench.probes.rep.judge import judge_runs, judges
from workbench.probes.rep.kinds import REP_KIND
from workbench.probes.rep.lexical import lexical_match
from workbench.probes.rep.parser import UNPARSED, parse_label
from workbench.probes.rep.sets import StoredSet, load_set
from workbench.runs import runs as stored_runs

if TYPE_CHECKING:
    from workbench.project import Project

LEXICAL = "lexical"
JUDGE_PREFIX = "judge:"

LABELLED, UNPARSED_OUTCOME, UNJUDGED, JUDGE_FAILED, FAILED = "labelled", UNPARSED, "unjudged", "judge-failed", "failed"
COUNTED = (LABELLED, UNPARSED_OUTCOME)  # the outcomes that make up a share's denominator

COLUMNS = [
    "response_id", "run_id", "model", "decade", "year", "stage", "demographic", "set_id", "set_version",
    "role", "role_name", "subject", "stem", "sample", "seed", "status", "raw", "error",
    "label", "category", "outcome", "evidence",
]


def judge_classifier(label: str) -> str:
    return f"{JUDGE_PREFIX}{label}"


def classifier_choices(project: "Project") -> list[str]:
    return [LEXICAL] + [judge_classifier(label) for label in judges(project)]


def _judge_of(classifier: str) -> str | None:
    if classifier == LEXICAL:
        return None
    if classifier.startswith(JUDGE_PREFIX) and classifier[len(JUDGE_PREFIX):].strip():
        return classifier[len(JUDGE_PREFIX):].strip()
    raise UserError(f"'{classifier}' is not a classifier: use 'lexical' or 'judge:MODEL' (the judge model's label).")


def _rep_runs(project: "Project", models: Sequence[str] | None) -> pd.DataFrame:
    frame = pd.DataFrame([(run.id, run.model_id, run.model, run.config) for run in stored_runs(project, REP_KIND)
                          if run.model is not None], columns=["run_id", "model_id", "model", "config"])
    if models:
        unknown = set(models) - set(frame["model"])
        if unknown:
            raise UserError(f"No REP runs for {', '.join(sorted(unknown))}. Models with runs: "
                            f"{', '.join(sorted(set(frame['model']))) or 'none'}.")
        frame = frame[frame["model"].isin(models)]
    return frame


def _model_tags(project: "Project") -> dict[int, dict[str, str]]:
    tags: dict[int, dict[str, str]] = {}
    for model_id, key, value in project.db.execute("SELECT model_id, key, value FROM model_tags"):
        tags.setdefault(model_id, {})[key] = value
    return tags


def _judge_answers(project: "Project", judge: str, set_ids: Sequence[int]) -> dict[int, tuple[str, str | None]]:
    """REP response id -> (status, raw answer) from the judge's newest run that answered it."""
    answers: dict[int, tuple[str, str | None]] = {}
    runs_by_set = judge_runs(project, judge)
    for set_id in set_ids:
        for run_id in runs_by_set.get(set_id, []):  # newest first
            for item_id, status, raw in project.db.execute(
                "SELECT item_id, status, raw FROM responses WHERE run_id = ?", [run_id]
            ):
                if item_id not in answers or (answers[item_id][0] != "ok" and status == "ok"):
                    answers[item_id] = (status, raw)
    return answers


def classified_responses(project: "Project", classifier: str = LEXICAL, *, models: Sequence[str] | None = None,
                         demographics: Sequence[str] | None = None, newest_runs: bool = False) -> pd.DataFrame:
    """Every REP completion with its outcome (see the module's docstring).

    ``newest_runs``: for each model and demographic keep only the completions of the newest run that has
    any. A model asked again with other settings (temperature, number of samples, a new set version)
    gets a new run; pooling the runs would mix settings and count the samples they share twice, so the
    statistics use only the newest (``stats.counts_and_responses``). Without it every run's completions
    are listed (for look-ups by response id)."""
    judge = _judge_of(classifier)
    runs = _rep_runs(project, models)
    if runs.empty:
        return pd.DataFrame(columns=COLUMNS)
    tags = _model_tags(project)
    sets: dict[int, StoredSet] = {}
    for config in runs["config"]:
        for entry in config.sets:
            if (not demographics or entry["name"] in demographics) and entry["id"] not in sets:
                sets[entry["id"]] = load_set(project, entry["id"])
    prompts = {pid: (stored, prompt) for stored in sets.values() for pid, prompt in stored.prompt_by_id().items()}
    if not prompts:
        return pd.DataFrame(columns=COLUMNS)
    run_ids = [int(r) for r in runs["run_id"]]
    responses = pd.read_sql_query(
        "SELECT id AS response_id, run_id, item_id, sample, seed, status, raw, error FROM responses"
        f" WHERE run_id IN ({','.join('?' * len(run_ids))}) ORDER BY run_id, item_id, sample",
        project.db.conn, params=run_ids,
    )
    responses = responses[responses["item_id"].isin(list(prompts))]
    answers = _judge_answers(project, judge, list(sets)) if judge else {}
    facts = {row.run_id: model_facts(row.model, tags.get(row.model_id, {})) for row in runs.itertuples()}

    rows = []
    for r in responses.itertuples(index=False):
        stored, prompt = prompts[r.item_id]
        fact = facts[r.run_id]
        label, outcome, evidence = _classify(stored, r.status, r.raw, answers.get(r.response_id), judge)
        category = stored.parsed.category_for(label, prompt) if outcome == LABELLED else None
        rows.append((
            r.response_id, r.run_id, fact.label, fact.decade, fact.year, fact.stage, stored.name, stored.id,
            stored.version, prompt.key, prompt.name, prompt.subject, prompt.stem, r.sample, r.seed, r.status,
            r.raw, r.error, label, category, outcome, evidence,
        ))
    frame = pd.DataFrame(rows, columns=COLUMNS)
    if newest_runs and not frame.empty:
        newest = frame.groupby(["model", "demographic"])["run_id"].transform("max")
        frame = frame[frame["run_id"] == newest].reset_index(drop=True)
    frame["year"] = frame["year"].astype("Int64")
    frame["seed"] = frame["seed"].astype("Int64")
    return frame


def _classify(stored: StoredSet, status: str, raw: str | None, answer: tuple[str, str | None] | None,
              judge: str | None) -> tuple[str | None, str, str | None]:
    """(label, outcome, evidence): evidence is the deciding word (lexical) or the judge's raw answer."""
    if status != "ok":
        return None, FAILED, None
    if judge is None:
        rules = stored.parsed.lexical
        if rules is None:
            raise UserError(f"The {stored.name} set has no [lexical] word lists, so the lexical baseline cannot "
                            "label it. Add them to the set, or classify with a judge model.")
        match = lexical_match(raw, rules)
        return match.label, LABELLED, match.word
    if answer is None:
        return None, UNJUDGED, None
    judge_status, judge_raw = answer
    if judge_status != "ok":
        return None, JUDGE_FAILED, None
    label = parse_label(judge_raw, stored.parsed.labels)
    return (None if label == UNPARSED else label), (UNPARSED_OUTCOME if label == UNPARSED else LABELLED), judge_raw


def select_responses(classified: pd.DataFrame, *, year: int | None = None, model: str | None = None,
                     demographic: str | None = None, role: str | None = None,
                     category: str | None = None) -> pd.DataFrame:
    """The completions behind one number of a table or chart (``category='unparsed'`` for those)."""
    frame = classified
    if year is not None:
        frame = frame[frame["year"] == year]
    for column, value in (("model", model), ("demographic", demographic), ("role", role)):
        if value is not None:
            frame = frame[frame[column] == value]
    if category == UNPARSED_OUTCOME:
        frame = frame[frame["outcome"] == UNPARSED_OUTCOME]
    elif category is not None:
        frame = frame[(frame["outcome"] == LABELLED) & (frame["category"] == category)]
    return frame
