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
  passage (Carlini et al. 2021's comparison with another model; lower: member);
- ``ref_diff`` = log-perplexity of the model - log-perplexity of the reference model (nats per token),
  the reference-based score of mimir (Duan et al. 2024: the target's loss minus the reference's; the
  difference of their mean token log-likelihoods, reference minus target; lower: member).

Where books carry a member tag (``member=yes`` / ``member=no`` by default), ``auc_table`` gives the ROC
AUC of each score, oriented so that 1 means members always score as more member-like, twice: over books
(book means; ``auc``) and over passages (each passage labelled by its book's tag; ``passage_auc``), each
with a bootstrap interval. Passages of one book are not independent, so the passage interval redraws
books, each with all its passages (``statistics.clustered_roc_auc``). ``roc_points`` gives the ROC curves,
``auc_note`` says in words what is missing when there is nothing to compare (no tags, or one class only).
"""

from __future__ import annotations

import json
import math
import zlib
from typing import TYPE_CHECKING, Any, Iterable, Sequence

import numpy as np
import pandas as pd

from workbench.corpus.book_sets import MEMBER_TAG, member_labels  # noqa: F401 (the probe reads them here)
from workbench.jobs import JobReport, Outcome, Unit, find_or_create_run, get_run
from workbench.models.base import Failure
from workbench.probes.leakage import passages as passage_store
from workbench.probes.leakage.kinds import MEMBERSHIP_KIND as KIND
from workbench.probes.leakage.runs import open_model, responses, run_on_model
from workbench.probes.leakage.statistics import clustered_roc_auc, roc_auc
from workbench.progress import TaskState
from workbench.runs import keep_in_extras, parse_json_texts

if TYPE_CHECKING:
    from workbench.models.base import Backend
    from workbench.project import Project

K_PERCENT = 20.0
SCORES = ["perplexity", "zlib_ratio", "min_k", "min_k_pp", "ref_ratio", "ref_diff"]
#: the scores that need a reference model
REFERENCE_SCORES = ("ref_ratio", "ref_diff")
#: +1 where a higher score points to a member, -1 where a lower one does
DIRECTION = {"perplexity": -1, "zlib_ratio": -1, "min_k": 1, "min_k_pp": 1, "ref_ratio": -1, "ref_diff": -1}
UNITS = ("book", "passage")
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
        "ref_diff": math.nan,
        "log_perplexity": loss,
    }


# ---------------------------------------------------------------------------------------------- stored scores
#: the version of how the stored scores are derived from an answer's token values; scores stored by another
#: version (or for another k) are not used: the answer's token values are scored afresh when read
DERIVATION = 1
STORED = "scores"  # the key of the stored scores in an answer's ``extra``
STORED_VALUES = ("tokens", "perplexity", "log_perplexity", "min_k", "min_k_pp")
#: answers parsed and scored together when worked out from their token values (bounds the memory of a read)
CHUNK = 5_000


def stored_scores(raws: Sequence[str], texts: Sequence[str], k_percent: float = K_PERCENT) -> list[dict[str, Any]]:
    """The ``extra`` of each stored answer (``raws``: its JSON as stored; ``texts``: the passages read): its scores,
    worked out by ``_bulk_scores`` from the stored (rounded) token values, so that reading them back gives the very
    numbers scoring the answer afresh gives; with the k they are for, the derivation's version and the
    zlib-compressed size of the passage in bytes (the zlib ratio is the log-perplexity over it)."""
    if not raws:
        return []
    values = _bulk_scores(raws, None, k_percent)
    sizes = [len(zlib.compress(text.encode("utf-8"))) for text in texts]
    return [{STORED: {"derivation": DERIVATION, "k_percent": float(k_percent), "zlib_bytes": size,
                      **{name: values[name][n] for name in STORED_VALUES}}} for n, size in enumerate(sizes)]


def _read_stored(extras: Sequence[str | None], k_percent: float | None
                 ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """The stored scores of answers (``extras``: their ``extra`` JSON) as columns, which answers have them (of
    this derivation, and for ``k_percent`` unless None: a reader of the log-perplexity alone takes any k), and
    which have scores of this derivation for any k. The extras are parsed a chunk at a time, not one each (nor
    all in one call: that froze the window)."""
    parsed = parse_json_texts(extras)
    found = [p.get(STORED) if isinstance(p, dict) else None for p in parsed]
    current = np.fromiter((isinstance(f, dict) and f.get("derivation") == DERIVATION for f in found), bool, len(found))
    ok = current if k_percent is None else current & np.fromiter(
        (isinstance(f, dict) and f.get("k_percent") == float(k_percent) for f in found), bool, len(found))
    columns = {name: np.fromiter((f[name] if good else math.nan for f, good in zip(found, ok)), float, len(found))
               for name in (*STORED_VALUES, "zlib_bytes")}
    return columns, ok, current


def _keep_scores(project: "Project", answers: pd.DataFrame, scored: dict[str, list], texts: Sequence[str],
                 k_percent: float) -> None:
    """The scores worked out for ``answers`` (stored before scores were kept with them, or scored by an older
    derivation) kept with them now, as a run keeps them (``stored_scores``): a project written by an earlier
    release is brought up to date by its first read, and later reads take the scores from there."""
    rows = [(run_id, item_id, sample,
             {"derivation": DERIVATION, "k_percent": float(k_percent), "zlib_bytes": len(zlib.compress(text.encode("utf-8"))),
              **{name: scored[name][n] for name in STORED_VALUES}})
            for n, (run_id, item_id, sample, text) in enumerate(zip(
                answers["run_id"].tolist(), answers["item_id"].tolist(), answers["sample"].tolist(), texts))]
    keep_in_extras(project, STORED, rows)


def _answer_scores(project: "Project", model_id: int, found: pd.DataFrame, texts: Sequence[str] | None,
                   k_percent: float) -> dict[str, np.ndarray]:
    """Tokens, the scores and log_perplexity of the answers ``found`` (``responses`` with ``extra``): their stored
    scores where they have them, else (answers stored before scores were kept with them, or scored for another k)
    worked out from their token values, read for them alone. ``texts``: the passages, for the zlib ratio (None:
    no zlib ratio, and scores of any k will do: the reader wants the log-perplexity only)."""
    values, ok, current = _read_stored(found["extra"].tolist(), k_percent if texts is not None else None)
    with np.errstate(all="ignore"):
        values["zlib_ratio"] = values["log_perplexity"] / values.pop("zlib_bytes")
    if not ok.all():
        items = found["item_id"].astype(int).to_numpy()
        missing = np.flatnonzero(~ok)
        raws = responses(project, KIND, model_id=model_id, item_ids=items[missing].tolist(), columns=("raw",))
        raws = raws.set_index(raws["item_id"].astype(int)).reindex(items[missing])
        fresh = _bulk_scores(raws["raw"].tolist(), None if texts is None else [texts[n] for n in missing], k_percent)
        for name in (*STORED_VALUES, "zlib_ratio"):
            values[name][missing] = fresh[name]
        # kept where the answer has no scores of this derivation at all (those of another k are left as they are)
        keep = np.flatnonzero(~current[missing])
        if len(keep):
            if texts is None:  # a reader of the log-perplexity alone: the passages read for their zlib size
                kept_items = items[missing[keep]].tolist()
                kept_texts = passage_store.passages_frame(project, kept_items).set_index("passage_id")["text"]
                kept_texts = kept_texts.reindex(kept_items).tolist()
            else:
                kept_texts = [texts[missing[j]] for j in keep]
            _keep_scores(project, raws.iloc[keep], {name: [fresh[name][j] for j in keep] for name in STORED_VALUES},
                         kept_texts, k_percent)
    if texts is None:
        values["zlib_ratio"] = np.full(len(ok), math.nan)
    return values


# ---------------------------------------------------------------------------------------------- running
def _rounded(values: Sequence[float | None]) -> list[float | None]:
    """The values to 6 decimals, None (a first token with nothing before it) kept; numpy rounds the
    usual case of one leading None at a time (the same numbers as ``round``, a tenth of the time)."""
    skip = 1 if values and values[0] is None else 0
    rest = values[skip:]
    if None in rest:
        return [None if v is None else round(float(v), 6) for v in values]
    return [None] * skip + np.round(np.asarray(rest, dtype=float), 6).tolist()


def scoring_process(backend: "Backend", texts: dict[int, str]):
    """A job ``Process``: each chunk of passages read in one ``score_texts`` call (batched)."""

    def process(units: Sequence[Unit], state: TaskState) -> Iterable[tuple[Unit, Outcome]]:
        state.check()
        results = backend.score_texts([texts[u.item_id] for u in units])
        answered = {}
        for unit, result in zip(units, results):
            if not isinstance(result, Failure):
                answered[unit] = json.dumps({"logprobs": _rounded(result.logprobs),
                                             "expected": _rounded(result.expected),
                                             "variance": _rounded(result.variance)})
        # each answer's scores worked out once, from the answer as stored, and kept beside it (``extra``)
        extras = dict(zip(answered, stored_scores(list(answered.values()),
                                                  [texts[u.item_id] for u in answered])))
        for unit, result in zip(units, results):
            if isinstance(result, Failure):
                yield unit, Outcome.failure(result.error, extra={"failure_kind": result.kind})
                continue
            yield unit, Outcome(raw=answered[unit], prompt_tokens=len(result.logprobs), extra=extras[unit])

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
    from workbench.models.catalog import get_model

    run = get_run(project, run_id)
    spec = get_model(project, int(run["model_id"]))
    return _execute(project, run_id, spec, list(run["config"]["passage_ids"]), state, retry_failed)


# ---------------------------------------------------------------------------------------------- reading
def scores(project: "Project", model: str, *, reference: str | None = None, k_percent: float = K_PERCENT,
           passage_ids: Sequence[int] | None = None) -> pd.DataFrame:
    """One row per passage the model has read: its scores (``ref_ratio`` where the reference read it too).

    The same numbers as ``passage_scores`` per passage, computed for all passages at once (``_bulk_scores``);
    means are summed in another order than NumPy's ``mean``, which can move the last of their 16 digits."""
    spec = _spec(project, model)
    found = responses(project, KIND, model_id=spec.id, item_ids=passage_ids, columns=("extra",))
    if found.empty:
        return pd.DataFrame(columns=PASSAGE_COLUMNS)
    ids = found["item_id"].astype(int).tolist()
    info = passage_store.passages_frame(project, ids).set_index("passage_id").reindex(ids)
    texts = info["text"].tolist()
    values = _answer_scores(project, spec.id, found, texts, k_percent)
    frame = pd.DataFrame({"book": info["book"].tolist(), "passage_id": info["source_key"].tolist(),
                          "tokens": values["tokens"].astype(np.int64),
                          **{score: values.get(score, math.nan) for score in SCORES},
                          "book_id": info["book_id"].array, "item_id": ids, "model": spec.label,
                          "reference": reference or ""})
    if reference:
        ref_spec = _spec(project, reference)
        theirs = responses(project, KIND, model_id=ref_spec.id, item_ids=ids, columns=("extra",))
        reference_loss = pd.Series(_answer_scores(project, ref_spec.id, theirs, None, k_percent)["log_perplexity"],
                                   index=theirs["item_id"].astype(int).to_numpy())
        loss = np.asarray(values["log_perplexity"])
        other = reference_loss.reindex(ids).to_numpy(float)
        with np.errstate(all="ignore"):
            frame["ref_ratio"] = np.where(other > 0, loss / other, math.nan)
            frame["ref_diff"] = loss - other
    frame = frame[PASSAGE_COLUMNS]
    frame["book_id"] = frame["book_id"].astype("Int64")
    return frame.sort_values(["book", "item_id"], kind="stable").reset_index(drop=True)


def _bulk_scores(raws: Sequence[str], texts: Sequence[str] | None, k_percent: float) -> dict[str, list]:
    """``passage_scores`` of many stored answers as columns (tokens, the scores, log_perplexity; zlib_ratio only
    with ``texts``), computed over all their tokens at once; an answer holding a NaN is scored alone."""
    out: dict[str, list] = {name: [] for name in ("tokens", *SCORES, "log_perplexity")}
    for start in range(0, len(raws), CHUNK):
        chunk = raws[start : start + CHUNK]
        parsed = [json.loads(raw) for raw in chunk]
        lengths = np.fromiter((len(p["logprobs"]) for p in parsed), np.int64, len(parsed))
        flat = {key: np.array([v for p in parsed for v in p[key]], dtype=float)
                for key in ("logprobs", "expected", "variance")}
        if any(flat[key].size != lengths.sum() for key in flat):
            raise ValueError("a stored answer's token values are of different lengths")
        answer = np.repeat(np.arange(len(parsed)), lengths)
        scored = ~np.isnan(flat["logprobs"])
        count = np.bincount(answer[scored], minlength=len(parsed))
        with np.errstate(all="ignore"):
            loss = -np.bincount(answer[scored], weights=flat["logprobs"][scored], minlength=len(parsed)) / count
            standard = (flat["logprobs"] - flat["expected"]) / np.sqrt(np.maximum(flat["variance"], 1e-12))
        min_k = _lowest_means(flat["logprobs"][scored], answer[scored], count, k_percent)
        min_k_pp = _lowest_means(standard[scored], answer[scored], count, k_percent)
        none = count == 0
        columns = {"tokens": lengths.tolist(), "perplexity": np.where(none, math.nan, np.exp(loss)).tolist(),
                   "min_k": np.where(none, math.nan, min_k).tolist(),
                   "min_k_pp": np.where(none, math.nan, min_k_pp).tolist(),
                   "log_perplexity": np.where(none, math.nan, loss).tolist(),
                   "ref_ratio": [math.nan] * len(parsed), "ref_diff": [math.nan] * len(parsed)}
        if texts is not None:
            sizes = [len(zlib.compress(text.encode("utf-8"))) for text in texts[start : start + CHUNK]]
            columns["zlib_ratio"] = np.where(none, math.nan, loss / np.asarray(sizes, float)).tolist()
        else:
            columns["zlib_ratio"] = [math.nan] * len(parsed)
        for n, raw in enumerate(chunk):  # a stored NaN counts as a value (passage_scores), not as no value
            if "NaN" in raw:
                one = passage_scores(parsed[n], texts[start + n] if texts is not None else "", k_percent=k_percent)
                for name in columns:
                    columns[name][n] = one.get(name, math.nan)
        for name, values in out.items():
            values.extend(columns[name])
    return out


def _lowest_means(values: np.ndarray, answer: np.ndarray, count: np.ndarray, k_percent: float) -> np.ndarray:
    """``lowest_mean`` of each answer's ``values`` (``answer``: whose each is; ``count``: how many each has)."""
    order = np.lexsort((values, answer))  # by answer, then value (NaN last, as np.sort)
    first = np.cumsum(count) - count
    rank = np.arange(values.size) - first[answer[order]]
    keep = np.maximum(1, (count * k_percent / 100.0).astype(np.int64))
    low = rank < keep[answer[order]]
    with np.errstate(all="ignore"):
        return np.bincount(answer[order][low], weights=values[order][low], minlength=count.size) / keep


def per_book(frame: pd.DataFrame, labels: dict[int, bool] | None = None) -> pd.DataFrame:
    """Mean of each score per book, the passages behind it, and the book's member tag (if any)."""
    columns = ["book", "book_id", "passages", *SCORES, "member"]
    known = frame.dropna(subset=["book_id"]).reindex(columns=[*frame.columns, *[s for s in SCORES
                                                                              if s not in frame.columns]])
    if known.empty:
        return pd.DataFrame(columns=columns)
    grouped = known.groupby(["book_id", "book"], sort=True)
    out = grouped[SCORES].mean().reset_index()
    out["passages"] = grouped.size().to_numpy()
    out["member"] = _tags(out["book_id"], labels)
    out["book_id"] = out["book_id"].astype(int)
    return out[columns]


def _tags(book_ids: Iterable, labels: dict[int, bool] | None) -> list[str]:
    labels = labels or {}
    return [("yes" if labels[int(b)] else "no") if pd.notna(b) and int(b) in labels else "" for b in book_ids]


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


def labelled_passages(passages: pd.DataFrame, labels: dict[int, bool] | None) -> pd.DataFrame:
    """The passages with their book's member tag ("yes", "no", or "")."""
    out = passages.copy()
    out["member"] = _tags(out["book_id"], labels)
    return out


def passage_auc(passages: pd.DataFrame, labels: dict[int, bool] | None, *, seed: int = 0) -> pd.DataFrame:
    """ROC AUC of each score over passages (each with its book's tag), oriented towards members; the interval
    redraws books (a book's passages together), since passages of one book are not independent."""
    tagged = labelled_passages(passages, labels)
    tagged = tagged[tagged["member"].isin(["yes", "no"])]
    rows = []
    for score in SCORES:
        direction = DIRECTION[score]
        values = direction * pd.to_numeric(tagged[score], errors="coerce") if score in tagged else \
            pd.Series(math.nan, index=tagged.index)
        groups = {}
        for tag in ("yes", "no"):
            part = tagged["member"] == tag
            groups[tag] = [values[part & (tagged["book_id"] == b)].to_numpy(float)
                           for b in sorted(set(tagged.loc[part, "book_id"].astype(int)))]
        result = clustered_roc_auc(groups["yes"], groups["no"], seed=seed)
        rows.append({"score": score, "auc": result.auc, "ci_low": result.ci_low, "ci_high": result.ci_high,
                     "members": result.members, "non_members": result.non_members,
                     "member_books": result.member_groups, "non_member_books": result.non_member_groups,
                     "member_direction": "higher" if direction > 0 else "lower"})
    return pd.DataFrame(rows)


AUC_COLUMNS = ["unit", "score", "auc", "ci_low", "ci_high", "members", "non_members", "member_books",
               "non_member_books", "member_direction"]


def auc_table(passages: pd.DataFrame, labels: dict[int, bool] | None, *, seed: int = 0) -> pd.DataFrame:
    """Each score's ROC AUC over books and over passages (``unit``), with the books behind each."""
    books = per_book(passages, labels)
    by_book = auc(books, seed=seed)
    by_book["member_books"], by_book["non_member_books"] = by_book["members"], by_book["non_members"]
    by_book.insert(0, "unit", "book")
    by_passage = passage_auc(passages, labels, seed=seed)
    by_passage.insert(0, "unit", "passage")
    return pd.concat([by_book, by_passage], ignore_index=True)[AUC_COLUMNS]


def auc_note(passages: pd.DataFrame, labels: dict[int, bool] | None, *, model: str = "the model",
             tag: str = MEMBER_TAG) -> str:
    """What is missing for a ROC AUC, in words ("" when members and non-members both have scored passages)."""
    how = (f"Tag the books whose membership is known {tag}=yes (in the model's training data) or {tag}=no (not in "
           f"it): on the Library page, or with 'palimpsest tag PROJECT BOOK_ID {tag}=yes'.")
    if passages.empty:
        return (f"{model} has read no passages yet: let it read them first (Read the passages, or 'palimpsest "
                "membership run').")
    read = set(passages["book_id"].dropna().astype(int))
    labels = labels or {}
    members = sum(1 for b in read if labels.get(b) is True)
    others = sum(1 for b in read if labels.get(b) is False)
    if members and others:
        return ""
    books = f"{len(read):,} book{'s' if len(read) != 1 else ''}"
    if not members and not others:
        return (f"No ROC AUC: none of the {books} whose passages {model} read is tagged {tag}=yes or {tag}=no, so "
                f"there is nothing to tell apart. {how}")
    kind, need = ("member", f"{tag}=no") if members else ("non-member", f"{tag}=yes")
    count = members or others
    what = (f"the only tagged book {model} read is a {kind}" if count == 1 else
            f"all {count:,} tagged books {model} read are {kind}s")
    return (f"No ROC AUC: {what}; the AUC compares members with non-members, so tag at least one other book it "
            f"read {need}. {how}")


def auc_summary(table: pd.DataFrame, titles: dict[str, str]) -> str:
    """The AUC of each score over books and over passages, in two sentences."""
    sentences = []
    for unit, part in table.groupby("unit", sort=False):
        parts = [f"{titles.get(r.score, r.score)} {r.auc:.2f}" +
                 (f" [{r.ci_low:.2f}, {r.ci_high:.2f}]" if r.ci_low == r.ci_low else "")
                 for r in part.itertuples() if r.auc == r.auc]
        first = part.iloc[0]
        if unit == "book":
            head = f"ROC AUC over {first['members']} member and {first['non_members']} non-member books"
        else:
            head = (f"over their {first['members']} and {first['non_members']} passages (interval: books "
                    "redrawn)")
        sentences.append(f"{head}: " + "; ".join(parts))
    return " — ".join(sentences) + " (95% bootstrap CI)."


def roc_points(passages: pd.DataFrame, labels: dict[int, bool] | None, *, seed: int = 0) -> pd.DataFrame:
    """The ROC curve of each score over books and over passages: false and true positive rates at every
    threshold (members as positives, each score oriented towards members), with the AUC and its interval."""
    from workbench.probes.leakage.statistics import roc_curve

    tagged = labelled_passages(passages, labels)
    books = per_book(passages, labels)
    aucs = auc_table(passages, labels, seed=seed).set_index(["unit", "score"])
    rows = []
    for unit, frame in (("book", books), ("passage", tagged)):
        for score in SCORES:
            if score not in frame:
                continue
            direction = DIRECTION[score]
            values = direction * pd.to_numeric(frame[score], errors="coerce")
            members = values[frame["member"] == "yes"].dropna().to_numpy(float)
            others = values[frame["member"] == "no"].dropna().to_numpy(float)
            if members.size == 0 or others.size == 0:
                continue
            fpr, tpr = roc_curve(members, others)
            found = aucs.loc[(unit, score)]
            for x, y in zip(fpr, tpr):
                rows.append({"unit": unit, "score": score, "fpr": x, "tpr": y, "auc": found["auc"],
                             "auc_low": found["ci_low"], "auc_high": found["ci_high"],
                             "members": int(found["members"]), "non_members": int(found["non_members"])})
    return pd.DataFrame(rows, columns=["unit", "score", "fpr", "tpr", "auc", "auc_low", "auc_high", "members",
                                       "non_members"])
