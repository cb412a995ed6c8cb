"""The reading probe's results: forgetting curves, their slope, and reconstruction scores.

Which answers count: for each book, text variant and model, the model's newest ``reading-answer`` run.
Raw replies are parsed again whenever results are read (``asking``).

- **Accuracy** of read-along questions = right answers / questions answered. An unparsed reply is an
  answer that is not right (counted in ``unparsed``); a request that failed is no answer (counted in
  ``failed``, outside the denominator). 95% Wilson intervals. ``chance`` is what guessing earns on the
  same questions: the mean of 1 / choices over the questions answered (those the accuracy counts), so
  each row, and each point of the curve, has its own.
- **Forgetting curve**: accuracy of every read-along question by bins of retention demand in words,
  "None of the above" questions included at theirs (the whole book read so far, as NarrativeXL has
  it); a question without a retention demand (imported so) cannot be placed and is left out.
- **Slope**: a logistic regression (statsmodels ``Logit``) of right/wrong on ln(1 + retention demand),
  per variant, over the questions the curve plots, with its 95% Wald interval and p-value;
  ``odds_ratio_per_tenfold`` = exp(10-fold change x slope). A flat curve has a slope whose interval
  holds 0.
- **Reconstruction**: ROUGE-1, ROUGE-2 and ROUGE-L F1 (the ``rouge-score`` package, Porter stemming)
  of each corrected summary against the true summary, beside the same score of the false summary
  itself (the baseline: what changing nothing earns); means with 95% percentile bootstrap intervals
  (seeded), and the mean gain over the baseline with its paired bootstrap interval, per summary level
  (0: scenes; 1 and up: hierarchical summaries). An empty reply scores 0 and is counted as unparsed;
  failed requests are left out and counted.
"""

from __future__ import annotations

import json
import math
import warnings
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
import pandas as pd

from workbench.analysis.intervals import bootstrap_interval, wilson_interval
from workbench.probes.reading.asking import parse_choice, parse_reconstruction
from workbench.probes.reading.questions import READ_ALONG_KINDS, RECONSTRUCTION_KINDS
from workbench.probes.reading.run import ANSWER_RUN
from workbench.runs import runs

if TYPE_CHECKING:
    from workbench.project import Project

#: lower edges of the retention-demand bins in words; the last bin has no upper edge
DEFAULT_BINS = (0, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000)
ROUGE_MEASURES = ("rouge1", "rouge2", "rougeL")
BOOTSTRAP_DRAWS = 2_000
CURVE_COLUMNS = ["variant", "bin_low", "bin_high", "questions", "correct", "accuracy", "ci_low", "ci_high",
                 "unparsed", "failed", "chance"]
MIN_FOR_SLOPE = 10


# ---------------------------------------------------------------------------------------------- answers
def answer_runs(project: "Project", model: str | None = None) -> pd.DataFrame:
    """The newest ``reading-answer`` run per book, variant and model: run_id, model, book_id, variant, set_id."""
    found = [run for run in runs(project, ANSWER_RUN) if run.model is not None]
    frame = pd.DataFrame([(run.id, run.model, run.config.book_id, run.config.variant, run.config.question_set)
                          for run in found], columns=["run_id", "model", "book_id", "variant", "set_id"])
    if model is not None:
        frame = frame[frame["model"] == model]
    return frame.drop_duplicates(["model", "book_id", "variant"], keep="last").reset_index(drop=True)


def answers_frame(project: "Project", model: str | None = None) -> pd.DataFrame:
    """One row per question asked: model, variant, book, the question, the raw reply and what it means.

    Built column by column from what each question's row holds (its options counted by SQLite, not parsed;
    its body read for reconstruction questions only), each distinct reply to a question of so many choices
    read once: 57,000 questions' options and sources parsed into objects took half the time of the read."""
    columns: dict[str, list] = {name: [] for name in (*_BASE, *_READ_ALONG, *_RECONSTRUCTION)}
    kinds: list[bool] = []  # read-along or not, row by row
    choices_of: dict[tuple[str | None, int], int | None] = {}
    for run in answer_runs(project, model).itertuples(index=False):
        questions = _question_facts(project, int(run.set_id))
        replies = project.db.execute("SELECT item_id, status, raw, error, extra FROM responses WHERE run_id = ?"
                                     " ORDER BY item_id", [run.run_id]).fetchall()
        rebuilt = [item for item, *_ in replies if item in questions and not questions[item][5]]
        prompts = dict(project.db.execute(
            "SELECT item_id, prompt FROM responses WHERE run_id = ? AND item_id IN (SELECT value FROM json_each(?))",
            [run.run_id, json.dumps(rebuilt)]).fetchall()) if rebuilt else {}
        for item_id, status, raw, error, extra in replies:
            question = questions.get(item_id)
            if question is None:
                continue
            key, kind, retention, options, answer, read_along, body = question
            extra = json.loads(extra) if extra and extra != "{}" else {}
            ok = status == "ok"
            choices = options + 1 if read_along else 0
            for name, value in (("model", run.model), ("variant", run.variant), ("book_id", run.book_id),
                                ("run_id", run.run_id), ("question_id", item_id), ("key", key), ("kind", kind),
                                ("retention_words", retention), ("choices", choices),
                                ("none_of_the_above", read_along and answer is None), ("status", status), ("raw", raw),
                                ("error", error), ("context_words", extra.get("context_words")),
                                ("truncated", extra.get("truncated"))):
                columns[name].append(value)
            kinds.append(read_along)
            if read_along:
                choice = None
                if ok:
                    seen = (raw, choices)
                    if seen not in choices_of:
                        choices_of[seen] = parse_choice(raw, choices)
                    choice = choices_of[seen]
                right = options if answer is None else answer  # Question.correct_choice
                for name, value in (("answer", right + 1), ("choice", None if choice is None else choice + 1),
                                    ("correct", ok and choice is not None and choice == right),
                                    ("unparsed", ok and choice is None), *((n, math.nan) for n in _REBUILT_ONLY)):
                    columns[name].append(value)
            else:
                text = parse_reconstruction(raw, prompts.get(item_id)) if ok else ""
                for name, value in (("level", int(body.get("level", 0))), ("reconstruction", text),
                                    ("reference", body["reference"]), ("false_summary", body["false_summary"]),
                                    ("correct", None), ("unparsed", ok and not text), ("answer", math.nan),
                                    ("choice", math.nan)):
                    columns[name].append(value)
    if not kinds:
        return pd.DataFrame()
    # the columns in the order a frame of the rows as dicts has them: the first row's, then the others' new ones
    first = _READ_ALONG if kinds[0] else _RECONSTRUCTION
    later = [n for n in (_RECONSTRUCTION if kinds[0] else _READ_ALONG) if n not in first] if len(set(kinds)) > 1 else []
    return pd.DataFrame({name: columns[name] for name in (*_BASE, *first, *later)})


_BASE = ("model", "variant", "book_id", "run_id", "question_id", "key", "kind", "retention_words", "choices",
         "none_of_the_above", "status", "raw", "error", "context_words", "truncated")
_READ_ALONG = ("answer", "choice", "correct", "unparsed")
_RECONSTRUCTION = ("level", "reconstruction", "reference", "false_summary", "correct", "unparsed")
_REBUILT_ONLY = ("level", "reconstruction", "reference", "false_summary")


def _question_facts(project: "Project", set_id: int) -> dict[int, tuple]:
    """Question id -> (key, kind, retention words, number of options, answer, read along, body: parsed for
    the questions that are not read along, else {}), what ``answers_frame`` needs of each question."""
    kinds = json.dumps(list(READ_ALONG_KINDS))
    rows = project.db.execute(
        "SELECT id, key, kind, retention_words, json_array_length(options), answer,"
        " CASE WHEN kind IN (SELECT value FROM json_each(?)) THEN NULL ELSE body END"
        " FROM reading_questions WHERE set_id = ? ORDER BY position", [kinds, set_id]).fetchall()
    return {qid: (key, kind, retention, options, answer, kind in READ_ALONG_KINDS, json.loads(body) if body else {})
            for qid, key, kind, retention, options, answer, body in rows}


def books_answered(project: "Project", answers: pd.DataFrame) -> list[str]:
    """The titles of the books whose questions ``answers`` holds: a forgetting curve pools them all."""
    from workbench.corpus.library import books_frame

    if answers.empty:
        return []
    books = books_frame(project)
    return sorted(books[books["id"].isin({int(b) for b in answers["book_id"].dropna()})]["title"])


def _read_along(answers: pd.DataFrame) -> pd.DataFrame:
    if answers.empty:
        return answers
    return answers[~answers["kind"].isin(RECONSTRUCTION_KINDS)]


def _tally(group: pd.DataFrame) -> dict[str, Any]:
    answered = group[group["status"] == "ok"]
    n, correct = len(answered), int(answered["correct"].sum())
    low, high = wilson_interval(correct, n)
    return {"questions": n, "correct": correct, "accuracy": correct / n if n else math.nan, "ci_low": low,
            "ci_high": high, "unparsed": int(answered["unparsed"].sum()), "failed": int((group["status"] != "ok").sum()),
            "chance": float((1 / answered["choices"]).mean()) if n else math.nan}


def parse_bins(text: str | None) -> tuple[int, ...]:
    """Bin edges typed as whole numbers of words separated by commas ("1000,5000"); 0 is added as the first
    edge when missing; nothing typed gives ``DEFAULT_BINS``."""
    from workbench.errors import UserError

    if not text or not str(text).strip():
        return DEFAULT_BINS
    try:
        edges = sorted({int(part) for part in str(text).split(",") if part.strip()})
    except ValueError as exc:
        raise UserError(f"Bins are whole numbers of words separated by commas, not '{text}'.") from exc
    if not edges or edges[0] < 0:
        raise UserError(f"Bins are whole numbers of words of at least 0, not '{text}'.")
    if edges[0] != 0:
        edges = [0, *edges]
    return tuple(edges)


def retention_bins(values: pd.Series, edges: Sequence[int] = DEFAULT_BINS) -> pd.DataFrame:
    """The bin of each retention demand: ``bin_low`` (inclusive) and ``bin_high`` (exclusive; NaN: open)."""
    edges = sorted(edges)
    index = np.searchsorted(edges, values.to_numpy(dtype=float), side="right") - 1
    index = np.clip(index, 0, len(edges) - 1)
    lows = np.asarray(edges, dtype=float)[index]
    highs = np.asarray(list(edges[1:]) + [math.nan], dtype=float)[index]
    return pd.DataFrame({"bin_low": lows, "bin_high": highs}, index=values.index)


def forgetting_curve(project: "Project", model: str, *, bins: Sequence[int] = DEFAULT_BINS, by_kind: bool = False,
                     answers: pd.DataFrame | None = None) -> pd.DataFrame:
    """Accuracy by retention-demand bin, per text variant (and question kind): ``CURVE_COLUMNS``."""
    answers = _read_along(answers_frame(project, model) if answers is None else answers)
    columns = CURVE_COLUMNS[:1] + (["kind"] if by_kind else []) + CURVE_COLUMNS[1:]
    if answers.empty:
        return pd.DataFrame(columns=columns)
    answers = answers[answers["retention_words"].notna()]
    answers = pd.concat([answers, retention_bins(answers["retention_words"], bins)], axis=1)
    keys = ["variant"] + (["kind"] if by_kind else []) + ["bin_low", "bin_high"]
    rows = [{**dict(zip(keys, key)), **_tally(group)}
            for key, group in answers.groupby(keys, sort=True, dropna=False)]
    frame = pd.DataFrame(rows, columns=columns)
    frame["bin_low"] = frame["bin_low"].astype(int)
    frame["bin_high"] = frame["bin_high"].astype("Int64")
    return frame


def accuracy_by_kind(project: "Project", model: str, answers: pd.DataFrame | None = None) -> pd.DataFrame:
    """Accuracy per variant, question kind and whether 'None of the above' is the answer."""
    answers = _read_along(answers_frame(project, model) if answers is None else answers)
    columns = ["variant", "kind", "none_of_the_above", *CURVE_COLUMNS[3:]]
    if answers.empty:
        return pd.DataFrame(columns=columns)
    rows = [{"variant": v, "kind": k, "none_of_the_above": bool(none), **_tally(group)}
            for (v, k, none), group in answers.groupby(["variant", "kind", "none_of_the_above"], sort=True)]
    return pd.DataFrame(rows, columns=columns)


def logistic_slope(correct: Sequence[bool], retention_words: Sequence[float]) -> dict[str, Any]:
    """Logistic regression of ``correct`` on ln(1 + retention words): slope, 95% interval, p-value."""
    import statsmodels.api as sm

    y = np.asarray(correct, dtype=float)
    x = np.log1p(np.asarray(retention_words, dtype=float))
    empty = {"questions": len(y), "slope": math.nan, "ci_low": math.nan, "ci_high": math.nan, "p_value": math.nan,
             "odds_ratio_per_tenfold": math.nan}
    if len(y) < MIN_FOR_SLOPE:
        return {**empty, "note": f"fewer than {MIN_FOR_SLOPE} answers"}
    if y.min() == y.max():
        return {**empty, "note": "all answers right" if y[0] else "no answer right"}
    if x.min() == x.max():
        return {**empty, "note": "every question has the same retention demand"}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # non-convergence is reported below, in words
            fit = sm.Logit(y, sm.add_constant(x)).fit(disp=0)
    except Exception as exc:  # perfect separation, a singular matrix: statsmodels raises several kinds
        return {**empty, "note": f"the regression could not be fitted ({type(exc).__name__})"}
    if not fit.mle_retvals.get("converged", True):
        return {**empty, "note": "the regression did not converge (the retention demand separates right from wrong "
                                 "answers completely)"}
    low, high = fit.conf_int(alpha=0.05)[1]
    slope = float(fit.params[1])
    return {"questions": len(y), "slope": slope, "ci_low": float(low), "ci_high": float(high),
            "p_value": float(fit.pvalues[1]), "odds_ratio_per_tenfold": math.exp(slope * math.log(10)), "note": ""}


def forgetting_slope(project: "Project", model: str, answers: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per variant: the logistic slope of right/wrong on ln(1 + retention demand), over the answered
    questions the forgetting curve plots."""
    answers = _read_along(answers_frame(project, model) if answers is None else answers)
    columns = ["variant", "questions", "slope", "ci_low", "ci_high", "p_value", "odds_ratio_per_tenfold", "note"]
    if answers.empty:
        return pd.DataFrame(columns=columns)
    answers = answers[answers["retention_words"].notna() & (answers["status"] == "ok")]
    rows = [{"variant": variant, **logistic_slope(group["correct"].tolist(), group["retention_words"].tolist())}
            for variant, group in answers.groupby("variant", sort=True)]
    return pd.DataFrame(rows, columns=columns)


# ---------------------------------------------------------------------------------------------- reconstruction
def rouge_f1(references: Sequence[str], texts: Sequence[str]) -> dict[str, np.ndarray]:
    """ROUGE-1, -2 and -L F1 of each text against its reference (0 for an empty text)."""
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(list(ROUGE_MEASURES), use_stemmer=True)
    scores = {m: np.zeros(len(texts)) for m in ROUGE_MEASURES}
    for i, (reference, text) in enumerate(zip(references, texts)):
        if not text:
            continue
        result = scorer.score(reference, text)
        for m in ROUGE_MEASURES:
            scores[m][i] = result[m].fmeasure
    return scores


def _mean_and_interval(name: str, values: np.ndarray, seed: int, draws: int) -> dict[str, float]:
    """``{name}_mean`` (just ``gain`` for the gain), ``{name}_low``, ``{name}_high``: the mean and its interval."""
    low, high = bootstrap_interval(values, seed=seed, resamples=draws)
    return {name if name == "gain" else f"{name}_mean": float(values.mean()), f"{name}_low": low, f"{name}_high": high}


def reconstruction_scores(project: "Project", model: str, *, seed: int = 0, draws: int = BOOTSTRAP_DRAWS,
                          answers: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per variant, kind (with or without the passage), summary level and ROUGE measure: the model's mean score and the
    false-summary baseline's, each with a bootstrap interval, and the mean gain with its paired interval."""
    answers = answers_frame(project, model) if answers is None else answers
    columns = ["variant", "kind", "level", "measure", "answers", "unparsed", "failed", "model_mean", "model_low", "model_high",
               "baseline_mean", "baseline_low", "baseline_high", "gain", "gain_low", "gain_high"]
    if answers.empty:
        return pd.DataFrame(columns=columns)
    answers = answers[answers["kind"].isin(RECONSTRUCTION_KINDS)]
    if answers.empty:
        return pd.DataFrame(columns=columns)
    rows = []
    for (variant, kind, level), group in answers.groupby(["variant", "kind", "level"], sort=True):
        done = group[group["status"] == "ok"]
        if done.empty:
            continue
        ours = rouge_f1(done["reference"].tolist(), done["reconstruction"].tolist())
        baseline = rouge_f1(done["reference"].tolist(), done["false_summary"].tolist())
        for measure in ROUGE_MEASURES:
            rows.append({
                "variant": variant, "kind": kind, "level": int(level), "measure": measure, "answers": len(done),
                "unparsed": int(done["unparsed"].sum()), "failed": int((group["status"] != "ok").sum()),
                **_mean_and_interval("model", ours[measure], seed, draws),
                **_mean_and_interval("baseline", baseline[measure], seed, draws),
                **_mean_and_interval("gain", ours[measure] - baseline[measure], seed, draws),
            })
    return pd.DataFrame(rows, columns=columns)
