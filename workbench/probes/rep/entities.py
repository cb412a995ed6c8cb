"""Entity eliciting prompts (EEPs): how many of a model's named entities come from a set of books.

A model continues the open stems of an EEP set N times (a run of ``kind='rep-eep'``, sampled like
a REP run). spaCy's named-entity recogniser reads the completions and the chosen books (e.g. the
books tagged ``decade=1950s``); a completion's *overlap* is the share of its distinct entities that
also occur in those books. Completions without any entity have no overlap (they are counted
apart). The averages per model compare a base model with its decade fine-tuned version: if
fine-tuning took in the books, the tuned model's completions should name more of their people,
places and organisations.

Entities are compared after normalising: lower case, single spaces, without a leading "the" or a
trailing possessive "'s". Only named types count (people, places, organisations, works, events,
groups ...), not dates or numbers, which any text shares. The books' entities are computed once
per book and pipeline and kept in the project.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Iterable, Sequence

import numpy as np
import pandas as pd

from workbench.analysis.intervals import BOOTSTRAP_RESAMPLES, bootstrap_interval
from workbench.errors import UserError
from workbench.jobs import JobReport
from workbench.nlp import pipeline_id
from workbench.probes.rep.books import select_books
from workbench.probes.rep.decades import model_facts
from workbench.probes.rep.kinds import EEP_KIND
from workbench.probes.rep.run import SamplingSettings, choose_sets, continue_run, sampling_run
from workbench.progress import TaskState
from workbench.project import now
from workbench.runs import runs

if TYPE_CHECKING:
    from spacy.language import Language

    from workbench.models.spec import ModelSpec
    from workbench.project import Project

NAMED_TYPES = ("PERSON", "NORP", "FAC", "ORG", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW", "LANGUAGE")
NER_COMPONENTS = ("tok2vec", "ner")
EEP_DEFAULTS = SamplingSettings(samples=20, temperature=1.0, max_tokens=200)


def normalise_entity(text: str) -> str:
    text = " ".join(text.split()).lower()
    text = re.sub(r"^the\s+", "", text)
    return re.sub(r"['’]s$", "", text).strip()


def load_ner(project: "Project | None" = None) -> "Language":
    from workbench.nlp import load_english

    return load_english(components=NER_COMPONENTS, project=project)


def entity_sets(texts: Iterable[str], nlp: "Language", types: Sequence[str] = NAMED_TYPES) -> list[set[str]]:
    """For each text, its distinct normalised named entities of ``types``."""
    wanted = set(types)
    found = []
    for doc in nlp.pipe((t or "" for t in texts), batch_size=32):
        found.append({e for e in (normalise_entity(ent.text) for ent in doc.ents if ent.label_ in wanted) if e})
    return found


# ---------------------------------------------------------------------------------------------- books
def _book_paragraphs(text: str, max_chars: int = 20_000) -> list[str]:
    """Paragraphs, long ones cut, so spaCy never holds a whole novel at once."""
    pieces = []
    for paragraph in re.split(r"\n\s*\n", text):
        paragraph = paragraph.strip()
        while len(paragraph) > max_chars:
            cut = paragraph.rfind(" ", 0, max_chars)
            cut = cut if cut > 0 else max_chars
            pieces.append(paragraph[:cut])
            paragraph = paragraph[cut:].strip()
        if paragraph:
            pieces.append(paragraph)
    return pieces


def extract_book_entities(project: "Project", book_ids: Sequence[int], nlp: "Language",
                          state: TaskState | None = None) -> None:
    """Find and store the entities of every book not yet read with this pipeline (or changed since)."""
    state = state or TaskState()
    pipeline = pipeline_id(nlp)
    db = project.db
    for done, book_id in enumerate(book_ids):
        state.check()
        content_hash, text = db.execute(
            "SELECT b.content_hash, t.text FROM books b JOIN book_texts t ON t.book_id = b.id WHERE b.id = ?", [book_id]
        ).fetchone()
        known = db.execute("SELECT content_hash FROM rep_entity_extractions WHERE book_id = ? AND pipeline = ?",
                           [book_id, pipeline]).fetchone()
        if known is not None and known[0] == content_hash:
            continue
        state.progress(done, len(book_ids), f"Finding the named entities of book {done + 1} of {len(book_ids)}", force=True)
        counts: dict[tuple[str, str], int] = {}
        for doc in nlp.pipe(_book_paragraphs(text), batch_size=16):
            state.check()
            for ent in doc.ents:
                key = (normalise_entity(ent.text), ent.label_)
                if key[0]:
                    counts[key] = counts.get(key, 0) + 1
        with db.transaction():
            db.execute("DELETE FROM rep_book_entities WHERE book_id = ? AND pipeline = ?", [book_id, pipeline])
            db.conn.executemany(
                "INSERT INTO rep_book_entities (book_id, pipeline, entity, label, count) VALUES (?, ?, ?, ?, ?)",
                [(book_id, pipeline, entity, label, n) for (entity, label), n in counts.items()])
            db.execute("INSERT OR REPLACE INTO rep_entity_extractions (book_id, pipeline, content_hash, created_at)"
                       " VALUES (?, ?, ?, ?)", [book_id, pipeline, content_hash, now()])
    state.progress(len(book_ids), len(book_ids), "Book entities ready", force=True)


def book_entities(project: "Project", book_ids: Sequence[int], nlp: "Language", *,
                  types: Sequence[str] = NAMED_TYPES, state: TaskState | None = None) -> set[str]:
    extract_book_entities(project, book_ids, nlp, state)
    rows = project.db.execute(
        f"SELECT DISTINCT entity FROM rep_book_entities WHERE pipeline = ? AND book_id IN ({','.join('?' * len(book_ids))})"
        f" AND label IN ({','.join('?' * len(types))})",
        [pipeline_id(nlp), *book_ids, *types],
    ).fetchall()
    return {r[0] for r in rows}


# ---------------------------------------------------------------------------------------------- runs
def run_eep(project: "Project", model: "str | ModelSpec", settings: SamplingSettings = EEP_DEFAULTS, *, set_name: str = "eep",
            state: TaskState | None = None, retry_failed: bool = False) -> JobReport:
    """Sample every stem of the EEP set ``settings.samples`` times from ``model``; resumable."""
    from workbench.models.catalog import runnable_model

    settings.check()
    spec = runnable_model(project, model)
    sets = choose_sets(project, [set_name], kind="eep")
    run_id = sampling_run(project, EEP_KIND, spec.id, sets, settings)
    return continue_run(project, run_id, state, retry_failed=retry_failed)


def eep_responses(project: "Project", models: Sequence[str] | None = None) -> pd.DataFrame:
    """Successful EEP completions: model, its decade and stage, prompt key, sample, raw text."""
    from workbench.probes.rep.sets import load_set

    found = {run.id: run for run in runs(project, EEP_KIND) if run.model is not None}
    frame = pd.read_sql_query(
        "SELECT id AS response_id, run_id, item_id, sample, raw FROM responses"
        " WHERE run_id IN (SELECT value FROM json_each(?)) AND status = 'ok' ORDER BY run_id, item_id, sample",
        project.db.conn, params=[json.dumps(list(found))],
    )
    frame.insert(2, "model_id", frame["run_id"].map({i: run.model_id for i, run in found.items()}))
    frame.insert(3, "model", frame["run_id"].map({i: run.model for i, run in found.items()}))
    if models:
        frame = frame[frame["model"].isin(models)]
    tags: dict[int, dict[str, str]] = {}
    for model_id, key, value in project.db.execute("SELECT model_id, key, value FROM model_tags"):
        tags.setdefault(model_id, {})[key] = value
    keys: dict[int, str] = {}
    # each run's config once, never once per completion
    for set_id in {entry["id"] for run_id in sorted({int(r) for r in frame["run_id"]})
                   for entry in found[run_id].config.sets}:
        keys.update({pid: key for key, pid in load_set(project, set_id).prompt_ids.items()})
    facts = [model_facts(label, tags.get(mid, {})) for label, mid in zip(frame["model"], frame["model_id"])]
    frame["decade"] = [f.decade for f in facts]
    frame["stage"] = [f.stage for f in facts]
    frame["prompt"] = frame["item_id"].map(keys)
    return frame.drop(columns=["model_id"])


def overlap_share(found: set[str], reference: set[str]) -> float:
    """Share of ``found`` that is also in ``reference`` (NaN when nothing was found)."""
    return len(found & reference) / len(found) if found else float("nan")


PER_RESPONSE_COLUMNS = ["model", "decade", "stage", "prompt", "sample", "response_id", "entities", "common",
                        "overlap", "common_entities", "raw"]


def overlap_per_response(project: "Project", *, tag: str | None = None, book_set: str | None = None,
                         models: Sequence[str] | None = None, state: TaskState | None = None) -> pd.DataFrame:
    """One row per EEP completion: its entities, those also in the chosen books, and the overlap share."""
    responses = eep_responses(project, models)
    if responses.empty:
        raise UserError("There are no EEP completions yet. Run the entity eliciting prompts on a model first.")
    nlp = load_ner(project)
    reference = book_entities(project, select_books(project, tag=tag, book_set=book_set), nlp, state=state)
    found = entity_sets(responses["raw"], nlp)
    frame = responses.assign(
        entities=[len(f) for f in found],
        common=[len(f & reference) for f in found],
        overlap=[overlap_share(f, reference) for f in found],
        common_entities=["; ".join(sorted(f & reference)) for f in found],
    )
    return frame[PER_RESPONSE_COLUMNS]


def _mean_with_ci(values: pd.Series) -> tuple[float, float, float]:
    """Mean with a 95% percentile bootstrap interval (``BOOTSTRAP_RESAMPLES`` draws, seed 0, so the same
    data give the same interval); unlike a t interval it stays within 0-100 %. No interval for fewer than
    two values or values all alike."""
    values = values.dropna().to_numpy(dtype=float)
    if len(values) == 0:
        return np.nan, np.nan, np.nan
    if len(values) < 2 or np.all(values == values[0]):
        return float(values.mean()), np.nan, np.nan
    low, high = bootstrap_interval(values, np.mean, resamples=BOOTSTRAP_RESAMPLES, seed=0)
    return float(values.mean()), low, high


SUMMARY_COLUMNS = ["model", "decade", "stage", "prompt", "responses", "with_entities", "overlap_pct", "ci_low_pct",
                   "ci_high_pct"]


def overlap_summary(per_response: pd.DataFrame) -> pd.DataFrame:
    """Mean overlap (in %) with a 95% bootstrap interval per model and prompt, and over all prompts ("all").

    The mean is over completions that name at least one entity; ``responses`` counts them all.
    """
    rows = []
    for (model, decade, stage), group in per_response.groupby(["model", "decade", "stage"], dropna=False, sort=False):
        parts = [(prompt, part) for prompt, part in group.groupby("prompt", sort=False)] + [("all", group)]
        for prompt, part in parts:
            mean, low, high = _mean_with_ci(part["overlap"])
            rows.append({"model": model, "decade": decade, "stage": stage, "prompt": prompt, "responses": len(part),
                         "with_entities": int(part["overlap"].notna().sum()), "overlap_pct": mean * 100,
                         "ci_low_pct": low * 100, "ci_high_pct": high * 100})
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def compare_stages(per_response: pd.DataFrame) -> pd.DataFrame:
    """Base against fine-tuned models: mean overlap of each and a two-sided Mann-Whitney U test."""
    from scipy.stats import mannwhitneyu

    base = per_response.loc[per_response["stage"] == "base", "overlap"].dropna()
    tuned = per_response.loc[per_response["stage"] == "fine-tuned", "overlap"].dropna()
    row = {"base_pct": base.mean() * 100 if len(base) else np.nan,
           "fine_tuned_pct": tuned.mean() * 100 if len(tuned) else np.nan,
           "base_n": len(base), "fine_tuned_n": len(tuned), "test": "Mann-Whitney U", "statistic": np.nan,
           "p_value": np.nan, "note": ""}
    if len(base) and len(tuned):
        result = mannwhitneyu(tuned, base, alternative="two-sided")
        row.update(statistic=float(result.statistic), p_value=float(result.pvalue))
    else:
        row["note"] = "needs completions with entities from both a base and a fine-tuned model"
    return pd.DataFrame([row])
