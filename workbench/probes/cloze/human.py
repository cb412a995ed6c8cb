"""People doing the name cloze: a blinded annotation task made of the passages the models answered, and the
people's answers scored exactly as a model's are.

**Where the work lies.** Annotation is a service below the probes (``lint-imports``), so it cannot read this
probe's passages or its scorer. This module does both ends: ``create_human_task`` reads the project's
``cloze_passages`` and hands them to ``workbench.annotation.name_cloze.create_name_cloze_task`` as plain data
(hidden metadata: passage id, book, title, author, year; the gold name in the item's never-shown ``gold``);
``human_answers`` reads the saved rows back through annotation's public tables and scores them with
``score.scored``, the function that scores every model answer (tags removed, spaces trimmed, case ignored,
exact match otherwise: "Mr. Darcy" is not "Darcy"). There is no second scorer to drift from the first.

**What counts.** An answer (a typed name) is scored; "don't know" is an answer with an empty value and scores
as wrong, as a model's empty answer does; a skipped or unanswered passage is not scored (like a failed model
call, it is outside the denominator). People usually answer a sample of a book's passages, so their count is
smaller than a model's: ``humans_vs_models`` compares everyone on exactly the passages the people answered.

**Pooling several annotators.** The unit of the pooled accuracy is the passage, as it is for a model: by
default (``per_answer=False``) the answers to one passage are first reduced to one mark by ``MAJORITY_RULE``
(right when more than half of the people who answered it got it right; an even split counts as wrong, and the
note gives the accuracy with even splits counted right, so that the choice's effect is visible). Accuracy =
passages right / passages answered, with a 95% Wilson interval (statsmodels) over passages. Counting every
answer as a unit (``per_answer=True``, ``--per-answer``) would treat two people's answers to the same passage
as independent evidence, which they are not (they share the passage's difficulty): its interval is then too
narrow, and the note says so. One annotator's rows (``annotator``, ``each_annotator``) are the same either way.
"""

from __future__ import annotations

import json
import random
from typing import TYPE_CHECKING, Sequence

import numpy as np
import pandas as pd

from workbench.analysis.intervals import wilson_interval
from workbench.errors import UserError
from workbench.probes.cloze.score import scored

if TYPE_CHECKING:
    from workbench.annotation.tasks import Task
    from workbench.project import Project

HUMANS = "humans"
BASELINE = "most frequent name"
ANSWER_COLUMNS = ["task", "annotator", "item_id", "passage_id", "book_id", "book", "gold", "answer", "dont_know",
                  "parsed", "correct", "seconds", "flagged", "comment"]
COMPARISON_COLUMNS = ["who", "kind", "passages", "correct", "accuracy", "ci_low", "ci_high", "note"]
PASSAGE_COLUMNS = ["passage_id", "book_id", "gold", "answers", "right", "correct", "even_split"]
#: how the answers of several people to one passage become one mark (``by_passage``), in words
MAJORITY_RULE = ("a passage counts as right when more than half of the people who answered it got it right; an even "
                 "split (say one right, one wrong) counts as wrong")
PER_ANSWER_WARNING = ("every answer counted as a unit: a passage answered by several people counts once per answer, so "
                      "the interval, which treats answers as independent, is too narrow")


def human_label(annotator: str | None = None) -> str:
    """The column name people's answers go under: ``human: NAME`` for one annotator, ``humans`` for all."""
    return f"human: {annotator}" if annotator else HUMANS


def passage_counts(project: "Project") -> dict[int, int]:
    """How many name-cloze passages each book has (books without any are not here): the books a human task can
    be made of."""
    rows = project.db.execute("SELECT book_id, COUNT(*) FROM cloze_passages GROUP BY book_id ORDER BY book_id")
    return {int(book): int(n) for book, n in rows.fetchall()}


def task_passages(project: "Project", book_ids: Sequence[int] | None = None, *, per_book: int | None = None,
                  seed: int = 0) -> list[dict]:
    """The passages a human task is made of: every stored passage of the books (all books with passages when
    None), or ``per_book`` of each drawn at random (seeded by ``seed`` and the book), in passage order."""
    if per_book is not None and per_book < 1:
        raise UserError(f"Passages per book must be at least 1 (got {per_book}); leave it out for all of them.")
    frame = pd.read_sql_query(
        "SELECT p.id AS passage_id, p.book_id, p.passage, p.gold, b.title, b.author, b.year, b.external_id"
        " FROM cloze_passages p JOIN books b ON b.id = p.book_id ORDER BY p.book_id, p.id", project.db.conn)
    if book_ids is not None:
        wanted = [int(b) for b in book_ids]
        missing = sorted(set(wanted) - set(frame["book_id"]))
        if missing:
            raise UserError(f"These books have no name-cloze passages: {', '.join(map(str, missing[:10]))}. Extract "
                            "passages first (palimpsest cloze extract) or choose other books.")
        frame = frame[frame["book_id"].isin(wanted)]
    if frame.empty:
        raise UserError("There are no name-cloze passages to give to people: extract passages (palimpsest cloze "
                        "extract) or import published results (palimpsest cloze import) first.")
    chosen = []
    for book_id, group in frame.groupby("book_id", sort=True):
        rows = group.to_dict("records")
        if per_book is not None and per_book < len(rows):
            picked = set(random.Random(f"{seed}:{book_id}").sample(range(len(rows)), per_book))
            rows = [row for k, row in enumerate(rows) if k in picked]
        chosen += rows
    return [{"text": row["passage"], "gold": row["gold"], "book_id": int(row["book_id"]),
             "meta": {"passage_id": int(row["passage_id"]), "book_id": int(row["book_id"]),
                      "title": row["title"] or row["external_id"], "author": row["author"],
                      "year": None if pd.isna(row["year"]) else int(row["year"])}}
            for row in chosen]


def create_human_task(project: "Project", name: str, book_ids: Sequence[int] | None = None, *,
                      per_book: int | None = None, per_annotator: int | None = None, overlap: float = 0.2,
                      seed: int = 0, blinded: bool = True, codebook: str | None = None) -> "Task":
    """A blinded name-cloze annotation task of the models' passages (see ``task_passages``); each annotator sees
    them in their own seeded order (``workbench.annotation.assignment``)."""
    from workbench.annotation.name_cloze import create_name_cloze_task

    passages = task_passages(project, book_ids, per_book=per_book, seed=seed)
    return create_name_cloze_task(project, name, passages, codebook=codebook, blinded=blinded,
                                  per_annotator=per_annotator, overlap=overlap, seed=seed)


def _tasks(project: "Project", task: "Task | str | int | None") -> list["Task"]:
    from workbench.annotation.name_cloze import name_cloze_tasks
    from workbench.annotation.tasks import NAME_CLOZE, get_task

    if task is None or task == "":
        return name_cloze_tasks(project)
    chosen = get_task(project, task)
    if chosen.kind != NAME_CLOZE:
        raise UserError(f"'{chosen.name}' is a {chosen.kind} task, not a name-cloze task.")
    return [chosen]


def human_answers(project: "Project", task: "Task | str | int | None" = None, *,
                  annotator: str | None = None) -> pd.DataFrame:
    """One row per answer (a typed name or "don't know") of the name-cloze tasks (or one ``task``), scored by
    ``score.scored`` as a model's answer is; columns ``ANSWER_COLUMNS``. Skipped passages are not here."""
    from workbench.annotation.answers import annotations_frame
    from workbench.annotation.items import items_frame

    frames = []
    for one in _tasks(project, task):
        answers = annotations_frame(project, one, answered_only=True)
        if answer_filter := annotator:
            answers = answers[answers["annotator"] == answer_filter]
        if answers.empty:
            continue
        items = items_frame(project, one, include_hidden=True)
        meta = [json.loads(m) for m in items["meta"]]
        items = pd.DataFrame({"item_id": items["item_id"], "gold": items["gold"], "book_id": items["book_id"],
                              "passage_id": [m.get("passage_id") for m in meta],
                              "title": [m.get("title") for m in meta]})
        frames.append(answers.merge(items, on="item_id", how="left"))
    if not frames:
        return pd.DataFrame(columns=ANSWER_COLUMNS)
    frame = pd.concat(frames, ignore_index=True)
    names = pd.read_sql_query("SELECT id AS book_id, COALESCE(NULLIF(title, ''), external_id, 'Book ' || id) AS book"
                              " FROM books", project.db.conn)
    frame = frame.merge(names, on="book_id", how="left")
    frame["book"] = frame["book"].fillna(frame["title"])
    frame["answer"] = frame["value"].fillna("")
    frame["dont_know"] = frame["answer"].str.strip() == ""
    # the scorer of model answers, on the typed string as if a model had written it
    frame = scored(frame.assign(raw=frame["answer"], status="ok"))
    frame["correct"] = frame["correct"].astype(bool)
    for column in ("book_id", "passage_id"):
        frame[column] = frame[column].astype("Int64")
    return frame[ANSWER_COLUMNS].reset_index(drop=True)


def by_passage(answers: pd.DataFrame) -> pd.DataFrame:
    """One row per passage answered (columns ``PASSAGE_COLUMNS``): how many answers it has, how many are right,
    and its one mark by ``MAJORITY_RULE`` (``correct``); ``even_split`` marks passages split half and half."""
    if answers.empty:
        return pd.DataFrame(columns=PASSAGE_COLUMNS)
    grouped = answers.groupby("passage_id", sort=True).agg(
        book_id=("book_id", "first"), gold=("gold", "first"), answers=("correct", "size"),
        right=("correct", "sum")).reset_index()
    grouped["correct"] = 2 * grouped["right"] > grouped["answers"]
    grouped["even_split"] = 2 * grouped["right"] == grouped["answers"]
    return grouped[PASSAGE_COLUMNS]


def _units(answers: pd.DataFrame, per_answer: bool) -> pd.DataFrame:
    """What is counted: every answer (``per_answer``) or every passage, marked by the majority rule."""
    return answers if per_answer else by_passage(answers)


def _counts(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    grouped = frame.groupby(keys, sort=True)["correct"].agg(n="size", correct="sum").reset_index()
    n, k = grouped["n"].to_numpy(), grouped["correct"].to_numpy()
    grouped["accuracy"] = np.where(n > 0, k / np.maximum(n, 1), np.nan)
    grouped["ci_low"], grouped["ci_high"] = wilson_interval(k, n)
    return grouped


def pooling_note(answers: pd.DataFrame, per_answer: bool = False) -> str:
    """How the people's answers were pooled, in a sentence (empty where each passage has one answer)."""
    if answers.empty or not answers.duplicated("passage_id").any():
        return ""
    if per_answer:
        return PER_ANSWER_WARNING + "; pool by passage (the default) for an interval over passages."
    passages = by_passage(answers)
    split = int(passages["even_split"].sum())
    text = f"answers pooled by passage: {MAJORITY_RULE}"
    if split:
        right = int(passages["correct"].sum())
        text += (f"; {split:,} passage(s) split evenly (accuracy {right / len(passages):.1%}; "
                 f"{(right + split) / len(passages):.1%} if they counted as right)")
    return text


def human_book_accuracy(project: "Project", task: "Task | str | int | None" = None, *,
                        annotator: str | None = None, per_answer: bool = False) -> pd.DataFrame:
    """Per book: passages answered (``n``; answers with ``per_answer``), correct, accuracy and its 95% Wilson
    interval, over every annotator (pooled by passage: ``MAJORITY_RULE``) or one."""
    answers = human_answers(project, task, annotator=annotator)
    if answers.empty:
        return pd.DataFrame(columns=["book_id", "n", "correct", "accuracy", "ci_low", "ci_high"])
    return _counts(_units(answers, per_answer), ["book_id"])


def no_answers_message(project: "Project", task: "Task | str | int | None" = None, annotator: str | None = None) -> str:
    """Why there is no human column: no task, or nobody (this annotator) has answered yet."""
    if not _tasks(project, task):
        return ("There is no name-cloze task for people yet: make one with palimpsest cloze human-task, then "
                "annotate it on the Annotate page.")
    who = f"{annotator} has" if annotator else "nobody has"
    return f"No human answers to compare: {who} answered a name-cloze task yet (Annotate page)."


def humans_vs_models(project: "Project", models: Sequence[str] = (), task: "Task | str | int | None" = None, *,
                     annotator: str | None = None, per_answer: bool = False,
                     each_annotator: bool = False) -> pd.DataFrame:
    """People, each model and the most-frequent-name baseline on the same passages: those the people answered.

    One row each (columns ``COMPARISON_COLUMNS``): passages scored, correct, accuracy, 95% Wilson interval. The
    people's row pools their answers by passage (``MAJORITY_RULE``; every answer with ``per_answer``, which the
    note warns about); ``each_annotator`` adds a row per annotator (kind ``person``) on the passages they
    answered, so the people are also shown one by one. A
    model is scored on the human-answered passages it has an answer for (the note says when that is fewer);
    the baseline's name for each book is chosen from the other books' passages (``baselines``)."""
    from workbench.probes.cloze.analysis import passage_results
    from workbench.probes.cloze.baselines import frequent_name_baseline

    answers = human_answers(project, task, annotator=annotator)
    if answers.empty:
        raise UserError(no_answers_message(project, task, annotator))
    passages = answers.drop_duplicates("passage_id")[["passage_id", "book_id", "gold"]]
    ids = set(int(p) for p in passages["passage_id"].dropna())
    label = human_label(annotator)
    people = answers["annotator"].nunique()
    units = _units(answers, per_answer)
    note = (f"{len(answers):,} answers by {people} annotator(s) to {len(ids):,} passages of "
            f"{passages['book_id'].nunique()} book(s); \"don't know\" counts as wrong; skipped passages are left out")
    pooling = pooling_note(answers, per_answer)
    rows = [{"who": label, "kind": "people", "passages": len(units), "correct": int(units["correct"].sum()),
             "note": f"{note}; {pooling}" if pooling else note}]
    if each_annotator and people > 1:
        for name, own in answers.groupby("annotator", sort=True):
            mine = _units(own, per_answer)
            rows.append({"who": human_label(str(name)), "kind": "person", "passages": len(mine),
                         "correct": int(mine["correct"].sum()), "note": f"{len(mine):,} of the passages answered"})
    for model in dict.fromkeys(m for m in models if m):
        results = passage_results(project, model)
        kinds = sorted(results["kind"].unique())
        if len(kinds) > 1:
            results = results[results["kind"] == ("cloze" if "cloze" in kinds else kinds[0])]
        results = results[results["passage_id"].isin(ids) & (results["status"] == "ok")]
        note = "" if len(results) == len(ids) else f"answers {len(results):,} of the {len(ids):,} passages"
        rows.append({"who": model, "kind": "model", "passages": len(results),
                     "correct": int(results["correct"].astype(bool).sum()), "note": note})
    names = frequent_name_baseline(project).dropna(subset=["book_id"])
    name_of = dict(zip(names["book_id"].astype(int), names["baseline_name"]))
    hits = [name_of.get(int(b)) == str(g).strip().casefold() for b, g in zip(passages["book_id"], passages["gold"])]
    rows.append({"who": BASELINE, "kind": "baseline", "passages": len(hits), "correct": int(sum(hits)),
                 "note": "each book's commonest name among the other books' passages"})
    frame = pd.DataFrame(rows)
    n, k = frame["passages"].to_numpy(), frame["correct"].to_numpy()
    frame["accuracy"] = np.where(n > 0, k / np.maximum(n, 1), np.nan)
    frame["ci_low"], frame["ci_high"] = wilson_interval(k, n)
    return frame[COMPARISON_COLUMNS]


def baseline_with_humans(project: "Project", baseline: pd.DataFrame, task: "Task | str | int | None" = None, *,
                         annotator: str | None = None, per_answer: bool = False) -> pd.DataFrame:
    """The most-frequent-name table (``baselines.frequent_name_baseline``) with the people's accuracy beside it:
    ``human_passages`` (``human_answers`` with ``per_answer``), ``human_accuracy``, ``human_ci_low``,
    ``human_ci_high`` per book and over all books (pooled by passage, ``MAJORITY_RULE``, unless ``per_answer``).
    The baseline counts every passage of a book, the people those they answered."""
    answers = human_answers(project, task, annotator=annotator)
    if answers.empty:
        raise UserError(no_answers_message(project, task, annotator))
    units = _units(answers, per_answer)
    count = "human_answers" if per_answer else "human_passages"
    per_book = _counts(units, ["book_id"])
    overall = _counts(units.assign(all=1), ["all"]).drop(columns=["all"]).assign(book_id=pd.NA)
    people = pd.concat([overall, per_book], ignore_index=True).rename(
        columns={"n": count, "accuracy": "human_accuracy", "ci_low": "human_ci_low",
                 "ci_high": "human_ci_high"}).drop(columns=["correct"])
    out = baseline.copy()
    key = out["book_id"].astype("Int64").astype(str)
    people.index = people["book_id"].astype("Int64").astype(str)
    for column in (count, "human_accuracy", "human_ci_low", "human_ci_high"):
        out[column] = key.map(people[column]).to_numpy()
    out[count] = out[count].astype("Int64")
    for column in ("human_accuracy", "human_ci_low", "human_ci_high"):
        out[column] = out[column].astype(float)
    return out


def people_counts(project: "Project", passage_ids: Sequence[int] | None = None) -> dict | None:
    """What the methods text says about the people's name cloze, for the passages ``passage_ids`` (all when
    None): answers (of them "don't know"), annotators, passages answered, those answered by two or more, and
    skips (kept out of every denominator). None where nobody has answered any of these passages."""
    from workbench.annotation.answers import annotations_frame
    from workbench.annotation.items import items_frame

    answers = human_answers(project)
    skipped = 0
    for one in _tasks(project, None):
        rows = annotations_frame(project, one)
        rows = rows[rows["status"] == "skipped"]
        if rows.empty:
            continue
        items = items_frame(project, one, include_hidden=True)
        passage_of = {k: json.loads(m).get("passage_id") for k, m in zip(items["item_id"], items["meta"])}
        ids = rows["item_id"].map(passage_of)
        skipped += int(ids.isin(list(passage_ids)).sum()) if passage_ids is not None else len(rows)
    if passage_ids is not None:
        answers = answers[answers["passage_id"].isin([int(i) for i in passage_ids])]
    if answers.empty:
        return None
    per_passage = answers.groupby("passage_id").size()
    return {"answers": len(answers), "dont_know": int(answers["dont_know"].sum()),
            "annotators": int(answers["annotator"].nunique()), "passages": int(len(per_passage)),
            "shared_passages": int((per_passage >= 2).sum()), "skipped": skipped,
            "books": int(answers["book_id"].nunique())}


def answer_marks(project: "Project", task: "Task") -> pd.DataFrame:
    """Right or wrong for every answer of a name-cloze task (annotator, item_id, correct), by the scorer of the
    models' answers: what annotation's agreement table compares between annotators (registered below)."""
    answers = human_answers(project, task)
    return answers[["annotator", "item_id", "correct"]].reset_index(drop=True)


def _register() -> None:
    from workbench.annotation.agreement import register_answer_marks
    from workbench.annotation.tasks import NAME_CLOZE

    register_answer_marks(NAME_CLOZE, answer_marks)


_register()
