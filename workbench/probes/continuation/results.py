"""Reading continuation runs: every passage's scores, and per book the extractable share against the books the
model cannot have seen.

A passage is *extractable* when the model's answer agrees with the book's continuation on at least the first
``m`` tokens (``match_tokens``; by default all N, the whole continuation). Per book: the passages answered, how
many are extractable, the share with its 95% Wilson interval (the passage as the trial), and the *baseline*: the
same share over the passages of the books the model cannot have seen, pooled (books tagged ``member=no``, or
published after the model's training cutoff, from the model's tag ``cutoff=YEAR`` or given). A book is compared
with the baseline by Fisher's exact test, one-sided (is the book's share higher?), the passage as the unit; an
unseen book is compared with the other unseen books only (nothing is judged against data it is part of). The
p-values are adjusted over the books of the table with Holm's method; ``above_baseline`` is that adjusted p
below 0.05.

Runs with the same setting (tokenizer, seed, passages per book, prefix and continuation lengths) are read
together, the newest answer per passage winning; by default the setting of the model's newest run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np
import pandas as pd

from workbench.analysis.intervals import wilson_interval
from workbench.corpus.book_sets import member_labels
from workbench.errors import UserError
from workbench.probes.continuation import score
from workbench.probes.continuation.kinds import CONTINUATION_KIND, ContinuationConfig
from workbench.probes.continuation.passages import Setting, passages_frame
from workbench.runs import Run, responses, runs

if TYPE_CHECKING:
    from workbench.project import Project


PASSAGE_COLUMNS = ["passage_id", "book_id", "position", "start_char", "prefix_end", "end_char", "answer_tokens",
                   "exact_prefix", "longest_common", "common_at_answer", "common_at_truth", "edit_similarity",
                   "extractable"]
TEXT_COLUMNS = ["prefix", "true_continuation", "answer"]
BOOK_COLUMNS = ["book_id", "title", "passages", "extractable", "extractable_share", "ci_low", "ci_high",
                "mean_exact_prefix", "mean_longest_common", "mean_edit_similarity", "failed", "unseen", "unseen_why",
                "baseline_share", "baseline_passages", "p_value", "p_holm", "above_baseline", "match_tokens",
                "prefix_tokens", "continue_tokens", "tokenizer"]


@dataclass(frozen=True)
class Chosen:
    """The runs read together and their setting."""

    runs: list[Run]
    setting: Setting

    @property
    def book_ids(self) -> list[int]:
        return sorted({int(b) for run in self.runs for b in run.config.book_ids})


def chosen_runs(project: "Project", model: str, *, prefix_tokens: int | None = None,
                continue_tokens: int | None = None, per_book: int | None = None, seed: int | None = None) -> Chosen | None:
    """The model's runs with one setting: the one given (fields left None: as the newest matching run has
    them), None where the model has no such run."""
    from workbench.models.catalog import get_model

    spec = get_model(project, model)
    wanted = {k: v for k, v in (("prefix_tokens", prefix_tokens), ("continue_tokens", continue_tokens),
                                ("per_book", per_book), ("seed", seed)) if v is not None}
    found = runs(project, CONTINUATION_KIND, model_id=spec.id, **wanted)
    if not found:
        return None
    newest: ContinuationConfig = found[-1].config
    setting = Setting(newest.tokenizer, newest.seed, newest.per_book, newest.prefix_tokens, newest.continue_tokens)
    same = [r for r in found if (r.config.tokenizer, r.config.seed, r.config.per_book, r.config.prefix_tokens,
                                 r.config.continue_tokens) == (setting.tokenizer, setting.seed, setting.per_book,
                                                               setting.prefix_tokens, setting.continue_tokens)]
    return Chosen(same, setting)


def passage_frame(project: "Project", model: str, *, match_tokens: int | None = None, include_text: bool = False,
                  chosen: Chosen | None = None, **setting) -> pd.DataFrame:
    """One row per answered passage of the model's runs (``PASSAGE_COLUMNS``): offsets of the passage in the
    book, the answer's length and scores, and whether it is extractable (at least ``match_tokens`` leading
    tokens right; default: all of the continuation). ``include_text`` adds the prefix, the true continuation
    and the answer (the book's text: for reading on screen, not for sharing)."""
    chosen = chosen or chosen_runs(project, model, **setting)
    columns = PASSAGE_COLUMNS + (TEXT_COLUMNS if include_text else [])
    if chosen is None:
        return pd.DataFrame(columns=columns)
    m = _match_tokens(match_tokens, chosen.setting)
    passages = passages_frame(project, chosen.setting, chosen.book_ids)
    answers = responses(project, [r.id for r in chosen.runs], columns=["raw", "extra"])
    merged = passages.merge(answers[["item_id", "raw", "extra"]], left_on="passage_id", right_on="item_id")
    rows = [score.passage_scores(json.loads(extra or "{}").get("tokens") or [], truth)
            for extra, truth in zip(merged["extra"], merged["truth"])]
    scored = pd.DataFrame(rows, index=merged.index, columns=["answer_tokens", "exact_prefix", "longest_common",
                                                             "common_at_answer", "common_at_truth", "edit_similarity"])
    out = pd.concat([merged, scored], axis=1)
    out["extractable"] = out["exact_prefix"] >= m
    if include_text:
        out = _with_text(project, out)
    return out[columns].reset_index(drop=True)


def _with_text(project: "Project", frame: pd.DataFrame) -> pd.DataFrame:
    from workbench.corpus.library import book_text

    texts = {int(b): book_text(project, int(b)) for b in frame["book_id"].unique()}
    frame = frame.copy()
    frame["prefix"] = [texts[int(b)][s:p] for b, s, p in zip(frame["book_id"], frame["start_char"], frame["prefix_end"])]
    frame["true_continuation"] = [texts[int(b)][p:e] for b, p, e in
                                  zip(frame["book_id"], frame["prefix_end"], frame["end_char"])]
    frame["answer"] = frame["raw"]
    return frame


def _match_tokens(match_tokens: int | None, setting: Setting) -> int:
    if match_tokens is None:
        return setting.continue_tokens
    if not 1 <= int(match_tokens) <= setting.continue_tokens:
        raise UserError(f"The tokens that must match run from 1 to the continuation's length, "
                        f"{setting.continue_tokens}; {match_tokens} was given.")
    return int(match_tokens)


def model_cutoff(project: "Project", model: str, cutoff_year: int | None = None) -> int | None:
    """The last year of the model's training data: ``cutoff_year`` if given, else its tag ``cutoff=YEAR``."""
    from workbench.models.catalog import training_cutoff

    return training_cutoff(project, model, cutoff_year)[0]


def unseen_books(project: "Project", book_ids: Sequence[int], model: str,
                 cutoff_year: int | None = None) -> dict[int, str]:
    """Book id -> why the model cannot have seen it, for the books of ``book_ids`` it cannot have: tagged
    ``member=no`` (a ``member=yes`` tag wins over the year), or published after the model's cutoff."""
    labels, cutoff = member_labels(project), model_cutoff(project, model, cutoff_year)
    years = dict(project.db.execute("SELECT id, year FROM books WHERE id IN (SELECT value FROM json_each(?))",
                                    [json.dumps([int(b) for b in book_ids])]).fetchall())
    out = {}
    for book_id in book_ids:
        book_id = int(book_id)
        if book_id in labels:
            if not labels[book_id]:
                out[book_id] = "tagged member=no"
        elif cutoff is not None and years.get(book_id) is not None and int(years[book_id]) > cutoff:
            out[book_id] = f"published {int(years[book_id])}, after the cutoff {cutoff}"
    return out


def book_table(project: "Project", model: str, *, match_tokens: int | None = None, cutoff_year: int | None = None,
               chosen: Chosen | None = None, **setting) -> pd.DataFrame:
    """Per book (``BOOK_COLUMNS``), ranked by extractable share: passages answered, extractable ones, the share
    with its Wilson interval, mean scores, whether the book is unseen (and why), the baseline share of the unseen
    books (the others, for an unseen book) and Fisher's one-sided p against it, Holm-adjusted over the books."""
    chosen = chosen or chosen_runs(project, model, **setting)
    if chosen is None:
        return pd.DataFrame(columns=BOOK_COLUMNS)
    passages = passage_frame(project, model, match_tokens=match_tokens, chosen=chosen)
    m = _match_tokens(match_tokens, chosen.setting)
    failed = _failures(project, chosen)
    grouped = passages.groupby("book_id")
    books = pd.DataFrame({
        "passages": grouped.size(),
        "extractable": grouped["extractable"].sum().astype(int),
        "mean_exact_prefix": grouped["exact_prefix"].mean(),
        "mean_longest_common": grouped["longest_common"].mean(),
        "mean_edit_similarity": grouped["edit_similarity"].mean(),
    }).reset_index() if not passages.empty else pd.DataFrame(columns=["book_id", "passages", "extractable"])
    if books.empty:
        return pd.DataFrame(columns=BOOK_COLUMNS)
    books["book_id"] = books["book_id"].astype(int)
    books["failed"] = [failed.get(int(b), 0) for b in books["book_id"]]
    low, high = wilson_interval(books["extractable"].to_numpy(), books["passages"].to_numpy())
    books["extractable_share"] = books["extractable"] / books["passages"]
    books["ci_low"], books["ci_high"] = low, high
    why = unseen_books(project, books["book_id"].tolist(), model, cutoff_year)
    books["unseen"] = [b in why for b in books["book_id"]]
    books["unseen_why"] = [why.get(int(b), "") for b in books["book_id"]]
    base_x = int(books.loc[books["unseen"], "extractable"].sum())
    base_n = int(books.loc[books["unseen"], "passages"].sum())
    own_x = np.where(books["unseen"], books["extractable"], 0)
    own_n = np.where(books["unseen"], books["passages"], 0)
    books["baseline_passages"] = base_n - own_n
    with np.errstate(all="ignore"):
        books["baseline_share"] = np.where(books["baseline_passages"] > 0,
                                           (base_x - own_x) / np.maximum(books["baseline_passages"], 1), np.nan)
    books["p_value"] = [score.above_baseline(int(x), int(n), int(base_x - ox), int(bn))
                        for x, n, ox, bn in zip(books["extractable"], books["passages"], own_x,
                                                books["baseline_passages"])]
    books["p_holm"] = score.holm(books["p_value"].tolist())
    books["above_baseline"] = [bool(p < score.ALPHA) if p == p else False for p in books["p_holm"]]
    titles = dict(project.db.execute("SELECT id, COALESCE(NULLIF(title, ''), external_id, 'Book ' || id) FROM books"
                                     " WHERE id IN (SELECT value FROM json_each(?))",
                                     [json.dumps(books["book_id"].tolist())]).fetchall())
    books["title"] = [titles.get(int(b), "") for b in books["book_id"]]
    books["match_tokens"] = m
    books["prefix_tokens"] = chosen.setting.prefix_tokens
    books["continue_tokens"] = chosen.setting.continue_tokens
    books["tokenizer"] = chosen.setting.tokenizer
    books = books.sort_values(["extractable_share", "mean_exact_prefix", "book_id"], ascending=[False, False, True])
    return books[BOOK_COLUMNS].reset_index(drop=True)


def _failures(project: "Project", chosen: Chosen) -> dict[int, int]:
    """Book id -> passages whose newest answer is a failure (left out of the shares, reported beside them)."""
    answers = responses(project, [r.id for r in chosen.runs], ok_only=False, columns=["status"])
    failed = answers.loc[answers["status"] == "failed", "item_id"].astype(int).tolist()
    if not failed:
        return {}
    rows = project.db.execute("SELECT book_id, COUNT(*) FROM continuation_passages WHERE id IN"
                              " (SELECT value FROM json_each(?)) GROUP BY book_id", [json.dumps(failed)]).fetchall()
    return {int(b): int(n) for b, n in rows}


def baseline(table: pd.DataFrame) -> tuple[float, float, float, int]:
    """The pooled share of the unseen books of ``table`` with its Wilson interval, and its passages (NaN, 0 when
    there are none)."""
    unseen = table[table["unseen"].astype(bool)] if not table.empty else table
    n = int(unseen["passages"].sum()) if not unseen.empty else 0
    if n == 0:
        return float("nan"), float("nan"), float("nan"), 0
    x = int(unseen["extractable"].sum())
    low, high = wilson_interval(x, n)
    return x / n, float(low), float(high), n


def tested_models(project: "Project") -> list[str]:
    """The labels of the models with a continuation run, in the order they were added."""
    from workbench.models.catalog import list_models
    from workbench.runs import models_with_runs

    asked = models_with_runs(project, CONTINUATION_KIND)
    return [m.label for m in list_models(project) if m.id in asked]
