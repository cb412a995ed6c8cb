"""Human validation of the judge: people label a random sample of completions, blind to the judge.

``create_validation_tasks`` draws a seeded random sample of successful REP completions per
demographic and makes one annotation task (kind ``label``, blinded) per demographic, with the set's
labels and a codebook written from the set. Annotators see the question and the sentence only;
the model, decade and the judge's verdict stay out of their view (the judge's labels are not in
the items at all). ``judge_agreement`` then compares each judge with the people: accuracy with a
Wilson interval (``workbench.analysis.intervals``) and Cohen's kappa (the annotation package's ``cohen``).
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Sequence

import pandas as pd

from workbench.analysis.intervals import wilson_interval
from workbench.annotation.agreement import cohen
from workbench.annotation.items import list_items
from workbench.annotation.labelling import consensus_labels, create_label_task, human_labels
from workbench.annotation.tasks import list_tasks
from workbench.errors import UserError
from workbench.probes.rep.classify import LABELLED, classified_responses, judge_classifier
from workbench.probes.rep.judge import judges
from workbench.probes.rep.parser import UNPARSED
from workbench.probes.rep.sets import load_set

if TYPE_CHECKING:
    from workbench.annotation.tasks import Task
    from workbench.probes.rep.setfile import RepSet
    from workbench.project import Project


def task_name(name: str, demographic: str, several: bool) -> str:
    return f"{name} ({demographic})" if several else name


def codebook(parsed: "RepSet", name: str) -> str:
    labels = "\n".join(
        f"- **{label}**" + (f" (the judge may also write: {', '.join(synonyms)})" if synonyms else "")
        for label, synonyms in parsed.labels.items()
    )
    return f"""# {name}

Each item is a sentence: the opening was written by the researchers, the rest by a language model.
Above it is the question to answer, about one person in the sentence ({parsed.title.lower()}).

**Answer from the words of the text only.** Pronouns, gendered nouns, titles and explicit statements
count; names, places, jobs and hunches do not. If the text does not say, or the person is not there,
choose **unclear/none**.

## Labels

{labels}

You are not told which model wrote the text, nor what any automatic judge said about it.
"""


def _sample(frame: pd.DataFrame, size: int, seed: int) -> pd.DataFrame:
    ok = frame[frame["status"] == "ok"].sort_values("response_id")
    if ok.empty:
        return ok
    chosen = sorted(random.Random(seed).sample(list(ok["response_id"]), min(size, len(ok))))
    return ok[ok["response_id"].isin(chosen)]


def create_validation_tasks(project: "Project", name: str, *, sample: int = 50,
                            demographics: Sequence[str] | None = None, seed: int = 0,
                            per_annotator: int | None = None, overlap: float = 0.2) -> list["Task"]:
    """One blinded label task per demographic, each with a random sample of ``sample`` completions."""
    if sample < 1:
        raise UserError("The sample for human validation needs at least one completion.")
    frame = classified_responses(project, demographics=demographics)
    if frame.empty:
        raise UserError("There are no REP completions yet to validate. Run the REP prompts on a model first.")
    names = list(dict.fromkeys(frame["demographic"]))
    tasks = []
    for demographic in names:
        part = _sample(frame[frame["demographic"] == demographic], sample, seed)
        if part.empty:
            continue
        versions = {int(set_id): load_set(project, int(set_id)).parsed for set_id in part["set_id"].unique()}
        parsed = versions[max(versions)]  # the newest version used gives the labels and the codebook
        label = task_name(name, demographic, len(names) > 1)
        items = []
        for row in part.itertuples():
            role = versions[row.set_id].role(row.role)
            text = f"{versions[row.set_id].question_for(role)}\n\n\u201c{row.stem} {(row.raw or '').strip()}\u201d"
            items.append({"text": text, "meta": {
                "response_id": int(row.response_id), "demographic": demographic, "role": row.role,
                "model": row.model, "decade": row.decade or "", "set_version": int(row.set_version)}})
        tasks.append(create_label_task(project, label, labels=list(parsed.labels), items=items,
                                       codebook=codebook(parsed, label), blinded=True, per_annotator=per_annotator,
                                       overlap=overlap, seed=seed))
    if not tasks:
        raise UserError("None of the REP completions succeeded, so there is nothing for people to label.")
    return tasks


def validation_tasks(project: "Project", name: str) -> list["Task"]:
    """The task called ``name``, or the per-demographic tasks called ``name (demographic)``."""
    found = [t for t in list_tasks(project) if t.name == name or (t.name.startswith(f"{name} (") and t.name.endswith(")"))]
    if not found:
        raise UserError(f"There is no validation task called '{name}'. Create one with 'palimpsest rep validate'.")
    return found


def _item_responses(project: "Project", task: "Task") -> dict[str, int]:
    """item key -> REP response id."""
    return {item.item_key: int(item.meta["response_id"]) for item in list_items(project, task)
            if item.meta.get("response_id") is not None}


def judge_labels(project: "Project", judge: str, response_ids: Sequence[int]) -> dict[int, str]:
    """response id -> the judge's label, or 'unparsed'; responses the judge has not answered are left out."""
    frame = classified_responses(project, judge_classifier(judge))
    frame = frame[frame["response_id"].isin(list(response_ids))]
    labels = {}
    for row in frame.itertuples():
        if row.outcome == LABELLED:
            labels[int(row.response_id)] = row.label
        elif row.outcome == UNPARSED:
            labels[int(row.response_id)] = UNPARSED
    return labels


AGREEMENT_COLUMNS = ["task", "judge", "against", "statistic", "value", "ci_low", "ci_high", "items", "note"]


def _agreement_rows(pairs: pd.DataFrame, categories: list[str]) -> list[dict]:
    """Accuracy (Wilson CI) and Cohen's kappa for aligned ``human`` and ``judge`` labels."""
    n = len(pairs)
    if n == 0:
        return []
    correct = int((pairs["human"] == pairs["judge"]).sum())
    unparsed = int((pairs["judge"] == UNPARSED).sum())
    note = f"{correct} of {n} agree" + (f"; {unparsed} judge answer(s) unparsed, counted as disagreeing" if unparsed else "")
    low, high = wilson_interval(correct, n)
    kappa, ci, used, kappa_note = cohen(pairs["human"].reset_index(drop=True), pairs["judge"].reset_index(drop=True),
                                        categories)
    if pairs["judge"].nunique() == 1 and kappa is not None:
        ci, kappa_note = None, f"the judge gave one answer throughout ({pairs['judge'].iloc[0]}): kappa is 0 by construction"
    return [
        {"statistic": "accuracy", "value": correct / n, "ci_low": low, "ci_high": high, "items": n, "note": note},
        {"statistic": "Cohen's kappa", "value": kappa, "ci_low": ci[0] if ci else None, "ci_high": ci[1] if ci else None,
         "items": used, "note": kappa_note},
    ]


def judge_agreement(project: "Project", name: str, *, judge: str | None = None) -> pd.DataFrame:
    """Accuracy (95% Wilson CI) and Cohen's kappa (95% CI) of each judge against each annotator and
    against the people's consensus, per validation task.

    "unparsed" is kept as a judge answer of its own: it counts as disagreeing in the accuracy and as
    a category no person uses in kappa, so a judge that often fails to answer scores lower on both.
    """
    chosen = [judge] if judge else judges(project)
    if not chosen:
        raise UserError("No judge has classified the completions yet: run 'palimpsest rep classify --judge MODEL'.")
    rows = []
    for task in validation_tasks(project, name):
        responses = _item_responses(project, task)
        humans = human_labels(project, task, with_meta=False)
        consensus = consensus_labels(project, task).dropna(subset=["label"])
        people = [(annotator, group[["item_id", "label"]]) for annotator, group in humans.groupby("annotator", sort=True)]
        if len(people) > 1 and not consensus.empty:
            people.append(("consensus", consensus[["item_id", "label"]]))
        categories = [*task.labels, UNPARSED]
        for judge_label in chosen:
            verdicts = judge_labels(project, judge_label, list(responses.values()))
            for against, labels in people:
                pairs = pd.DataFrame({
                    "human": labels["label"].to_numpy(),
                    "judge": [verdicts.get(responses.get(str(key), -1)) for key in labels["item_id"]],
                }).dropna()
                for row in _agreement_rows(pairs, categories):
                    rows.append({"task": task.name, "judge": judge_label, "against": against, **row})
    return pd.DataFrame(rows, columns=AGREEMENT_COLUMNS)
