"""Membership scores from an open model's token log-probabilities, run kind ``membership``.

A run reads every passage once through ``Backend.score_texts`` (padded batches, one forward pass per
batch) and stores, per passage, the log-probability of each token given the ones before it and the
mean and variance of the log-probability over the model's next-token distribution at that place
(``raw``: JSON lists, 6 decimals). The tokenizer adds its special tokens as usual (as the published
reference code does), so a model without a start token has no score for a passage's first token.

Scores, derived when read (``scores``; the direction says which way points to *member*):

- ``perplexity`` = exp(-mean log p) over the scored tokens (lower: member);
- ``zlib_ratio`` = the log-perplexity (nats per token) divided by the zlib-compressed length of the
  passage in bytes (Carlini et al. 2021; lower: member);
- ``min_k`` = the mean of the lowest k% of token log-probabilities, at least one token (Min-K%, Shi et
  al. 2024; higher: member);
- ``min_k_pp`` = the same over (log p - mean) / sd, the log-probability standardised by the model's
  own expectation at that place (Min-K%++, Zhang et al. 2024; higher: member);
- ``ref_ratio`` = log-perplexity of the model / log-perplexity of a reference model on the same
  passage (Carlini et al. 2021's comparison with another model; lower: member).

Where books carry a member tag (``member=yes`` / ``member=no`` by default), ``auc`` gives the ROC AUC of
each score over books (book means), oriented so that 1 means members always score as more
member-like, with a bootstrap interval (``statistics.roc_auc``).
"""

from __future__ import annotations

import json
import math
import zlib
from typing import TYPE_CHECKING, Any, Iterable, Sequence

import numpy as np
import pandas as pd

from workbench.jobs import JobReport, Outcome, Unit, find_or_create_run, get_run, register_resumer
from workbench.models.base import Failure
from workbench.probes.leakage import passages as passage_store
from workbench.probes.leakage.runs import open_model, responses, run_on_model
from workbench.probes.leakage.statistics import roc_auc
from workbench.progress import TaskState

if TYPE_CHECKING:
    from workbench.models.base import Backend
    from workbench.project import Project

KIND = "membership"
K_PERCENT = 20.0
SCORES = ["perplexity", "zlib_ratio", "min_k", "min_k_pp", "ref_ratio"]
#: +1 where a higher score points to a member, -1 where a lower one does
DIRECTION = {"perplexity": -1, "zlib_ratio": -1, "min_k": 1, "min_k_pp": 1, "ref_ratio": -1}
MEMBER_TAG = "member"
YES = {"yes", "y", "true", "1", "member", "in"}
NO = {"no", "n", "false", "0", "non-member", "nonmember", "out"}
PASSAGE_COLUMNS = ["book", "passage_id", "tokens", *SCORES, "book_id", "item_id", "model", "reference"]


# ---------------------------------------------------------------------------------------------- scores
def lowest_mean(values: np.ndarray, k_percent: float) -> float:
    """Mean of the lowest ``k_percent`` % of ``values`` (at least one value; NaN when there are none)."""
    if values.size == 0:
        return math.nan
    count = max(1, int(values.size * k_percent / 100.0))
    return float(np.sort(values)[:count].mean())


def passage_scores(raw: dict[str, Any], text: str, *, k_percent: float = K_PERCENT) -> dict[str, float]:
    """The membership scores of one passage from its stored token values (no reference ratio)."""
    logprobs = np.asarray([v for v in raw["logprobs"] if v is not None], dtype=float)
    scored = [i for i, v in enumerate(raw["logprobs"]) if v is not None]
    if logprobs.size == 0:
        return {"tokens": len(raw["logprobs"]), **{s: math.nan for s in SCORES}}
    loss = float(-logprobs.mean())
    expected = np.asarray([raw["expected"][i] for i in scored], dtype=float)
    spread = np.sqrt(np.maximum(np.asarray([raw["variance"][i] for i in scored], dtype=float), 1e-12))
    return {
        "tokens": len(raw["logprobs"]),
        "perplexity": math.exp(loss),
        "zlib_ratio": loss / len(zlib.compress(text.encode("utf-8"))),
        "min_k": lowest_mean(logprobs, k_percent),
        "min_k_pp": lowest_mean((logprobs - expected) / spread, k_percent),
        "ref_ratio": math.nan,
        "log_perplexity": loss,
    }


# ---------------------------------------------------------------------------------------------- running
def _rounded(values: Sequence[float | None]) -> list[float | None]:
    return [None if v is None else round(float(v), 6) for v in values]


def scoring_process(backend: "Backend", texts: dict[int, str]):
    """A job ``Process``: each chunk of passages read in one ``score_texts`` call (batched)."""

    def process(units: Sequence[Unit], state: TaskState) -> Iterable[tuple[Unit, Outcome]]:
        state.check()
        results = backend.score_texts([texts[u.item_id] for u in units])
        for unit, result in zip(units, results):
            if isinstance(result, Failure):
                yield unit, Outcome.failure(result.error, extra={"failure_kind": result.kind})
                continue
            raw = {"logprobs": _rounded(result.logprobs), "expected": _rounded(result.expected),
                   "variance": _rounded(result.variance)}
            yield unit, Outcome(raw=json.dumps(raw), prompt_tokens=len(result.logprobs))

    return process


def run_membership(project: "Project", model: str, source: str = "cloze", *, reference: str | None = None,
                   book_ids: Sequence[int] | None = None, passage_ids: Sequence[int] | None = None,
                   state: TaskState | None = None, retry_failed: bool = False,
                   backend: "Backend | None" = None, chunk_size: int = 64) -> list[JobReport]:
    """Score every passage of ``source`` with ``model`` (and ``reference``, if given): one run each."""
    ids = list(passage_ids) if passage_ids is not None else passage_store.gather(project, source, book_ids=book_ids)
    reports = [_run_one(project, model, ids, state, retry_failed, backend, chunk_size)]
    if reference:
        reports.append(_run_one(project, reference, ids, state, retry_failed, None, chunk_size))
    return reports


def _spec(project: "Project", label: str):
    return open_model(project, label, "membership scoring")


def _run_one(project, model, ids, state, retry_failed, backend, chunk_size) -> JobReport:
    spec = _spec(project, model)
    run_id = find_or_create_run(project, KIND, model_id=spec.id, params={}, config={"passage_ids": ids})
    return _execute(project, run_id, spec, ids, state, retry_failed, backend, chunk_size)


def _execute(project, run_id, spec, ids, state, retry_failed, backend=None, chunk_size=64) -> JobReport:
    return run_on_model(project, run_id, spec, ids, scoring_process, state, retry_failed, backend, chunk_size)


def resume(project: "Project", run_id: int, state: TaskState, retry_failed: bool) -> JobReport:
    from workbench.models.registry import get_model

    run = get_run(project, run_id)
    spec = get_model(project, int(run["model_id"]))
    return _execute(project, run_id, spec, list(run["config"]["passage_ids"]), state, retry_failed)


register_resumer(KIND, resume)


# ---------------------------------------------------------------------------------------------- reading
def scores(project: "Project", model: str, *, reference: str | None = None, k_percent: float = K_PERCENT,
           passage_ids: Sequence[int] | None = None) -> pd.DataFrame:
    """One row per passage the model has read: its scores (``ref_ratio`` where the reference read it too)."""
    spec = _spec(project, model)
    found = responses(project, KIND, model_id=spec.id)
    if passage_ids is not None:
        found = found[found["item_id"].isin(list(passage_ids))]
    if found.empty:
        return pd.DataFrame(columns=PASSAGE_COLUMNS)
    ids = found["item_id"].astype(int).tolist()
    info = passage_store.passages_frame(project, ids).set_index("passage_id")
    reference_loss: dict[int, float] = {}
    if reference:
        ref_spec = _spec(project, reference)
        for item, raw in zip(*_columns(responses(project, KIND, model_id=ref_spec.id))):
            if item in info.index:
                reference_loss[item] = passage_scores(json.loads(raw), info.loc[item, "text"])["log_perplexity"]
    rows = []
    for item, raw in zip(*_columns(found)):
        text = info.loc[item, "text"]
        row = passage_scores(json.loads(raw), text, k_percent=k_percent)
        if item in reference_loss and reference_loss[item] > 0:
            row["ref_ratio"] = row["log_perplexity"] / reference_loss[item]
        row.update(book=info.loc[item, "book"], passage_id=info.loc[item, "source_key"],
                   book_id=info.loc[item, "book_id"], item_id=item, model=spec.label, reference=reference or "")
        rows.append(row)
    frame = pd.DataFrame(rows)[PASSAGE_COLUMNS]
    frame["book_id"] = frame["book_id"].astype("Int64")
    return frame.sort_values(["book", "item_id"], kind="stable").reset_index(drop=True)


def _columns(frame: pd.DataFrame) -> tuple[list[int], list[str]]:
    return frame["item_id"].astype(int).tolist(), frame["raw"].tolist()


def member_labels(project: "Project", tag: str = MEMBER_TAG) -> dict[int, bool]:
    """Books tagged as known members (True) or non-members (False); other values are left out."""
    labels = {}
    for book_id, value in project.db.execute("SELECT book_id, value FROM book_tags WHERE key = ?", [tag]).fetchall():
        value = (value or "").strip().lower()
        if value in YES:
            labels[int(book_id)] = True
        elif value in NO:
            labels[int(book_id)] = False
    return labels


def per_book(frame: pd.DataFrame, labels: dict[int, bool] | None = None) -> pd.DataFrame:
    """Mean of each score per book, the passages behind it, and the book's member tag (if any)."""
    columns = ["book", "book_id", "passages", *SCORES, "member"]
    known = frame.dropna(subset=["book_id"])
    if known.empty:
        return pd.DataFrame(columns=columns)
    grouped = known.groupby(["book_id", "book"], sort=True)
    out = grouped[SCORES].mean().reset_index()
    out["passages"] = grouped.size().to_numpy()
    labels = labels or {}
    out["member"] = [("yes" if labels[b] else "no") if b in labels else "" for b in out["book_id"].astype(int)]
    out["book_id"] = out["book_id"].astype(int)
    return out[columns]


def auc(books: pd.DataFrame, *, seed: int = 0) -> pd.DataFrame:
    """ROC AUC of each score over books tagged member / non-member, oriented towards members."""
    members = books[books["member"] == "yes"]
    others = books[books["member"] == "no"]
    rows = []
    for score in SCORES:
        direction = DIRECTION[score]
        result = roc_auc(direction * members[score].astype(float), direction * others[score].astype(float), seed=seed)
        rows.append({"score": score, "auc": result.auc, "ci_low": result.ci_low, "ci_high": result.ci_high,
                     "members": result.members, "non_members": result.non_members,
                     "member_direction": "higher" if direction > 0 else "lower"})
    return pd.DataFrame(rows)
