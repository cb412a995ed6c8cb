"""A multiple-choice membership test in the style of DE-COP (Duarte et al. 2024).

1. **Paraphrases** (run kind ``decop-paraphrase``): a chosen model rewrites each passage three times
   (samples 0, 1, 2 of one request, temperature 0.7 by default, seeded), with the template
   ``decop-paraphrase``. The raw answers are stored; ``paraphrases_frame`` shows them for review. A
   paraphrase is refused (not usable) when it is empty, when it is the passage itself, or when it is the
   same as a newer paraphrase of the passage (compared with white space and case normalised): the options
   must be four different texts. ``regenerate`` asks again for chosen passages (three new samples; the
   newest three usable ones are the passage's current paraphrases); ``lacking_paraphrases`` names the
   passages without three, which are not asked. When the paraphraser is the model tested,
   ``paraphraser_warning`` says why that weakens the test.
2. **Questions** (run kind ``decop``): the tested model is told the book's title and author and sees the
   verbatim passage and its three paraphrases as options A-D (template ``decop-quiz``); it names the one
   printed in the book. Each passage is asked in all 24 orders of the options by default, as in DE-COP, so
   that a preference for a letter cancels out; fewer (4, 8, ... 20) is an explicit choice, made of blocks of
   four orders in which the verbatim text takes each place once. The orders follow from the seed, the
   passage and the order number, so scoring recomputes them instead of trusting anything stored beside the
   answer. Runs made with 4 orders before 24 became the default read as they were.
3. **Scores** (``accuracy_frame``; the statistics in ``decop_scores``): the passage is the unit. A
   passage's score is the share of its answered orders in which the model picked the verbatim text; a
   book's score is the mean over its passages, with a Wilson interval over passages and an exact one-sided
   randomisation test against chance (25%) with the passage as the unit. ``decision_frame`` is DE-COP's
   decision: the ROC AUC of book scores, suspect books against clean books (tagged ``member=no``, or
   published after the model's training cutoff: ``cutoff_year``, else the model's tag ``cutoff=YEAR``).
"""

from __future__ import annotations

import itertools
import random
import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Sequence

import pandas as pd

from workbench.corpus.book_sets import member_labels
from workbench.errors import UserError
from workbench.jobs import JobReport, Unit, find_or_create_run, get_run, run_job
from workbench.models.base import GenerationParams, prompt_request
from workbench.models.catalog import CUTOFF_TAG, get_model, runnable_model, training_cutoff
from workbench.probes.leakage import decop_scores
from workbench.probes.leakage import passages as passage_store
from workbench.probes.leakage.kinds import PARAPHRASE_KIND, PARAPHRASES, QUIZ_KIND
from workbench.probes.leakage.runs import responses
from workbench.progress import TaskState
from workbench.prompt_templates import get_template, register_kind, template_by_id, validate
from workbench.runs import models_with_runs, runs

if TYPE_CHECKING:
    from workbench.models.prices import CostEstimate
    from workbench.project import Project

PARAPHRASE_TEMPLATE, QUIZ_TEMPLATE = "decop-paraphrase", "decop-quiz"
#: orders per passage: all 24 (the default, DE-COP's), or whole blocks of four (each place once per block)
ORDER_CHOICES = (4, 8, 12, 16, 20, 24)
DEFAULT_ORDERS = 24
LETTERS = "ABCD"
PARAPHRASE_MAX_TOKENS, QUIZ_MAX_TOKENS = 400, 4
UNKNOWN_AUTHOR, UNKNOWN_TITLE = "an unknown author", "an untitled book"
ACCURACY_COLUMNS = decop_scores.BOOK_COLUMNS
CHANCE = decop_scores.CHANCE
ORDERS_HELP = ("Ask each passage in all 24 option orders (the default, as DE-COP does), or in 4, 8, 12, 16 or 20 "
               "orders, so that the verbatim text stands in each of the four places equally often.")

register_kind(PARAPHRASE_TEMPLATE, required=["passage"], allowed=["passage"], description="DE-COP paraphrases")
register_kind(QUIZ_TEMPLATE, required=["a", "b", "c", "d", "title", "author"],
              allowed=["a", "b", "c", "d", "title", "author"], description="DE-COP four-option question")


# ---------------------------------------------------------------------------------------------- paraphrases
def normalised(text: str) -> str:
    """The text as paraphrases are compared: white space runs made one space, case folded."""
    return " ".join(text.split()).casefold()


def clean_paraphrase(raw: str | None, passage: str) -> str | None:
    """The paraphrase in a raw answer, or None when it is not usable (empty, or the passage itself once white
    space and case are normalised)."""
    text = (raw or "").strip().strip('"\u201c\u201d').strip()
    if not text or normalised(text) == normalised(passage):
        return None
    return text


def paraphraser_warning(project: "Project", model: str, paraphraser: str) -> str:
    """A warning when the model tested also wrote the paraphrases (else an empty string)."""
    if not model or not paraphraser:
        return ""
    try:
        if get_model(project, model).id != get_model(project, paraphraser).id:
            return ""
    except UserError:  # a model removed since
        return ""
    return (f"The paraphrases are written by the model under test ('{model}'). It may pick out, or avoid, its own "
            "wording rather than recognise the book, which moves its score for reasons that have nothing to do with "
            "training data. Choose another model to write the paraphrases, or report this beside the results.")


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
    from workbench.models.catalog import open_backend

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
                   orders: int = DEFAULT_ORDERS, seed: int = 0, max_tokens: int = PARAPHRASE_MAX_TOKENS
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
    names = book_names(project, ids)
    answered = _answered(project, spec.id, {"paraphraser_id": runnable_model(project, paraphraser).id, "orders": orders,
                                            "seed": seed})
    prompts = []
    for item in ids:
        options = [texts[item], *(text for _, text in current.get(item, [(0, texts[item])] * PARAPHRASES))]
        prompt = quiz.render(**{letter.lower(): option for letter, option in zip(LETTERS, options)},
                             **names[item])
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
    spec = get_model(project, paraphraser)  # reading what is stored: any model
    return responses(project, PARAPHRASE_KIND, model_id=spec.id, ok_only=False)


def paraphrases_frame(project: "Project", paraphraser: str) -> pd.DataFrame:
    """Every paraphrase the model wrote: passage, sample, the text, whether it is usable and current, and why
    not (``problem``: the request failed, empty, the passage itself, or the same as a newer paraphrase)."""
    found = _paraphrase_runs(project, paraphraser)
    columns = ["book", "passage_id", "item_id", "sample", "usable", "current", "problem", "paraphrase", "status",
               "error", "run_id"]
    if found.empty:
        return pd.DataFrame(columns=columns)
    info = passage_store.passages_frame(project, sorted(found["item_id"].astype(int).unique())).set_index("passage_id")
    rows = []
    # newest first, so that of two identical paraphrases the newer one is kept
    for item, group in found.sort_values(["item_id", "sample"], ascending=[True, False]).groupby("item_id", sort=True):
        passage = info.loc[int(item), "text"]
        kept: dict[str, int] = {}
        for record in group.itertuples(index=False):
            text = clean_paraphrase(record.raw, passage) if record.status == "ok" else None
            problem = ""
            if record.status != "ok":
                problem = "the request failed"
            elif text is None:
                problem = "empty" if not (record.raw or "").strip().strip('"\u201c\u201d').strip() else \
                    "the passage itself"
            elif normalised(text) in kept:
                problem = f"the same as paraphrase {kept[normalised(text)]}"
            else:
                kept[normalised(text)] = int(record.sample)
            rows.append({"book": info.loc[int(item), "book"], "passage_id": info.loc[int(item), "source_key"],
                         "item_id": int(item), "sample": int(record.sample), "usable": not problem,
                         "problem": problem, "paraphrase": text if text is not None else (record.raw or ""),
                         "status": record.status, "error": record.error or "", "run_id": int(record.run_id)})
    frame = pd.DataFrame(rows)
    frame["current"] = False
    for _item, group in frame[frame["usable"]].groupby("item_id"):
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


def lacking_paraphrases(project: "Project", paraphraser: str, passage_ids: Sequence[int]) -> pd.DataFrame:
    """The passages of ``passage_ids`` without three usable paraphrases by ``paraphraser`` (they are not asked):
    book, passage, item id, usable paraphrases, and what is wrong with the others."""
    columns = ["book", "passage_id", "item_id", "usable", "problems"]
    ids = list(dict.fromkeys(int(i) for i in passage_ids))
    table = paraphrases_frame(project, paraphraser)
    current = set(table.loc[table["current"].astype(bool), "item_id"]) if not table.empty else set()
    missing = [i for i in ids if i not in current]
    if not missing:
        return pd.DataFrame(columns=columns)
    info = passage_store.passages_frame(project, missing).set_index("passage_id")
    rows = []
    for item in missing:
        mine = table[table["item_id"] == item] if not table.empty else table
        problems = [f"paraphrase {s}: {p}" for s, p in zip(mine["sample"], mine["problem"]) if p] if len(mine) else []
        rows.append({"book": info.loc[item, "book"], "passage_id": info.loc[item, "source_key"], "item_id": item,
                     "usable": int(mine["usable"].sum()) if len(mine) else 0,
                     "problems": "; ".join(problems) or "none written yet"})
    return pd.DataFrame(rows, columns=columns)


def lacking_message(lacking: pd.DataFrame, paraphraser: str, project_path: str = "PROJECT") -> str:
    """What to tell the user about the passages of ``lacking_paraphrases`` (empty when there are none)."""
    if lacking.empty:
        return ""
    ids = [str(i) for i in lacking["item_id"]]
    listed = ", ".join(ids[:20]) + (f" and {len(ids) - 20} more" if len(ids) > 20 else "")
    shown = " --passage ".join(ids[:20])
    return (f"{len(lacking)} passage(s) lack three usable paraphrases by '{paraphraser}' and were not asked "
            f"(item {listed}): a paraphrase is refused when it is empty, the passage itself, or the same as "
            f"another. See them with: palimpsest decop paraphrases {project_path} --paraphraser '{paraphraser}'. "
            f"Write new ones with: palimpsest decop regenerate {project_path} --paraphraser '{paraphraser}' "
            f"--passage {shown} (or 'New paraphrases' on the DE-COP tab), then run the questions again.")


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
    runnable_model(project, paraphraser)
    run_id, found = _regeneration_run(project, paraphraser, passage_ids)
    units = []
    for item in passage_ids:
        mine = found[found["item_id"] == item]
        top = int(mine["sample"].max()) + 1 if not mine.empty else 0
        units += [Unit(int(item), top + s) for s in range(PARAPHRASES)]
    return _generate(project, run_id, units, state, False)


# ---------------------------------------------------------------------------------------------- questions
def check_orders(orders: int) -> int:
    if orders not in ORDER_CHOICES:
        raise UserError(ORDERS_HELP)
    return orders


def option_order(seed: int, item: int, number: int, orders: int) -> tuple[int, ...]:
    """The options' order for question ``number`` of passage ``item``: 0 is the verbatim passage, 1-3 the
    paraphrases. With 24 orders, every order (in the sequence earlier versions used); with fewer, blocks of
    four: an order and its three rotations, so that in each block every text takes each place once. The
    first block is a seeded shuffle and its rotations (what 4-order runs always asked), the other five in a
    seeded sequence."""
    base = list(range(4))
    random.Random(f"{seed}:{item}").shuffle(base)
    if orders == 24:
        return tuple(itertools.permutations(base))[number]
    block, turn = divmod(number, 4)
    first = _blocks(seed, item, base)[block]
    return tuple(first[turn:] + first[:turn])


def _blocks(seed: int, item: int, base: list[int]) -> list[list[int]]:
    """The six blocks of four orders (each a set of rotations), named by their order starting with base[0]."""
    others = sorted({tuple(p) for p in itertools.permutations(base) if p[0] == base[0]} - {tuple(base)})
    random.Random(f"{seed}:{item}:blocks").shuffle(others)
    return [base, *(list(o) for o in others)]


def answer_letter(raw: str | None) -> str | None:
    """The option a raw answer names: the first standalone letter A-D, else None."""
    match = re.search(r"\b([ABCD])\b", (raw or "").strip())
    return match.group(1) if match else None


def book_names(project: "Project", passage_ids: Sequence[int]) -> dict[int, dict[str, str]]:
    """Passage id -> the title and author the question names (the passage's label when it has no book; a
    stand-in when either is unknown)."""
    ids = list(dict.fromkeys(int(i) for i in passage_ids))
    frame = passage_store.passages_frame(project, ids)
    authors = {int(i): a for i, a in project.db.execute("SELECT id, author FROM books").fetchall()}
    names = {}
    for item, book_id, title in zip(frame["passage_id"], frame["book_id"], frame["book"]):
        author = authors.get(int(book_id)) if pd.notna(book_id) else None
        names[int(item)] = {"title": str(title or "").strip() or UNKNOWN_TITLE,
                            "author": str(author or "").strip() or UNKNOWN_AUTHOR}
    return names


def run_quiz(project: "Project", model: str, paraphraser: str, *, orders: int = DEFAULT_ORDERS, seed: int = 0,
             passage_ids: Sequence[int] | None = None, params: dict[str, Any] | None = None,
             state: TaskState | None = None, retry_failed: bool = False) -> JobReport:
    """Ask ``model`` every question for the passages that have three current paraphrases by ``paraphraser``
    (``lacking_paraphrases`` names the others)."""
    check_orders(orders)
    spec = runnable_model(project, model)
    current = current_paraphrases(project, paraphraser)
    ids = [i for i in (passage_ids if passage_ids is not None else sorted(current)) if i in current]
    if not ids:
        raise UserError(f"No passage has three usable paraphrases by '{paraphraser}' yet. Make them first "
                        "(palimpsest decop run), or regenerate the unusable ones (palimpsest decop regenerate).")
    template = get_template(project, QUIZ_TEMPLATE, kind=QUIZ_TEMPLATE)
    validate(QUIZ_TEMPLATE, template.body, template.label)  # an older version may not name the book
    paraphraser_id = runnable_model(project, paraphraser).id
    names = book_names(project, ids)
    config = {"passage_ids": ids, "paraphraser_id": paraphraser_id, "orders": orders, "seed": seed,
              "paraphrase_samples": {str(i): [s for s, _ in current[i]] for i in ids},
              "names": {str(i): names[i] for i in ids}}
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
    """(passage, question) -> the texts of options a-d and the book's title and author, from the paraphrase
    samples and the names the run's config holds (runs made before questions named the book: today's names,
    which their template does not use)."""
    ids = [int(i) for i in config["passage_ids"]]
    texts = passage_store.passage_texts(project, ids)
    stored = responses(project, PARAPHRASE_KIND, model_id=int(config["paraphraser_id"]))
    by_key = {(int(i), int(s)): raw for i, s, raw in zip(stored["item_id"], stored["sample"], stored["raw"])}
    names = config.get("names") or book_names(project, ids)
    options = {}
    for item in ids:
        choices = [texts[item]]
        for sample in config["paraphrase_samples"][str(item)]:
            text = clean_paraphrase(by_key.get((item, int(sample))), texts[item])
            if text is None:
                raise UserError(f"A paraphrase this run was made with (passage {item}) is no longer stored or no "
                                "longer usable. Start the questions again (palimpsest decop run).")
            choices.append(text)
        named = names.get(str(item)) or names.get(item) or {"title": UNKNOWN_TITLE, "author": UNKNOWN_AUTHOR}
        for number in range(int(config["orders"])):
            order = option_order(int(config["seed"]), item, number, int(config["orders"]))
            options[(item, number)] = {**{letter.lower(): choices[o] for letter, o in zip(LETTERS, order)}, **named}
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


# ---------------------------------------------------------------------------------------------- results
ANSWER_COLUMNS = ["book", "book_id", "passage_id", "item_id", "question", "expected", "answer", "picked", "correct",
                  "status", "raw", "run_id", "paraphraser_id", "paraphraser", "orders", "seed", "model"]


def _settings(project: "Project", model_id: int) -> list[dict[str, int]]:
    """The distinct (paraphraser, orders, seed) of the model's question runs."""
    return [{"paraphraser_id": p, "orders": o, "seed": s} for p, o, s in sorted(_runs_by_settings(project, model_id))]


def _runs_by_settings(project: "Project", model_id: int) -> dict[tuple[int, int, int], list[int]]:
    """The model's question runs by their (paraphraser, orders, seed), each run's config parsed once."""
    found: dict[tuple[int, int, int], list[int]] = {}
    for run in runs(project, QUIZ_KIND, model_id=model_id):
        config = run.config
        found.setdefault((int(config.paraphraser_id), int(config.orders), int(config.seed)), []).append(int(run.id))
    return found


def answers_frame(project: "Project", model: str) -> pd.DataFrame:
    """Every question asked of ``model``: passage, order, the letter expected, the answer, which text it picked
    (0: the verbatim passage, 1-3: the paraphrases), correct. Runs with other paraphrases, orders or seeds are
    read apart (an answer of one never stands in for the same-numbered question of another).

    Built column by column: the runs' configs parsed once, each passage's option orders worked out once (not
    once per question) into one table that every question looks its order up in, each distinct reply read
    once."""
    import numpy as np

    from workbench.models.catalog import list_models
    from workbench.runs import responses as stored_responses

    spec = get_model(project, model)
    names = {m.id: m.label for m in list_models(project)}
    settings_of = {}
    found = []
    for settings, run_ids in sorted(_runs_by_settings(project, spec.id).items()):
        settings_of.update({run: settings for run in run_ids})
        found.append(stored_responses(project, run_ids, ok_only=False, columns=("status", "raw", "error")))
    found = [f for f in found if not f.empty]
    if not found:
        return pd.DataFrame(columns=ANSWER_COLUMNS)
    found = pd.concat(found, ignore_index=True) if len(found) > 1 else found[0]
    items = found["item_id"].to_numpy(np.int64)
    info = passage_store.passage_books(project, items.tolist())
    run_ids = found["run_id"].to_numpy(np.int64)
    samples = found["sample"].to_numpy(np.int64)
    by_run = pd.DataFrame.from_dict(settings_of, orient="index", columns=["paraphraser_id", "orders", "seed"])
    paraphraser, orders, seeds = (by_run[c].reindex(run_ids).to_numpy(np.int64)
                                  for c in ("paraphraser_id", "orders", "seed"))
    # each passage's orders (of its run's seed and number of orders) once, in one table: rows start[k] on
    shapes = sorted({(settings_of[run][2], settings_of[run][1]) for run in set(run_ids.tolist())})  # (seed, orders)
    shape = pd.Series(range(len(shapes)), index=pd.MultiIndex.from_tuples(shapes)).reindex(
        pd.MultiIndex.from_arrays([seeds, orders])).to_numpy(np.int64)
    low = min(int(items.min()), 0)
    span = int(items.max()) - low + 1
    codes, keys = pd.factorize(shape * span + (items - low))  # (seed, orders, passage) as one number
    rng, known = random.Random(), {}
    tables = [_passage_orders(shapes[key // span][0], key % span + low, shapes[key // span][1], rng, known)
              for key in keys.tolist()]
    sizes = np.fromiter((len(t) for t in tables), np.int64, len(tables))
    start = np.cumsum(sizes) - sizes
    table = np.asarray([order for t in tables for order in t], dtype=np.int64).reshape(-1, 4)
    inside = samples < sizes[codes]
    row = np.where(inside, start[codes] + np.minimum(samples, sizes[codes] - 1), 0)
    order = table[row]
    for n in np.flatnonzero(~inside):  # a question beyond the run's orders (not asked by Palimpsest): on its own
        order[n] = option_order(int(seeds[n]), int(items[n]), int(samples[n]), int(orders[n]))
    statuses, raws = found["status"].tolist(), found["raw"].tolist()
    replies, distinct = pd.factorize(pd.Series(raws, dtype=object), use_na_sentinel=False)
    letter_of = np.fromiter((-1 if (letter := answer_letter(raw if isinstance(raw, str) else None)) is None
                             else LETTERS.index(letter) for raw in distinct), np.int64, len(distinct))
    letter = np.where(found["status"].to_numpy(object) == "ok", letter_of[replies], -1)
    named = letter >= 0
    choice = order[np.arange(len(order)), np.maximum(letter, 0)]
    expected = np.asarray(list(LETTERS))[np.argmax(order == 0, axis=1)]
    if named.all():
        picked, correct = choice, choice == 0
    else:
        picked = np.where(named, choice, np.nan)
        correct = np.where(named, choice == 0, None)
    answer = np.where(named, np.asarray(list(LETTERS))[np.maximum(letter, 0)], "")
    called = {p: names.get(p, f"model {p}") for p in {settings[0] for settings in settings_of.values()}}
    columns = {
        "book": info["book"].tolist(), "book_id": info["book_id"].tolist(), "passage_id": info["source_key"].tolist(),
        "item_id": items, "question": samples, "expected": expected.tolist(), "answer": answer.tolist(),
        "picked": picked, "correct": correct, "status": statuses,
        "raw": [_text(raw) or _text(error) for raw, error in zip(raws, found["error"].tolist())], "run_id": run_ids,
        "paraphraser_id": paraphraser, "paraphraser": [called[p] for p in paraphraser.tolist()],
        "orders": orders, "seed": seeds, "model": [spec.label] * len(items),
    }
    return pd.DataFrame(columns, columns=ANSWER_COLUMNS)


def _text(value: Any) -> str:
    """A stored text as read ("" for none: SQL's NULL reads as None, or as NaN once frames are joined)."""
    return value if isinstance(value, str) else ""


def _passage_orders(seed: int, item: int, orders: int, rng: random.Random | None = None,
                    known: dict | None = None) -> list[tuple[int, ...]]:
    """``option_order`` of questions 0 .. orders - 1 of a passage, worked out together (the seeded shuffle once;
    the blocks after the first, a second seeded draw, only where there are more than four orders); ``rng``: a
    generator to seed afresh (seeding one is the same as making one with that seed, and quicker); ``known``: the
    orders already worked out from a first shuffle (24 orders, or 4: they follow from it alone)."""
    base = list(range(4))
    rng = rng or random.Random()
    rng.seed(f"{seed}:{item}")
    rng.shuffle(base)
    if orders in (4, 24) and known is not None and (tuple(base), orders) in known:
        return known[tuple(base), orders]
    if orders == 24:
        out = list(itertools.permutations(base))
    elif orders == 4:
        out = [tuple(base[turn:] + base[:turn]) for turn in range(4)]
    else:
        blocks = _blocks(seed, item, base)
        return [tuple(first[turn:] + first[:turn]) for first in blocks[: max(1, orders // 4)] for turn in range(4)]
    if known is not None:
        known[tuple(base), orders] = out
    return out


def model_cutoff(project: "Project", model: str, cutoff_year: int | None = None) -> tuple[int | None, str]:
    """The training cutoff year used for ``model`` and where it comes from (``models.catalog.training_cutoff``)."""
    return training_cutoff(project, model, cutoff_year)


def _tested(project: "Project", model: str | None) -> list[str]:
    from workbench.models.catalog import list_models

    names = {m.id: m.label for m in list_models(project)}
    asked = models_with_runs(project, QUIZ_KIND)
    return [model] if model else [names[i] for i in sorted(asked) if i in names]


def accuracy_frame(project: "Project", model: str | None = None, *, cutoff_year: int | None = None,
                   tag: str = "member") -> pd.DataFrame:
    """Per model, paraphrases, orders and book: passages, questions, the book score (mean passage score) with
    its Wilson interval over passages and the passage-level test against chance (25%), and whether the book
    is suspect or clean (``decop_scores``)."""
    from workbench.corpus.library import books_frame

    books, members = books_frame(project), member_labels(project, tag)
    frames = []
    for label in _tested(project, model):
        scores = decop_scores.passage_scores(answers_frame(project, label))
        if scores.empty:
            continue
        cutoff, _ = model_cutoff(project, label, cutoff_year)
        frames.append(decop_scores.book_scores(scores, decop_scores.book_groups(books, members, cutoff)))
    if not frames:
        return pd.DataFrame(columns=ACCURACY_COLUMNS)
    frame = pd.concat(frames, ignore_index=True)
    frame["book_id"] = frame["book_id"].astype("Int64")
    return frame


def decision_frame(project: "Project", model: str | None = None, *, cutoff_year: int | None = None,
                   tag: str = "member", books: pd.DataFrame | None = None) -> pd.DataFrame:
    """DE-COP's decision per model, paraphrases and orders: the ROC AUC of book scores, suspect against clean
    books, with its bootstrap interval (``books``: ``accuracy_frame``'s result, if read already)."""
    books = accuracy_frame(project, model, cutoff_year=cutoff_year, tag=tag) if books is None else books
    rows = []
    for label, part in books.groupby("model", sort=True) if not books.empty else []:
        cutoff, source = model_cutoff(project, label, cutoff_year)
        decided = decop_scores.decision(part, cutoff)
        decided["cutoff_from"] = source
        rows.append(decided)
    if not rows:
        return pd.DataFrame(columns=[*decop_scores.DECISION_COLUMNS, "cutoff_from"])
    return pd.concat(rows, ignore_index=True)


def cutoff_note(project: "Project", model: str | None = None, cutoff_year: int | None = None) -> str:
    """Where the training cutoff of each model tested comes from, in a plain sentence."""
    parts = []
    for label in _tested(project, model):
        cutoff, source = model_cutoff(project, label, cutoff_year)
        parts.append(f"{label}: {cutoff} ({source})" if cutoff is not None else f"{label}: none given")
    if not parts:
        return ""
    return ("Training cutoff (books published after it count as clean): " + "; ".join(parts) + ". Palimpsest does "
            f"not know when a model's training data end: give the year with --cutoff-year, or tag the model "
            f"{CUTOFF_TAG}=YEAR on the Models page.")
