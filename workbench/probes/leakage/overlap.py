"""Passage overlap with a reference corpus (the leakage study's Study 1), run kind ``leakage-overlap``.

For each passage (``responses.item_id`` = a ``leakage_passages`` id), the run stores what the index
answered, as JSON in ``raw``:

- ``suffix_lengths``: at every token, the length of the longest run of passage tokens ending there that
  occurs in the corpus;
- ``longest``, ``start``, ``text``, ``frequency``: the longest such run (when several are equally long,
  the most frequent one, as the study reports; then the first), where it starts, its text and how
  often it occurs in the corpus;
- ``ids``: the run's token ids; ``span_words``: its size in the unit of the corpus size n (white-space
  words; remote corpora: tokens);
- ``ngram``: for each token of that run and each order k = 1 .. ``max_order``, the counts
  ``[c(context + token), c(context)]`` with the context the k - 1 tokens before it inside the run
  (order 1: ``[c(token), corpus tokens]``), and ``vocabulary``, ``corpus_words``.

Read back (``overlap_frame``), the numbers are derived by pure functions:

- ``covered_share`` = longest / passage tokens (1: the whole passage occurs);
- ``log_prob``, ``chance_p``, ``unlikely_by_chance``: the run's probability under the chance model and the
  chance that a sequence that probable occurs at least once in the corpus (``chance``: by default the same
  corpus's counts with the run's own occurrences removed; with ``background``, the counts of a background
  corpus, asked for in runs of kind ``leakage-chance``); ``chance_model`` names the model and
  ``chance_removed`` says how many occurrences of the run were taken out of its counts.

Each answer is stored with its numbers under the default chance model (the same corpus less the match's
own occurrences, order ``MAX_ORDER``, prior ``PRIOR``) already derived, in the response's ``extra``
(``derived_extra``: ``{"derived": {"version", "model", "order", "prior", and derive's numbers}}``), so that
reading 57,000 answers reads these few numbers instead of scoring every answer again. ``overlap_frame`` uses
them where they were derived under the settings asked for by this ``DERIVED`` version, and derives the others
from ``raw`` (answers stored before, another order, a background corpus, ``positions``).

A ``leakage-chance`` run (``run_background``) asks the background corpus, for each passage already compared
with the corpus, about the text of its longest overlap: its tokens there (``ids``), how often it occurs
there (``frequency``) and the same n-gram counts (``ngram``, ``vocabulary``, ``corpus_tokens``).
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
import pandas as pd

from workbench.errors import UserError
from workbench.jobs import JobReport, Unit, find_or_create_run, get_run, run_job
from workbench.probes.leakage import passages as passage_store
from workbench.probes.leakage.chance import (
    BACKGROUND,
    CHANCE_LEVEL,
    MAX_ORDER,
    PRIOR,
    SAME,
    ChanceModel,
    chance_of_occurring,
    searched_size,
    span_chance,
)
from workbench.probes.leakage.corpora import get_corpus, list_corpora, open_index
from workbench.probes.leakage.kinds import CHANCE_KIND as BACKGROUND_KIND
from workbench.probes.leakage.kinds import OVERLAP_KIND as KIND
from workbench.probes.leakage.runs import index_process, responses
from workbench.probes.leakage.wordlevel import count_words
from workbench.progress import TaskState
from workbench.runs import keep_in_extras, runs

if TYPE_CHECKING:
    from workbench.probes.leakage.corpora import NgramIndex
    from workbench.project import Project

#: the answers' layout: 2 keeps the run's token ids (the chance model takes the run's own occurrences out of
#: the counts with them); runs of layout 1 are asked again
ANSWERS = 2
COLUMNS = ["book", "passage_id", "tokens", "longest", "longest_text", "frequency", "covered_share", "log_prob",
           "chance_p", "unlikely_by_chance", "chance_model", "chance_removed", "start", "book_id", "item_id", "corpus"]
#: the version of ``derive`` whose numbers are stored with each answer (``extra["derived"]``): raise it when
#: ``derive`` or the chance model changes a number it gives, and answers stored before are derived again
DERIVED = 1
#: derive's numbers that are stored (the others follow from them and the settings: ``overlap_read.stored_columns``)
STORED = ("tokens", "longest", "longest_text", "frequency", "log_prob", "chance_p", "chance_removed", "start")
#: the chance model whose numbers a run keeps with each answer
STORED_MODEL = ChanceModel(SAME, "", MAX_ORDER, PRIOR)
OLD_ANSWER = ("no chance estimate: this overlap was found before the chance model left out the match's own "
              "occurrences; find the overlaps again")
NOT_COUNTED = "no chance estimate yet: the background corpus '{}' has not been asked about this overlap"


# ---------------------------------------------------------------------------------------------- querying
def query_passage(index: "NgramIndex", text: str, max_order: int = MAX_ORDER) -> dict[str, Any]:
    """Everything the overlap of one passage needs from the index (the ``raw`` of a response)."""
    encoded = index.encode(text)
    ids = encoded.ids
    lengths = index.suffix_lengths(ids) if ids.size else np.zeros(0, np.int64)
    longest = int(lengths.max()) if lengths.size else 0
    start, frequency, sequence = 0, 0, np.zeros(0, np.int64)
    if longest > 0:
        ends = np.flatnonzero(lengths == longest)
        candidates = list(dict.fromkeys(tuple(ids[e - longest + 1 : e + 1].tolist()) for e in ends))
        frequencies = dict(zip(candidates, index.counts(candidates)))
        best = max(range(len(ends)), key=lambda n: (frequencies[tuple(ids[ends[n] - longest + 1 : ends[n] + 1].tolist())],
                                                   -n))
        start = int(ends[best] - longest + 1)
        sequence = ids[start : start + longest]
        frequency = frequencies[tuple(sequence.tolist())]
    span_text = encoded.span_text(start, longest)
    return {
        "tokens": int(ids.size),
        "suffix_lengths": lengths.tolist(),
        "longest": longest,
        "start": start,
        "text": span_text,
        "frequency": int(frequency),
        "ids": [int(i) for i in sequence.tolist()],
        "span_words": longest if getattr(index, "kind", "") == "remote" else count_words(span_text),
        "ngram": ngram_counts(index, sequence, max_order),
        "vocabulary": int(index.vocabulary_size),
        "corpus_tokens": int(index.total_tokens),
        "corpus_words": int(index.words),
    }


def ngram_counts(index: "NgramIndex", sequence: np.ndarray, max_order: int) -> list[list[list[int]]]:
    """For each token of ``sequence`` and order k = 1 .. max_order (within the sequence): [c(h w), c(h)]."""
    plan = _plan(sequence, max_order)
    return _laid_out(plan, _count_all(index, [g for row in plan for pair in row for g in pair]))


def _plan(sequence: np.ndarray, max_order: int) -> list[list[tuple[tuple[int, ...], tuple[int, ...]]]]:
    """For each token of ``sequence``, the (h w, h) pairs of orders 1 .. max_order."""
    plan = []
    for i in range(len(sequence)):
        row = []
        for k in range(1, min(max_order, i + 1) + 1):
            gram = tuple(int(t) for t in sequence[i - k + 1 : i + 1])
            row.append((gram, gram[:-1]))
        plan.append(row)
    return plan


def _count_all(index: "NgramIndex", wanted: Sequence[tuple[int, ...]]) -> dict[tuple[int, ...], int]:
    unique = list(dict.fromkeys(wanted))
    return dict(zip(unique, index.counts(unique))) if unique else {}


def _laid_out(plan, found: dict[tuple[int, ...], int]) -> list[list[list[int]]]:
    return [[[found[g], found[h]] for g, h in row] for row in plan]


def query_background(index: "NgramIndex", span_text: str, max_order: int = MAX_ORDER) -> dict[str, Any]:
    """What the chance model needs from a background corpus about an overlap's text (its ``raw``): its tokens
    there, how often it occurs there, and its n-gram counts there."""
    ids = [int(i) for i in index.encode(span_text).ids.tolist()] if span_text else []
    plan = _plan(np.asarray(ids, np.int64), max_order)
    whole = tuple(ids)
    found = _count_all(index, [g for row in plan for pair in row for g in pair] + ([whole] if whole else []))
    return {
        "text": span_text,
        "ids": ids,
        "frequency": int(found[whole]) if whole else 0,
        "ngram": _laid_out(plan, found),
        "vocabulary": int(index.vocabulary_size),
        "corpus_tokens": int(index.total_tokens),
    }


# ---------------------------------------------------------------------------------------------- deriving
def chance_model(background: str | None = None, order: int = MAX_ORDER) -> ChanceModel:
    return ChanceModel(BACKGROUND, background, order) if background else ChanceModel(SAME, "", order)


def derive(raw: dict[str, Any], *, order: int = MAX_ORDER, prior: float = PRIOR,
           model: ChanceModel | None = None, background: dict[str, Any] | None = None,
           log_prob: float | None = None) -> dict[str, Any]:
    """The numbers of one passage's overlap from its stored answer (and the background's, with a background
    chance ``model``). ``log_prob``: the match's log-probability where it is computed already (``overlap_read``
    computes many at once), instead of from the counts."""
    model = model or ChanceModel(SAME, "", order)
    order = model.order
    longest, tokens = raw["longest"], raw["tokens"]
    described = model.describe()
    chance = {"log_prob": math.nan, "chance_p": math.nan, "removed": 0}
    if longest:
        span_size = raw["span_words"] if "span_words" in raw else count_words(raw.get("text", ""))
        n = searched_size(raw["corpus_words"], raw["frequency"], span_size)
        if model.kind == BACKGROUND:
            if background is None or background.get("text") != raw["text"]:
                described = NOT_COUNTED.format(model.corpus)
            else:
                chance = _chance(background, n, log_prob, remove=False, order=order, prior=prior)
        elif "ids" not in raw:
            described = OLD_ANSWER
        else:
            chance = _chance(raw, n, log_prob, remove=True, order=order, prior=prior)
    return {
        "tokens": tokens,
        "longest": longest,
        "longest_text": raw["text"],
        "frequency": raw["frequency"],
        "covered_share": longest / tokens if tokens else math.nan,
        "log_prob": chance["log_prob"],
        "chance_p": chance["chance_p"],
        "unlikely_by_chance": bool(chance["chance_p"] < CHANCE_LEVEL),
        "chance_model": described,
        "chance_removed": chance["removed"],
        "start": raw["start"],
    }


def derived_extra(raw: dict[str, Any]) -> dict[str, Any] | None:
    """What is stored beside an answer in ``extra``: its numbers by ``derive`` under the default chance model,
    with the settings and the version of the derivation they were computed under (None where the answer's
    chance is not the model's own: it is then derived when read, as before)."""
    row = derive(raw, model=STORED_MODEL, prior=PRIOR)
    if row["chance_model"] != STORED_MODEL.describe():
        return None
    return {"derived": _stored_numbers(row)}


def _stored_numbers(row: dict[str, Any]) -> dict[str, Any]:
    """``derive``'s numbers of one answer under ``STORED_MODEL``, as they are kept in its ``extra["derived"]``."""
    numbers = {key: row[key] for key in STORED}
    for key in ("log_prob", "chance_p"):  # NaN (no chance estimate) as JSON's null
        numbers[key] = None if math.isnan(numbers[key]) else numbers[key]
    return {"version": DERIVED, "model": STORED_MODEL.kind, "order": STORED_MODEL.order, "prior": PRIOR, **numbers}


def _keep_derived(project: "Project", answers: pd.DataFrame, derived: dict[str, list], model: ChanceModel,
                  places: Sequence[int]) -> None:
    """The numbers derived at ``places`` of ``answers`` (answers stored before their numbers were kept with
    them, or kept under an older version of ``derive``) kept with them now, so that the next read takes them
    from there: a project written by an earlier release is brought up to date by its first read. Only the
    numbers of the model a run stores (``STORED_MODEL``)."""
    if model != STORED_MODEL:
        return
    described = model.describe()
    run_ids, item_ids, samples = (answers[c].tolist() for c in ("run_id", "item_id", "sample"))
    rows = [(run_ids[at], item_ids[at], samples[at], _stored_numbers({key: derived[key][at] for key in STORED}))
            for at in places if derived["chance_model"][at] == described]
    keep_in_extras(project, "derived", rows)


def _chance(counts: dict[str, Any], n: float, log_prob: float | None, *, remove: bool, order: int,
            prior: float) -> dict[str, Any]:
    if log_prob is None:
        return span_chance(counts, n, remove=remove, order=order, prior=prior)
    return {"log_prob": log_prob, "chance_p": chance_of_occurring(log_prob, n),
            "removed": int(counts["frequency"]) if remove else 0}


# ---------------------------------------------------------------------------------------------- running
def run_overlap(project: "Project", corpus: str, source: str = "cloze", *, book_ids: Sequence[int] | None = None,
                passage_ids: Sequence[int] | None = None, state: TaskState | None = None,
                retry_failed: bool = False, index: "NgramIndex | None" = None) -> JobReport:
    """Query every passage of ``source`` against the corpus ``corpus``; answers are stored as they come."""
    chosen = get_corpus(project, corpus)
    ids = list(passage_ids) if passage_ids is not None else passage_store.gather(project, source, book_ids=book_ids)
    config = {"corpus": chosen.name, "corpus_id": chosen.id, "passage_ids": ids}
    run_id = find_or_create_run(project, KIND, model_id=None, params=_params(), config=config)
    return _execute(project, run_id, chosen.name, ids, state, retry_failed, index)


def _params() -> dict[str, Any]:
    return {"max_order": MAX_ORDER, "answers": ANSWERS}


def _execute(project, run_id, corpus, ids, state, retry_failed, index=None) -> JobReport:
    texts = passage_store.passage_texts(project, ids)
    opened = index or open_index(project, corpus)
    try:
        process = index_process(opened, texts, lambda index, text, _unit: query_passage(index, text),
                                extra=derived_extra)
        return run_job(project, run_id, [Unit(i) for i in ids], process, state, retry_failed=retry_failed)
    finally:
        if index is None:
            opened.close()


def resume(project: "Project", run_id: int, state: TaskState, retry_failed: bool) -> JobReport:
    run = get_run(project, run_id)
    ids = list(run["config"].get("passage_ids") or [])
    return _execute(project, run_id, run["config"]["corpus"], ids, state, retry_failed)


def run_background(project: "Project", corpus: str, background: str, *, passage_ids: Sequence[int],
                   state: TaskState | None = None, retry_failed: bool = False,
                   index: "NgramIndex | None" = None) -> JobReport:
    """Ask the corpus ``background`` about the longest overlap of each passage with ``corpus`` (found first)."""
    searched, chosen = get_corpus(project, corpus), get_corpus(project, background)
    if chosen.id == searched.id:
        raise UserError(f"The background corpus must be another corpus than '{corpus}': the chance model is "
                        "estimated on text that does not hold the match. Leave the background out to use "
                        f"'{corpus}' with the match's own occurrences removed.")
    ids = list(passage_ids)
    config = {"corpus": searched.name, "corpus_id": searched.id, "background": chosen.name,
              "background_id": chosen.id, "passage_ids": ids}
    run_id = find_or_create_run(project, BACKGROUND_KIND, model_id=None, params={"max_order": MAX_ORDER},
                                config=config)
    return _execute_background(project, run_id, searched.name, chosen.name, ids, state, retry_failed, index)


def _execute_background(project, run_id, corpus, background, ids, state, retry_failed, index=None) -> JobReport:
    found = _answers(project, corpus)
    spans = {int(item): json.loads(raw) for item, raw in zip(found["item_id"], found["raw"])}
    texts = {i: spans[i]["text"] for i in ids if i in spans}
    opened = index or open_index(project, background)

    def ask(index, text, unit):
        if unit.item_id not in spans:
            raise UserError(f"Passage {unit.item_id} has no overlap with '{corpus}' yet: find the overlaps first.")
        return query_background(index, text)

    try:
        process = index_process(opened, _Always(texts), ask)
        return run_job(project, run_id, [Unit(i) for i in ids], process, state, retry_failed=retry_failed)
    finally:
        if index is None:
            opened.close()


class _Always(dict):
    """The span texts by passage; a passage without one gives "" (its unit then fails with a message)."""

    def __missing__(self, key):
        return ""


def resume_background(project: "Project", run_id: int, state: TaskState, retry_failed: bool) -> JobReport:
    run = get_run(project, run_id)
    config = run["config"]
    return _execute_background(project, run_id, config["corpus"], config["background"],
                               list(config.get("passage_ids") or []), state, retry_failed)


# ---------------------------------------------------------------------------------------------- reading
def overlap_frame(project: "Project", corpus: str | None = None, *, background: str | None = None,
                  passage_ids: Sequence[int] | None = None, order: int = MAX_ORDER,
                  positions: bool = False) -> pd.DataFrame:
    """One row per passage queried against ``corpus`` (every corpus if None), newest answer first; the chance
    from ``background``'s counts when named, else from the corpus's own less the match's occurrences.

    Read in bulk: the numbers stored with each answer (``derived_extra``) where they were derived under the
    model asked for, the others derived from the answers (``overlap_read.derive_many``): the same numbers as
    ``derive`` per answer, built column by column."""
    frames = []
    names = [corpus] if corpus else _corpora_with_runs(project)
    model = chance_model(background, order)
    for name in names:
        if background and background == name:
            continue
        if background:
            items, columns = _derived_from_answers(project, name, model, background, passage_ids, positions)
        else:
            items, columns = _derived_or_stored(project, name, model, passage_ids, positions)
        if not items:
            continue
        info = passage_store.passage_books(project, items)
        frame = pd.DataFrame(columns)
        frame["book"] = info["book"].to_numpy()
        frame["passage_id"] = info["source_key"].to_numpy()
        frame["book_id"] = info["book_id"].array
        frame["item_id"] = items
        frame["corpus"] = name
        frames.append(frame)
    columns = COLUMNS + (["suffix_lengths"] if positions else [])
    if not frames:
        return pd.DataFrame(columns=columns)
    frame = pd.concat(frames, ignore_index=True)[columns] if len(frames) > 1 else frames[0][columns]
    frame["book_id"] = frame["book_id"].astype("Int64")
    return frame.sort_values(["corpus", "book", "item_id"], kind="stable").reset_index(drop=True)


def _derived_from_answers(project, name, model, background, passage_ids, positions) -> tuple[list[int], dict]:
    """The items answered against ``name`` and derive's columns for them, each derived from its answer."""
    from workbench.probes.leakage.overlap_read import derive_many

    found = _answers(project, name, passage_ids)
    items = found["item_id"].astype(int).tolist()
    if not items:
        return [], {}
    backgrounds = background_orders = None
    if background:
        counted = _background_answers(project, name, background, passage_ids)
        ids = counted["item_id"].astype(int)
        raws, orders = dict(zip(ids, counted["raw"])), dict(zip(ids, _orders(counted)))
        backgrounds = [raws.get(item) for item in items]
        background_orders = [orders.get(item) for item in items]
    return items, derive_many(found["raw"].tolist(), _orders(found), model=model, derive=derive,
                              backgrounds=backgrounds, background_orders=background_orders, positions=positions,
                              messages=(OLD_ANSWER, NOT_COUNTED))


def _derived_or_stored(project, name, model, passage_ids, positions) -> tuple[list[int], dict]:
    """The items answered against ``name`` and derive's columns for them: the numbers stored with an answer
    where they were derived under ``model``, the others derived from the answers (read only for these, except
    with ``positions``, which come from every answer)."""
    from workbench.probes.leakage.overlap_read import derive_many, stored_columns

    if positions:
        found = _answers(project, name, passage_ids, ("extra", "raw", "params"))
    else:
        found = _answers(project, name, passage_ids, ("extra",))
    items = found["item_id"].astype(int).tolist()
    if not items:
        return [], {}
    columns, missing = stored_columns(found["extra"].tolist(), version=DERIVED, kind=model.kind, order=model.order,
                                      prior=PRIOR, described=model.describe(), stored=STORED)
    if positions:
        derived = derive_many(found["raw"].tolist(), _orders(found), model=model, derive=derive, positions=True,
                              messages=(OLD_ANSWER, NOT_COUNTED))
        for n in missing:
            for key, values in columns.items():
                values[n] = derived[key][n]
        columns["suffix_lengths"] = derived["suffix_lengths"]
        _keep_derived(project, found, derived, model, missing)
    elif missing:
        asked = passage_ids if len(missing) == len(items) else [items[n] for n in missing]
        older = _answers(project, name, asked)
        derived = derive_many(older["raw"].tolist(), _orders(older), model=model, derive=derive,
                              messages=(OLD_ANSWER, NOT_COUNTED))
        place = {item: n for n, item in enumerate(older["item_id"].astype(int).tolist())}
        for n in missing:
            at = place.get(items[n])
            if at is None:  # its answer was taken away between the two reads
                raise UserError(f"The answers against '{name}' changed while they were read: show them again.")
            for key, values in columns.items():
                values[n] = derived[key][at]
        _keep_derived(project, older, derived, model, [place[items[n]] for n in missing])
    return items, columns


def _orders(found: pd.DataFrame) -> list[int | None]:
    """The highest order of n-gram counts each answer holds (its run's ``max_order``; each run's read once)."""
    params = found["params"].tolist()
    stored = {}
    for text in set(params):
        value = json.loads(text or "{}").get("max_order")
        stored[text] = value if type(value) is int else None
    return [stored[text] for text in params]


def _answers(project: "Project", corpus: str, passage_ids: Sequence[int] | None = None,
             columns: Sequence[str] = ("raw", "params")) -> pd.DataFrame:
    """The newest answer per passage against ``corpus`` as it is now: never those against an earlier corpus
    that had its name (removed, then built again from other files); of ``passage_ids`` only, if given."""
    return responses(project, KIND, config_filter={"corpus_id": get_corpus(project, corpus).id},
                     item_ids=passage_ids, columns=columns)


def _background_answers(project: "Project", corpus: str, background: str,
                        passage_ids: Sequence[int] | None = None) -> pd.DataFrame:
    return responses(project, BACKGROUND_KIND, item_ids=passage_ids, columns=("raw", "params"),
                     config_filter={"corpus_id": get_corpus(project, corpus).id,
                                    "background_id": get_corpus(project, background).id})


def _corpora_with_runs(project: "Project") -> list[str]:
    queried = {run.config.corpus_id for run in runs(project, KIND)}
    return sorted(corpus.name for corpus in list_corpora(project) if corpus.id in queried)


def passage_detail(project: "Project", corpus: str, item_id: int, *, background: str | None = None) -> dict[str, Any]:
    """One passage's text with its tokens' places and the longest overlap marked (for click-through)."""
    found = _answers(project, corpus, [item_id])
    if found.empty:
        raise UserError(f"Passage {item_id} has not been queried against '{corpus}' yet.")
    raw = json.loads(found["raw"].iloc[0])
    counted = _background_answers(project, corpus, background, [item_id]) if background else None
    counted = json.loads(counted["raw"].iloc[0]) if counted is not None and not counted.empty else None
    text = passage_store.passage_texts(project, [item_id])[item_id]
    index = open_index(project, corpus)
    try:
        encoded = index.encode(text)
    finally:
        index.close()
    start, longest = raw["start"], raw["longest"]
    span = (int(encoded.starts[start]), int(encoded.ends[start + longest - 1])) if longest else (0, 0)
    return {"text": encoded.text, "span": span, "suffix_lengths": raw["suffix_lengths"],
            **derive(raw, model=chance_model(background), background=counted)}
