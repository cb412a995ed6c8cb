"""Passage overlap with a reference corpus (the leakage study's Study 1), run kind ``leakage-overlap``.

For each passage (``responses.item_id`` = a ``leakage_passages`` id), the run stores what the index
answered, as JSON in ``raw``:

- ``suffix_lengths``: at every token, the length of the longest run of passage tokens ending there that
  occurs in the corpus;
- ``longest``, ``start``, ``text``, ``frequency``: the longest such run (when several are equally long,
  the most frequent one, as the study reports; then the first), where it starts, its text and how
  often it occurs in the corpus;
- ``ngram``: for each token of that run and each order k = 1 .. ``max_order``, the counts
  ``[c(context + token), c(context)]`` with the context the k - 1 tokens before it inside the run
  (order 1: ``[c(token), corpus tokens]``), and ``vocabulary``, ``corpus_words``.

Read back (``overlap_frame``), the numbers are derived by pure functions:

- ``covered_share`` = longest / passage tokens (1: the whole passage occurs);
- ``log_prob``: natural log of the run's probability under an interpolated n-gram model of order
  ``order`` (default 5, as the study's KenLM model) estimated from the same index, with Dirichlet
  (additive-prior) smoothing: P(w | h) = (c(h w) + mu * P(w | h')) / (c(h) + mu), h' = h without its
  first token, mu = 1; the base is add-one unigram P(w) = (c(w) + 1) / (N + V). Unlike KenLM's
  modified Kneser-Ney it needs nothing but counts, which both a local index and the public API give;
- ``chance_p`` = 1 - (1 - p)^n, the chance that a sequence of that probability occurs at least once in
  a corpus of n white-space words (the study's footnote 3; remote corpora: n = their size in tokens);
  below ``CHANCE_LEVEL`` (0.05) the overlap is unlikely to be a coincidence (``unlikely_by_chance``).
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
import pandas as pd

from workbench.errors import UserError
from workbench.jobs import JobReport, Unit, find_or_create_run, get_run, register_resumer, run_job
from workbench.probes.leakage import passages as passage_store
from workbench.probes.leakage.corpora import get_corpus, list_corpora, open_index
from workbench.probes.leakage.runs import index_process, responses
from workbench.progress import TaskState

if TYPE_CHECKING:
    from workbench.probes.leakage.corpora import NgramIndex
    from workbench.project import Project

KIND = "leakage-overlap"
MAX_ORDER = 5
PRIOR = 1.0
CHANCE_LEVEL = 0.05
COLUMNS = ["book", "passage_id", "tokens", "longest", "longest_text", "frequency", "covered_share", "log_prob",
           "chance_p", "unlikely_by_chance", "start", "book_id", "item_id", "corpus"]


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
    return {
        "tokens": int(ids.size),
        "suffix_lengths": lengths.tolist(),
        "longest": longest,
        "start": start,
        "text": encoded.span_text(start, longest),
        "frequency": int(frequency),
        "ngram": ngram_counts(index, sequence, max_order),
        "vocabulary": int(index.vocabulary_size),
        "corpus_tokens": int(index.total_tokens),
        "corpus_words": int(index.words),
    }


def ngram_counts(index: "NgramIndex", sequence: np.ndarray, max_order: int) -> list[list[list[int]]]:
    """For each token of ``sequence`` and order k = 1 .. max_order (within the sequence): [c(h w), c(h)]."""
    wanted: list[tuple[int, ...]] = []
    plan = []
    for i in range(sequence.size):
        row = []
        for k in range(1, min(max_order, i + 1) + 1):
            gram = tuple(sequence[i - k + 1 : i + 1].tolist())
            row.append((gram, gram[:-1]))
            wanted += [gram, gram[:-1]]
        plan.append(row)
    unique = list(dict.fromkeys(wanted))
    found = dict(zip(unique, index.counts(unique))) if unique else {}
    return [[[found[g], found[h]] for g, h in row] for row in plan]


# ---------------------------------------------------------------------------------------------- deriving
def sequence_log_prob(ngram: Sequence[Sequence[Sequence[int]]], vocabulary: int, *, order: int = MAX_ORDER,
                      prior: float = PRIOR) -> float:
    """Natural-log probability of the run under the interpolated n-gram model (see the module text)."""
    total = 0.0
    for row in ngram:
        (unigram, corpus_tokens), *higher = row
        p = (unigram + 1.0) / (corpus_tokens + vocabulary)
        for full, context in higher[: max(0, order - 1)]:
            p = (full + prior * p) / (context + prior)
        total += math.log(p)
    return total


def chance_of_occurring(log_prob: float, n: float) -> float:
    """1 - (1 - p)^n for p = exp(log_prob), computed without losing tiny values."""
    if not math.isfinite(log_prob):
        return math.nan
    p = math.exp(log_prob)
    if p >= 1.0:
        return 1.0
    return -math.expm1(n * math.log1p(-p))


def derive(raw: dict[str, Any], *, order: int = MAX_ORDER, prior: float = PRIOR) -> dict[str, Any]:
    longest, tokens = raw["longest"], raw["tokens"]
    log_prob = sequence_log_prob(raw["ngram"], raw["vocabulary"], order=order, prior=prior) if longest else math.nan
    chance = chance_of_occurring(log_prob, raw["corpus_words"]) if longest else math.nan
    return {
        "tokens": tokens,
        "longest": longest,
        "longest_text": raw["text"],
        "frequency": raw["frequency"],
        "covered_share": longest / tokens if tokens else math.nan,
        "log_prob": log_prob,
        "chance_p": chance,
        "unlikely_by_chance": bool(chance < CHANCE_LEVEL) if longest else False,
        "start": raw["start"],
    }


# ---------------------------------------------------------------------------------------------- running
def run_overlap(project: "Project", corpus: str, source: str = "cloze", *, book_ids: Sequence[int] | None = None,
                passage_ids: Sequence[int] | None = None, state: TaskState | None = None,
                retry_failed: bool = False, index: "NgramIndex | None" = None) -> JobReport:
    """Query every passage of ``source`` against the corpus ``corpus``; answers are stored as they come."""
    chosen = get_corpus(project, corpus)
    ids = list(passage_ids) if passage_ids is not None else passage_store.gather(project, source, book_ids=book_ids)
    config = {"corpus": chosen.name, "corpus_id": chosen.id, "passage_ids": ids}
    run_id = find_or_create_run(project, KIND, model_id=None, params={"max_order": MAX_ORDER}, config=config)
    return _execute(project, run_id, chosen.name, ids, state, retry_failed, index)


def _execute(project, run_id, corpus, ids, state, retry_failed, index=None) -> JobReport:
    texts = passage_store.passage_texts(project, ids)
    opened = index or open_index(project, corpus)
    try:
        process = index_process(opened, texts, lambda index, text, _unit: query_passage(index, text))
        return run_job(project, run_id, [Unit(i) for i in ids], process, state, retry_failed=retry_failed)
    finally:
        if index is None:
            opened.close()


def resume(project: "Project", run_id: int, state: TaskState, retry_failed: bool) -> JobReport:
    run = get_run(project, run_id)
    ids = list(run["config"].get("passage_ids") or [])
    return _execute(project, run_id, run["config"]["corpus"], ids, state, retry_failed)


register_resumer(KIND, resume)


# ---------------------------------------------------------------------------------------------- reading
def overlap_frame(project: "Project", corpus: str | None = None, *, passage_ids: Sequence[int] | None = None,
                  order: int = MAX_ORDER, positions: bool = False) -> pd.DataFrame:
    """One row per passage queried against ``corpus`` (every corpus if None), newest answer first."""
    frames = []
    names = [corpus] if corpus else _corpora_with_runs(project)
    for name in names:
        found = _answers(project, name)
        if passage_ids is not None:
            found = found[found["item_id"].isin(list(passage_ids))]
        if found.empty:
            continue
        info = passage_store.passages_frame(project, found["item_id"].astype(int).tolist())
        meta = info.set_index("passage_id")
        rows = []
        for item, raw in zip(found["item_id"].astype(int), found["raw"]):
            data = json.loads(raw)
            row = derive(data, order=order)
            passage = meta.loc[item]
            row.update(book=passage["book"], passage_id=passage["source_key"], book_id=passage["book_id"],
                       item_id=item, corpus=name)
            if positions:
                row["suffix_lengths"] = " ".join(str(v) for v in data["suffix_lengths"])
            rows.append(row)
        frames.append(pd.DataFrame(rows))
    columns = COLUMNS + (["suffix_lengths"] if positions else [])
    if not frames:
        return pd.DataFrame(columns=columns)
    frame = pd.concat(frames, ignore_index=True)[columns]
    frame["book_id"] = frame["book_id"].astype("Int64")
    return frame.sort_values(["corpus", "book", "item_id"], kind="stable").reset_index(drop=True)


def _answers(project: "Project", corpus: str) -> pd.DataFrame:
    """The newest answer per passage against ``corpus`` as it is now: never those against an earlier corpus
    that had its name (removed, then built again from other files)."""
    return responses(project, KIND, config_filter={"corpus_id": get_corpus(project, corpus).id})


def _corpora_with_runs(project: "Project") -> list[str]:
    rows = project.db.execute("SELECT DISTINCT config FROM runs WHERE kind = ?", [KIND]).fetchall()
    queried = {json.loads(c or "{}").get("corpus_id") for (c,) in rows}
    return sorted(corpus.name for corpus in list_corpora(project) if corpus.id in queried)


def passage_detail(project: "Project", corpus: str, item_id: int) -> dict[str, Any]:
    """One passage's text with its tokens' places and the longest overlap marked (for click-through)."""
    found = _answers(project, corpus)
    found = found[found["item_id"] == item_id]
    if found.empty:
        raise UserError(f"Passage {item_id} has not been queried against '{corpus}' yet.")
    raw = json.loads(found["raw"].iloc[0])
    text = passage_store.passage_texts(project, [item_id])[item_id]
    index = open_index(project, corpus)
    try:
        encoded = index.encode(text)
    finally:
        index.close()
    start, longest = raw["start"], raw["longest"]
    span = (int(encoded.starts[start]), int(encoded.ends[start + longest - 1])) if longest else (0, 0)
    return {"text": encoded.text, "span": span, "suffix_lengths": raw["suffix_lengths"], **derive(raw)}
