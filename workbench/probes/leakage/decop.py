"""A multiple-choice membership test in the style of DE-COP (Duarte et al. 2024).

1. **Paraphrases** (run kind ``decop-paraphrase``): a chosen model rewrites each passage three times
   (samples 0, 1, 2 of one request, temperature 0.7 by default, seeded), with the template
   ``decop-paraphrase``. The raw answers are stored; ``paraphrases_frame`` shows them for review. A
   paraphrase that is empty or the passage itself is not usable. ``regenerate`` asks again for chosen
   passages (three new samples; the newest three usable ones are the passage's current paraphrases).
2. **Questions** (run kind ``decop``): the tested model sees the verbatim passage and its three
   paraphrases as options A-D (template ``decop-quiz``) and names the published one. Each passage is
   asked in several option orders, to cancel out a preference for a letter: by default 4, one order
   per position of the verbatim passage (a seeded shuffle, then its four rotations), or all 24 as in
   DE-COP. The orders follow from the seed, the passage and the order number, so scoring recomputes
   them instead of trusting anything stored beside the answer.
3. **Accuracy** per book: correct answers / answered questions (an answer naming no letter A-D is
   *unanswered* and counted apart), with its Wilson interval and a two-sided exact binomial test
   against chance (25%). The questions of one passage are not independent (same passage, other
   orders), so the test is optimistic; the passage count is shown beside it.
"""

from __future__ import annotations

import itertools
import json
import random
import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Sequence

import pandas as pd

from workbench.errors import UserError
from workbench.jobs import JobReport, Unit, find_or_create_run, get_run, register_resumer, run_job
from workbench.models.base import GenerationParams, prompt_request
from workbench.models.registry import get_model, runnable_model
from workbench.probes.leakage import passages as passage_store
from workbench.probes.leakage.runs import responses
from workbench.probes.leakage.statistics import binomial
from workbench.progress import TaskState
from workbench.prompt_templates import get_template, register_kind, template_by_id

if TYPE_CHECKING:
    from workbench.models.prices import CostEstimate
    from workbench.project import Project

PARAPHRASE_KIND, QUIZ_KIND = "decop-paraphrase", "decop"
PARAPHRASE_TEMPLATE, QUIZ_TEMPLATE = "decop-paraphrase", "decop-quiz"
PARAPHRASES = 3
ORDER_CHOICES = (4, 24)
LETTERS = "ABCD"
PARAPHRASE_MAX_TOKENS, QUIZ_MAX_TOKENS = 400, 4
CHANCE = 0.25
ACCURACY_COLUMNS = ["book", "book_id", "passages", "questions", "answered", "unanswered", "correct", "accuracy",
                    "ci_low", "ci_high", "p_value", "model", "paraphraser"]

register_kind(PARAPHRASE_TEMPLATE, required=["passage"], allowed=["passage"], description="DE-COP paraphrases")
register_kind(QUIZ_TEMPLATE, required=["a", "b", "c", "d"], allowed=["a", "b", "c", "d"],
              description="DE-COP four-option question")


# ---------------------------------------------------------------------------------------------- paraphrases
def clean_paraphrase(raw: str | None, passage: str) -> str | None:
    """The paraphrase in a raw answer, or None when it is not usable (empty, or the passage itself)."""
    text = (raw or "").strip().strip('"\u201c\u201d').strip()
    if not text or " ".join(text.split()) == " ".join(passage.split()):
        return None
    return text


def run_paraphrases(project: "Project", paraphraser: str, source: str = "cloze", *,
                    book_ids: Sequence[int] | None = None, passage_ids: Sequence[int] | None = None,
                    temperature: float = 0.7, seed: int = 0, max_tokens: int = PARAPHRASE_MAX_TOKENS,
                    params: dict[str, Any] | None = None, state: TaskState | None = None,
                    retry_failed: bool = False) -> JobReport:
    """Three paraphrases of each passage by ``paraphraser``, stored as they come (``params`` changes
    other generation parameters, e.g. ``{"min_tokens": 20}``)."""
    ids = list(passage_ids) if passage_ids is not None else passage_store.gather(project, source, book_ids=book_ids)
    spec = runnable_model(project, paraphraser)
    template = get_template(project, PARAPHRASE_TEMPLATE, kind=PARAPHRASE_TEMPLATE)
    params = GenerationParams.from_dict({"temperature": temperature, "max_tokens": max_tokens, "seed": seed,
                                         **(params or {})})
    run_id = find_or_create_run(project, PARAPHRASE_KIND, model_id=spec.id, template_id=template.id,
                                params=params.as_dict(), config={"passage_ids": ids})
    units = [Unit(i, s) for i in ids for s in range(PARAPHRASES)]
    return _generate(project, run_id, units, state, retry_failed)


def _generate(project: "Project", run_id: int, units: list[Unit], state, retry_failed: bool,
              quiz_options: dict | None = None) -> JobReport:
    """Ask the run's model for every unit (paraphrase runs: the passage; quiz runs: the four options)."""
    from workbench.models.calls import generation_process
    from workbench.models.registry import open_backend

    run = get_run(project, run_id)
    spec = get_model(project, int(run["model_id"]))
    template = template_by_id(project, run["template_id"])
    params = GenerationParams.from_dict(run["params"])
    texts = passage_store.passage_texts(project, sorted({u.item_id for u in units}))

    with open_backend(spec, project) as backend:
        def build_request(unit: Unit):
            if quiz_options is None:
                prompt = template.render(passage=texts[unit.item_id])
            else:
                prompt = template.render(**quiz_options[(unit.item_id, unit.sample)])
            return prompt_request(backend, prompt, params, sample=unit.sample)

        return run_job(project, run_id, units, generation_process(backend, build_request), state,
                       retry_failed=retry_failed)


def estimate_costs(project: "Project", model: str, paraphraser: str, passage_ids: Sequence[int], *,
                   orders: int = 4, seed: int = 0, max_tokens: int = PARAPHRASE_MAX_TOKENS
                   ) -> dict[str, "CostEstimate"]:
    """Per model label, what ``run_paraphrases`` and then ``run_quiz`` on these passages still cost at most:
    three paraphrases of each passage without three usable ones, and every question the model has not
    answered (a paraphrase not yet written counted as long as its passage). One entry when the
    paraphraser is the model tested."""
    from workbench.models.prices import estimate_cost

    ids = list(dict.fromkeys(int(i) for i in passage_ids))
    texts = passage_store.passage_texts(project, ids)
    current = current_paraphrases(project, paraphraser)
    writer = get_template(project, PARAPHRASE_TEMPLATE, kind=PARAPHRASE_TEMPLATE)
    paraphrasing = estimate_cost(runnable_model(project, paraphraser), [writer.render(passage=texts[i]) for i in ids
                                                                if i not in current],
                                 max_tokens, samples=PARAPHRASES, project=project)
    spec = runnable_model(project, model)
    quiz = get_template(project, QUIZ_TEMPLATE, kind=QUIZ_TEMPLATE)
    answered = _answered(project, spec.id, {"paraphraser_id": runnable_model(project, paraphraser).id, "orders": orders,
                                            "seed": seed})
    prompts = []
    for item in ids:
        options = [texts[item], *(text for _, text in current.get(item, [(0, texts[item])] * PARAPHRASES))]
        prompt = quiz.render(**{letter.lower(): option for letter, option in zip(LETTERS, options)})
        prompts += [prompt] * sum(1 for number in range(orders) if (item, number) not in answered)
    asking = estimate_cost(spec, prompts, QUIZ_MAX_TOKENS, project=project)
    if model == paraphraser:
        return {model: replace(asking, requests=asking.requests + paraphrasing.requests,
                               prompt_tokens=asking.prompt_tokens + paraphrasing.prompt_tokens,
                               max_completion_tokens=asking.max_completion_tokens + paraphrasing.max_completion_tokens)}
    return {paraphraser: paraphrasing, model: asking}


def estimate_regeneration(project: "Project", paraphraser: str, passage_ids: Sequence[int]) -> "CostEstimate":
    """What ``regenerate`` costs at most: three new paraphrases of each passage, as long as its run allows."""
    from workbench.models.prices import estimate_cost

    run_id, _ = _regeneration_run(project, paraphraser, passage_ids)
    run = get_run(project, run_id)
    texts = passage_store.passage_texts(project, list(passage_ids))
    writer = template_by_id(project, run["template_id"])
    return estimate_cost(runnable_model(project, paraphraser), [writer.render(passage=t) for t in texts.values()],
                         int(run["params"].get("max_tokens") or PARAPHRASE_MAX_TOKENS), samples=PARAPHRASES,
                         project=project)


def _answered(project: "Project", model_id: int, config: dict[str, Any]) -> set[tuple[int, int]]:
    """(passage, question) pairs the model has answered in quiz runs with these settings."""
    found = responses(project, QUIZ_KIND, model_id=model_id, config_filter=config)
    return {(int(i), int(s)) for i, s in zip(found["item_id"], found["sample"])}


def _paraphrase_runs(project: "Project", paraphraser: str) -> pd.DataFrame:
    spec = runnable_model(project, paraphraser)
    return responses(project, PARAPHRASE_KIND, model_id=spec.id, ok_only=False)


def paraphrases_frame(project: "Project", paraphraser: str) -> pd.DataFrame:
    """Every paraphrase the model wrote: passage, sample, the text, whether it is usable and current."""
    found = _paraphrase_runs(project, paraphraser)
    columns = ["book", "passage_id", "item_id", "sample", "usable", "current", "paraphrase", "status", "error", "run_id"]
    if found.empty:
        return pd.DataFrame(columns=columns)
    info = passage_store.passages_frame(project, sorted(found["item_id"].astype(int).unique())).set_index("passage_id")
    rows = []
    for record in found.itertuples(index=False):
        passage = info.loc[int(record.item_id), "text"]
        text = clean_paraphrase(record.raw, passage) if record.status == "ok" else None
        rows.append({"book": info.loc[int(record.item_id), "book"], "passage_id": info.loc[int(record.item_id), "source_key"],
                     "item_id": int(record.item_id), "sample": int(record.sample), "usable": text is not None,
                     "paraphrase": text if text is not None else (record.raw or ""), "status": record.status,
                     "error": record.error or "", "run_id": int(record.run_id)})
    frame = pd.DataFrame(rows)
    frame["current"] = False
    for item, group in frame[frame["usable"]].groupby("item_id"):
        newest = group.sort_values("sample", ascending=False).head(PARAPHRASES)
        if len(newest) == PARAPHRASES:
            frame.loc[newest.index, "current"] = True
    return frame.sort_values(["item_id", "sample"]).reset_index(drop=True)[columns]


def current_paraphrases(project: "Project", paraphraser: str) -> dict[int, list[tuple[int, str]]]:
    """Passage id -> its three current paraphrases as (sample, text), for passages that have three."""
    frame = paraphrases_frame(project, paraphraser)
    if frame.empty:
        return {}
    frame = frame[frame["current"].astype(bool)]
    return {int(item): [(int(s), t) for s, t in zip(group["sample"], group["paraphrase"])]
            for item, group in frame.groupby("item_id")}


def _regeneration_run(project: "Project", paraphraser: str, passage_ids: Sequence[int]) -> tuple[int, pd.DataFrame]:
    """The paraphrase run new paraphrases of ``passage_ids`` go into, and their paraphrases so far."""
    found = _paraphrase_runs(project, paraphraser)
    found = found[found["item_id"].isin(list(passage_ids))]
    if found.empty:
        raise UserError("Those passages have no paraphrases yet: make them first (palimpsest decop run).")
    return int(found["run_id"].max()), found


def regenerate(project: "Project", paraphraser: str, passage_ids: Sequence[int], *,
               state: TaskState | None = None) -> JobReport:
    """Three new paraphrases for each of ``passage_ids`` (the old ones stay stored, no longer current)."""
    run_id, found = _regeneration_run(project, paraphraser, passage_ids)
    units = []
    for item in passage_ids:
        mine = found[found["item_id"] == item]
        top = int(mine["sample"].max()) + 1 if not mine.empty else 0
        units += [Unit(int(item), top + s) for s in range(PARAPHRASES)]
    return _generate(project, run_id, units, state, False)


# ---------------------------------------------------------------------------------------------- questions
def option_order(seed: int, item: int, number: int, orders: int) -> tuple[int, ...]:
    """The options' order for question ``number`` of passage ``item``: 0 is the verbatim passage, 1-3 the
    paraphrases. With 4 orders the verbatim passage takes each position once; with 24, every order."""
    base = list(range(4))
    random.Random(f"{seed}:{item}").shuffle(base)
    if orders == 4:
        return tuple(base[number:] + base[:number])
    return tuple(itertools.permutations(base))[number]


def answer_letter(raw: str | None) -> str | None:
    """The option a raw answer names: the first standalone letter A-D, else None."""
    match = re.search(r"\b([ABCD])\b", (raw or "").strip())
    return match.group(1) if match else None


def run_quiz(project: "Project", model: str, paraphraser: str, *, orders: int = 4, seed: int = 0,
             passage_ids: Sequence[int] | None = None, params: dict[str, Any] | None = None,
             state: TaskState | None = None, retry_failed: bool = False) -> JobReport:
    """Ask ``model`` every question for the passages that have three current paraphrases by ``paraphraser``."""
    if orders not in ORDER_CHOICES:
        raise UserError("Ask each passage in 4 option orders (each position once) or all 24.")
    spec = runnable_model(project, model)
    current = current_paraphrases(project, paraphraser)
    ids = [i for i in (passage_ids if passage_ids is not None else sorted(current)) if i in current]
    if not ids:
        raise UserError(f"No passage has three usable paraphrases by '{paraphraser}' yet. Make them first "
                        "(palimpsest decop run), or regenerate the unusable ones.")
    template = get_template(project, QUIZ_TEMPLATE, kind=QUIZ_TEMPLATE)
    paraphraser_id = runnable_model(project, paraphraser).id
    config = {"passage_ids": ids, "paraphraser_id": paraphraser_id, "orders": orders, "seed": seed,
              "paraphrase_samples": {str(i): [s for s, _ in current[i]] for i in ids}}
    generation = GenerationParams.from_dict({"temperature": 0.0, "max_tokens": QUIZ_MAX_TOKENS, "seed": 0,
                                             **(params or {})})
    run_id = find_or_create_run(project, QUIZ_KIND, model_id=spec.id, template_id=template.id,
                                params=generation.as_dict(), config=config)
    return _ask(project, run_id, state, retry_failed)


def _ask(project: "Project", run_id: int, state, retry_failed: bool) -> JobReport:
    run = get_run(project, run_id)
    config = run["config"]
    options = _options(project, config)
    units = [Unit(int(i), n) for i in config["passage_ids"] for n in range(int(config["orders"]))]
    return _generate(project, run_id, units, state, retry_failed, quiz_options=options)


def _options(project: "Project", config: dict[str, Any]) -> dict[tuple[int, int], dict[str, str]]:
    """(passage, question) -> the texts of options a-d, from the paraphrase samples the run names."""
    ids = [int(i) for i in config["passage_ids"]]
    texts = passage_store.passage_texts(project, ids)
    stored = responses(project, PARAPHRASE_KIND, model_id=int(config["paraphraser_id"]))
    by_key = {(int(i), int(s)): raw for i, s, raw in zip(stored["item_id"], stored["sample"], stored["raw"])}
    options = {}
    for item in ids:
        choices = [texts[item]]
        for sample in config["paraphrase_samples"][str(item)]:
            text = clean_paraphrase(by_key.get((item, int(sample))), texts[item])
            if text is None:
                raise UserError(f"A paraphrase this run was made with (passage {item}) is no longer stored.")
            choices.append(text)
        for number in range(int(config["orders"])):
            order = option_order(int(config["seed"]), item, number, int(config["orders"]))
            options[(item, number)] = {letter.lower(): choices[o] for letter, o in zip(LETTERS, order)}
    return options


def resume_paraphrases(project: "Project", run_id: int, state: TaskState, retry_failed: bool) -> JobReport:
    run = get_run(project, run_id)
    stored = responses(project, PARAPHRASE_KIND, ok_only=False)
    stored = stored[stored["run_id"] == run_id]
    units = {Unit(int(i), s) for i in run["config"]["passage_ids"] for s in range(PARAPHRASES)}
    units |= {Unit(int(i), int(s)) for i, s in zip(stored["item_id"], stored["sample"])}
    return _generate(project, run_id, sorted(units), state, retry_failed)


def resume_quiz(project: "Project", run_id: int, state: TaskState, retry_failed: bool) -> JobReport:
    return _ask(project, run_id, state, retry_failed)


register_resumer(PARAPHRASE_KIND, resume_paraphrases)
register_resumer(QUIZ_KIND, resume_quiz)


# ---------------------------------------------------------------------------------------------- results
def answers_frame(project: "Project", model: str) -> pd.DataFrame:
    """Every question asked of ``model``: passage, order, the letter expected, the answer, correct."""

    spec = get_model(project, model)
    found = responses(project, QUIZ_KIND, model_id=spec.id, ok_only=False)
    columns = ["book", "book_id", "passage_id", "item_id", "question", "expected", "answer", "correct", "status",
               "raw", "run_id"]
    if found.empty:
        return pd.DataFrame(columns=columns)
    info = passage_store.passages_frame(project, sorted(found["item_id"].astype(int).unique())).set_index("passage_id")
    configs = {run: json.loads(text) for run, text in dict(zip(found["run_id"], found["config"])).items()}  # once a run
    rows = []
    for record in found.itertuples(index=False):
        config = configs[record.run_id]
        order = option_order(int(config["seed"]), int(record.item_id), int(record.sample), int(config["orders"]))
        expected = LETTERS[order.index(0)]
        letter = answer_letter(record.raw) if record.status == "ok" else None
        rows.append({"book": info.loc[int(record.item_id), "book"], "book_id": info.loc[int(record.item_id), "book_id"],
                     "passage_id": info.loc[int(record.item_id), "source_key"], "item_id": int(record.item_id),
                     "question": int(record.sample), "expected": expected, "answer": letter or "",
                     "correct": None if letter is None else letter == expected, "status": record.status,
                     "raw": record.raw or record.error or "", "run_id": int(record.run_id),
                     "paraphraser_id": int(config["paraphraser_id"])})
    return pd.DataFrame(rows)


def accuracy_frame(project: "Project", model: str | None = None) -> pd.DataFrame:
    """Per model and book: answered questions, correct, accuracy with its Wilson interval, the binomial
    test against 25%."""
    from workbench.models.registry import list_models

    names = {m.id: m.label for m in list_models(project)}
    asked = {row[0] for row in project.db.execute("SELECT DISTINCT model_id FROM runs WHERE kind = ?", [QUIZ_KIND])}
    labels = [model] if model else [names[i] for i in sorted(asked) if i in names]
    rows = []
    for label in labels:
        answers = answers_frame(project, label)
        if answers.empty:
            continue
        answers = answers[answers["status"] == "ok"]
        for (book_id, paraphraser_id), group in answers.groupby(["book_id", "paraphraser_id"], dropna=False, sort=True):
            answered = group[group["correct"].notna()]
            correct = int(answered["correct"].astype(bool).sum())
            test = binomial(correct, len(answered), CHANCE)
            rows.append({"book": group["book"].iloc[0], "book_id": book_id, "passages": group["item_id"].nunique(),
                         "questions": len(group), "answered": len(answered), "unanswered": len(group) - len(answered),
                         "correct": correct, "accuracy": test.rate, "ci_low": test.ci_low, "ci_high": test.ci_high,
                         "p_value": test.p_value, "model": label, "paraphraser": names.get(int(paraphraser_id), "")})
    frame = pd.DataFrame(rows, columns=ACCURACY_COLUMNS)
    frame["book_id"] = frame["book_id"].astype("Int64")
    return frame
