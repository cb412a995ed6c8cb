"""The "methods" export: what a paper's methods section needs to say about the runs behind its numbers.

``methods_record(project, run_ids=None)`` gathers, for each run (all runs when none are named):

- the probe and the run's status, dates and the Palimpsest version that made it;
- the model: label, backend, reference (hub id, file or API model name), server address, tags such
  as ``decade=1950s`` and the backend settings;
- the generation parameters (temperature, top-p, token limits, stop strings, seed and how samples
  derive theirs, samples per item);
- the prompt: the template's name, version, SHA-256 and full text, or for REP and EEP runs the set's
  version, hash, frame and stems; whether it went as plain text or as chat messages;
- counts: items, samples, requests, answered, failed, not yet asked, model calls, cache hits, tokens;
- for name-cloze runs the passages' books and the extraction settings and candidate counts; for EEP
  runs the entity recogniser; for summary runs the retry rule;

then, for each probe present, a short paragraph describing the procedure and the statistics its
analyses use, by name and implementation. ``methods_text`` writes the same as Markdown, ready to adapt
for a paper; the record is its JSON twin, kept beside it for provenance.

Secrets never appear. The project stores only the name of the variable or keyring entry holding an
API key; this export leaves out even that name. Server addresses lose any user name, password and
query string, and free text taken from the project (run notes, example prompts) goes through
``secrets.redact``.
"""

from __future__ import annotations

import json
import statistics as pystats
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence
from urllib.parse import urlsplit, urlunsplit

from workbench import __version__
from workbench.errors import UserError
from workbench.project import now

if TYPE_CHECKING:
    from workbench.project import Project

FORMAT = "palimpsest-methods/1"
MARKDOWN_SUFFIXES = (".md", ".markdown", ".txt")

# ---------------------------------------------------------------------------------------------- probes
#: run kind -> (probe family, what the run is, what one item is)
KINDS: dict[str, tuple[str, str, str]] = {
    "cloze": ("name-cloze", "name cloze, prompted model", "passage"),
    "cloze-logprob": ("name-cloze", "name cloze, log-probability of the true name", "passage"),
    "cloze-mlm": ("name-cloze", "name cloze, masked-language-model baseline", "passage"),
    "rep": ("rep", "role-specific elicitation prompts (REP)", "stem"),
    "rep-judge": ("rep-judge", "REP judge labelling completions", "completion"),
    "rep-eep": ("rep-eep", "entity eliciting prompts (EEP)", "stem"),
    "summary": ("summaries", "scene summaries", "scene"),
    "summary-distort": ("summaries", "distorted summaries", "summary"),
}
FAMILY_TITLES = {
    "name-cloze": "Name cloze",
    "rep": "Role-specific elicitation prompts (REPs)",
    "rep-judge": "Classifying REP completions with a judge model",
    "rep-eep": "Entity eliciting prompts (EEPs)",
    "summaries": "Summaries for the summary-validity task",
    "other": "Other runs",
}
FAMILY_ORDER = list(FAMILY_TITLES)
ORIGINS = {"shipped": "as shipped with Palimpsest", "user": "written or edited in this project",
           "imported": "imported from a file"}

BACKEND_NAMES = {
    "hf": "Hugging Face transformers",
    "gguf": "llama.cpp (GGUF file)",
    "openai": "OpenAI-compatible API",
    "external": "results imported from elsewhere",
}


def _kind(kind: str) -> tuple[str, str, str]:
    return KINDS.get(kind, ("other", kind, "item"))


def _statistics() -> dict[str, list[dict[str, str]]]:
    """The statistics each probe's analyses use: name, what for (a phrase starting "for"), and the function
    that computes it. Numbers come from the modules that compute them, so this list follows the code."""
    from workbench.annotation import agreement
    from workbench.probes.rep import stats as rep_stats
    from workbench.probes.rep.entities import BOOTSTRAP_RESAMPLES

    level = f"{rep_stats.CONFIDENCE:.0%}"
    wilson = "statsmodels `proportion_confint` (method 'wilson')"
    return {
        "name-cloze": [
            {"name": f"Wilson score interval ({level})",
             "used_for": "for each book's accuracy, the correct answers out of the passages answered",
             "implementation": wilson},
            {"name": f"Percentile bootstrap interval ({level}, 2,000 resamples, fixed seed)",
             "used_for": "for a book's accuracy where it is chosen instead of the Wilson interval",
             "implementation": "scipy `bootstrap` (method 'percentile')"},
            {"name": f"t interval over books ({level}, clipped to 0-1)",
             "used_for": "for the mean per-book accuracy of the books that share a tag value (genre, decade, "
                         "source ...)",
             "implementation": "statsmodels `DescrStatsW.tconfint_mean`"},
            {"name": "Wilcoxon signed-rank test",
             "used_for": "for comparing two models on their per-book accuracies, paired by book",
             "implementation": "scipy `wilcoxon`"},
            {"name": "McNemar's exact test",
             "used_for": "for comparing two models on the passages both of them answered",
             "implementation": "statsmodels `mcnemar(exact=True)`"},
            {"name": "Spearman's rank correlation",
             "used_for": "for per-book accuracy against the year of publication (rho with its p-value)",
             "implementation": "scipy `spearmanr`"},
        ],
        "rep": [
            {"name": f"Wilson score interval ({level})",
             "used_for": "for the share of a model's completions for a role that fall in each category",
             "implementation": wilson},
            {"name": "Chi-square test of independence",
             "used_for": ("for the decade x category table of one role's labelled completions (models of the "
                          f"same decade pooled), flagged when an expected count is below {rep_stats.MIN_EXPECTED:g}"),
             "implementation": "scipy `chi2_contingency`"},
            {"name": "Kruskal-Wallis H test",
             "used_for": "for whether the 0/1 indicator 'falls in this category' differs between decades, for "
                         "each role and category",
             "implementation": "scipy `kruskal`"},
            {"name": "Quadratic trend over decades",
             "used_for": ("for each category's share across decades: by default a binomial GLM with a logit link "
                          "fitted to the counts, or ordinary least squares on the shares, each with a "
                          f"{level} band for the fitted mean (three decades or more)"),
             "implementation": "statsmodels `GLM` (binomial family) and `OLS`"},
            {"name": "Spread",
             "used_for": "for how unevenly a role's completions fall into the categories: the population "
                         "standard deviation of its category shares in percentage points ('unclear/none' left "
                         "out), averaged over the roles of a demographic",
             "implementation": "numpy `std`"},
            {"name": f"Small-sample flag (n < {rep_stats.SMALL_N})",
             "used_for": "for shares and spreads that rest on few completions",
             "implementation": ""},
        ],
        "rep-judge": [
            {"name": f"Accuracy with a Wilson score interval ({level})",
             "used_for": "for how often the judge's label matches the label people gave, where people have "
                         "labelled a blinded random sample of completions",
             "implementation": wilson},
            {"name": "Cohen's kappa",
             "used_for": "for agreement between the judge and the people beyond what chance would give",
             "implementation": "statsmodels `cohens_kappa`"},
        ],
        "rep-eep": [
            {"name": f"Percentile bootstrap interval ({level}, {BOOTSTRAP_RESAMPLES:,} resamples, fixed seed)",
             "used_for": "for the mean entity overlap of each model and prompt",
             "implementation": "scipy `bootstrap` (method 'percentile')"},
            {"name": "Mann-Whitney U test (two-sided)",
             "used_for": "for comparing the overlap of base models' completions with that of fine-tuned models' "
                         "completions",
             "implementation": "scipy `mannwhitneyu`"},
        ],
        "summaries": [
            {"name": f"Accuracy with a Wilson score interval ({level})",
             "used_for": "for how often annotators pick the true summary",
             "implementation": wilson},
            {"name": "Krippendorff's alpha (nominal)",
             "used_for": (f"for agreement among the annotators' choices, with a {level} percentile bootstrap "
                          f"interval over items ({agreement.BOOTSTRAP_DRAWS:,} draws, seeded by the task)"),
             "implementation": "the `krippendorff` package"},
            {"name": "Cohen's kappa (two annotators) or Fleiss' kappa (three or more)",
             "used_for": "for agreement on the items every annotator answered",
             "implementation": "statsmodels `cohens_kappa` and `fleiss_kappa`"},
        ],
    }


# ---------------------------------------------------------------------------------------------- pieces
def safe_url(url: str | None) -> str | None:
    """A server address without user name, password, query or fragment (where keys sometimes hide)."""
    if not url:
        return None
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def _redact(text: str | None) -> str | None:
    from workbench.models.secrets import redact

    return None if text is None else redact(text)


def _model_record(project: "Project", model_id: int | None) -> dict[str, Any] | None:
    from workbench.models.registry import get_model

    if model_id is None:
        return None
    spec = get_model(project, int(model_id))
    return {
        "label": spec.label,
        "backend": spec.backend,
        "backend_name": BACKEND_NAMES.get(spec.backend, spec.backend),
        "reference": spec.ref,
        "server": safe_url(spec.base_url),
        "tags": dict(spec.tags),
        "settings": dict(spec.params),
    }


def _template_record(project: "Project", template_id: int | None) -> dict[str, Any] | None:
    from workbench.probes.templates import template_by_id

    if template_id is None:
        return None
    template = template_by_id(project, int(template_id))
    return {"id": template.id, "name": template.name, "version": template.version, "kind": template.kind,
            "origin": template.origin, "sha256": template.hash, "created_at": template.created_at,
            "text": template.body}


def _set_records(project: "Project", entries: Iterable[dict]) -> list[dict[str, Any]]:
    from workbench.probes.rep.sets import load_set

    records = []
    for entry in entries:
        stored = load_set(project, int(entry["id"]))
        parsed = stored.parsed
        record = {"id": stored.id, "name": stored.name, "kind": stored.kind, "title": parsed.title,
                  "version": stored.version, "sha256": stored.hash, "origin": stored.origin,
                  "created_at": stored.created_at,
                  "frame": {"system": parsed.frame.system, "instruction": parsed.frame.instruction},
                  "prompts": [{"key": p.key, "stem": p.stem} for p in parsed.prompts]}
        if stored.kind == "rep":
            record["categories"] = list(parsed.categories)
            record["labels"] = list(parsed.labels)
            if parsed.lexical is not None:
                record["lexical_window_words"] = parsed.lexical.window_words
        records.append(record)
    return records


def _first_prompt(project: "Project", run_id: int) -> str | None:
    row = project.db.execute("SELECT prompt FROM responses WHERE run_id = ? AND prompt IS NOT NULL"
                             " ORDER BY item_id, sample LIMIT 1", [run_id]).fetchone()
    return row[0] if row else None


def _prompt_form(prompt: str | None) -> str | None:
    """'chat messages' or 'plain text', read from a prompt as stored (chats are stored with role labels)."""
    if prompt is None:
        return None
    return "chat messages" if prompt.startswith(("[system]\n", "[user]\n")) else "plain text"


def _chunks(ids: Sequence[int], size: int = 500) -> Iterable[list[int]]:
    for start in range(0, len(ids), size):
        yield list(ids[start : start + size])


FAST_MODE = "fast mode (blocks read in a seeded order until enough candidates)"
#: extraction settings that describe the procedure (the word lists are given by size and in full in JSON)
EXTRACTION_KEYS = ("spacy_model", "per_book", "seed", "fast", "min_tokens", "target_tokens", "max_tokens",
                   "block_words", "reject_other_proper_nouns")


def _cloze_facts(project: "Project", run: dict) -> dict[str, Any]:
    """The books behind a name-cloze run's passages, how the passages were found, and candidate counts."""
    ids = [int(i) for i in run["config"].get("passage_ids") or []]
    books: dict[int, int] = {}
    imported = 0
    for chunk in _chunks(ids):
        for book_id, origin in project.db.execute(
            f"SELECT book_id, origin FROM cloze_passages WHERE id IN ({','.join('?' * len(chunk))})", chunk
        ).fetchall():
            books[book_id] = books.get(book_id, 0) + 1
            imported += origin == "imported"
    facts: dict[str, Any] = {"passages": len(ids), "books": len(books), "imported_passages": imported}
    if run["config"].get("imported_from"):
        facts["imported_from"] = run["config"]["imported_from"]
    rows = []
    for chunk in _chunks(sorted(books)):
        rows += project.db.execute(
            "SELECT book_id, candidates, sampled, per_book, settings FROM cloze_extractions"
            f" WHERE book_id IN ({','.join('?' * len(chunk))}) ORDER BY book_id", chunk).fetchall()
    if rows:
        groups: dict[str, dict[str, Any]] = {}
        for _book, _candidates, _sampled, _per_book, settings in rows:
            record = json.loads(settings or "{}")
            described = {key: record.get(key) for key in EXTRACTION_KEYS}
            described["excluded_words"] = sorted(record.get("excluded_words") or [])
            described["titles"] = sorted(record.get("titles") or [])
            described["proper_labels"] = sorted(record.get("proper_labels") or [])
            key = json.dumps(described, sort_keys=True)
            groups.setdefault(key, {**described, "books": 0})["books"] += 1
        candidates = [r[1] for r in rows]
        facts["extraction"] = list(groups.values())
        facts["candidates"] = {"total": int(sum(candidates)), "min": int(min(candidates)),
                               "median": float(pystats.median(candidates)), "max": int(max(candidates)),
                               "books": len(rows)}
        facts["flagged_books"] = sum(1 for r in rows if r[2] < r[3])
    return facts


def _eep_facts(project: "Project") -> dict[str, Any]:
    from workbench.probes.rep.entities import NAMED_TYPES

    rows = project.db.execute("SELECT pipeline, COUNT(*) FROM rep_entity_extractions GROUP BY pipeline"
                              " ORDER BY pipeline").fetchall()
    return {"entity_types": list(NAMED_TYPES),
            "pipelines": [{"pipeline": pipeline, "books_read": n} for pipeline, n in rows]}


def _counts(project: "Project", run: dict, item_count: int | None) -> dict[str, Any]:
    from workbench.jobs import run_counts

    counts = run_counts(project, run["id"])
    samples = int(run["config"].get("samples") or 1)
    requests = int(run["total"] or 0)
    if item_count is not None and not requests:
        requests = item_count * samples
    items = item_count if item_count is not None else (requests // samples if samples else requests)
    usage = run["usage"] or {}
    ok, failed = int(counts.get("ok", 0)), int(counts.get("failed", 0))
    return {"items": items, "samples_per_item": samples, "requests": requests, "ok": ok, "failed": failed,
            "not_yet_asked": max(requests - ok - failed, 0),
            "model_calls": int(usage.get("calls", 0)), "from_cache": int(usage.get("cached", 0)),
            "prompt_tokens": int(usage.get("prompt_tokens", 0)),
            "completion_tokens": int(usage.get("completion_tokens", 0))}


def _run_record(project: "Project", run_id: int) -> dict[str, Any]:
    from workbench.jobs import get_run

    run = get_run(project, run_id)
    family, what, item = _kind(run["kind"])
    params = dict(run["params"])
    config = run["config"]
    record: dict[str, Any] = {
        "id": run["id"], "kind": run["kind"], "probe": family, "description": what, "item": item,
        "status": run["status"], "note": _redact(run["note"]) or "",
        "dates": {"created": run["created_at"], "started": run["started_at"], "finished": run["finished_at"]},
        "code_version": run["code_version"],
        "model": _model_record(project, run["model_id"]),
        "generation": params,
        "template": _template_record(project, run["template_id"]),
    }
    prompt = _first_prompt(project, run["id"])
    record["prompt_form"] = ("chat messages" if config.get("chat") else "plain text") if "chat" in config \
        else _prompt_form(prompt)
    record["example_prompt"] = _redact(prompt)
    item_count: int | None = None
    if family == "name-cloze":
        record["cloze"] = _cloze_facts(project, run)
        item_count = record["cloze"]["passages"]
    if config.get("sets"):
        record["sets"] = _set_records(project, config["sets"])
        item_count = sum(len(s["prompts"]) for s in record["sets"])
    elif config.get("set"):
        record["sets"] = _set_records(project, [config["set"]])
    if family == "rep-eep":
        record["entity_recognition"] = _eep_facts(project)
    if family == "summaries":
        from workbench.probes.summaries.runs import RETRY_TEMPERATURE

        record["summaries"] = {"annotation_task": config.get("annotation_task"),
                               "max_attempts": params.get("max_attempts"), "retry_temperature": RETRY_TEMPERATURE}
    record["counts"] = _counts(project, run, item_count)
    record["imported"] = bool(record["model"] and record["model"]["backend"] == "external")
    if record["imported"]:
        record["description"] = f"{what.split(',')[0]}, results imported from elsewhere"
    return record


# ---------------------------------------------------------------------------------------------- procedures
def _same(values: Iterable[Any]) -> Any:
    """The one value all of ``values`` share, else None."""
    distinct = {json.dumps(v, sort_keys=True) for v in values}
    return json.loads(distinct.pop()) if len(distinct) == 1 else None


def _number(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _sampling_phrase(runs: list[dict]) -> str:
    """'20 times at temperature 1 (top-p 1, at most 200 new tokens), the i-th sample drawn with seed 0 + i' when
    the runs agree; a pointer to the runs where they differ."""
    samples = _same(r["counts"]["samples_per_item"] for r in runs)
    temperature = _same(r["generation"].get("temperature") for r in runs)
    top_p = _same(r["generation"].get("top_p") for r in runs)
    tokens = _same(r["generation"].get("max_tokens") for r in runs)
    seed = _same(r["generation"].get("seed") for r in runs)
    if None in (samples, temperature, top_p, tokens, seed):
        return "the number of times, temperature, token limit and seed given with each run below"
    times = {1: "once", 2: "twice"}.get(samples, f"{samples} times")
    return (f"{times} at temperature {_number(temperature)} "
            f"(top-p {_number(top_p)}, at most {tokens} new tokens), the i-th sample drawn with seed {seed} + i")


def _cloze_paragraph(runs: list[dict]) -> str:
    groups = [{k: v for k, v in g.items() if k != "books"}
              for r in runs for g in (r.get("cloze") or {}).get("extraction", [])]
    extraction = _same(groups)
    imported = [r for r in runs if (r.get("cloze") or {}).get("imported_from")]
    prompted = [r for r in runs if r["kind"] == "cloze" and r not in imported]
    parts = []
    if groups:
        if extraction:
            spacy_model = f" ({extraction['spacy_model']})" if extraction.get("spacy_model") else ""
            window = (f"between {extraction['min_tokens']} and {extraction['max_tokens']} tokens long, the one "
                      f"nearest {extraction['target_tokens']} tokens preferred")
            sample = (f"Up to {extraction['per_book']} such passages per book were drawn at random with seed "
                      f"{extraction['seed']}")
        else:
            spacy_model, window = "", "of the length given with each run"
            sample = "A fixed number of such passages per book was drawn at random with a seed (see each run)"
        parts.append(
            f"Passages were taken from the books with spaCy{spacy_model}, which marks sentences and named entities. "
            f"A candidate is a mention of a person by a single-word name, inside a stretch of whole sentences "
            f"{window}, in which no other proper name occurs and the name itself occurs only once; words for "
            "relatives, forms of address and deities never count as names. The name is replaced by [MASK]. "
            f"{sample}; a book with fewer candidates keeps all of them and is flagged.")
    if prompted:
        parts.append("Each model saw every passage once, inside the prompt template quoted with its run, and was "
                     "asked to give the missing name between <name> tags.")
    if imported:
        parts.append("Published passages and answers were imported as they were released (the files are named with "
                     "each run).")
    if prompted or imported:
        parts.append(
            "Scoring removes the <name> tags and the spaces around the answer; the answer is correct when the rest "
            "equals the true name, ignoring case. A book's accuracy is its correct answers divided by the passages "
            "the model answered, with a 95% Wilson interval; calls that failed are reported separately and are "
            "not part of that denominator.")
    kinds = {r["kind"] for r in runs}
    if "cloze-mlm" in kinds:
        parts.append(
            "As a baseline, a masked language model read each passage with no instruction, [MASK] written as its "
            "own mask token; its single most probable filler was scored by the same rule.")
    if "cloze-logprob" in kinds:
        parts.append(
            "For local models, the log-probability of the expected answer (the true name between the tags) right "
            "after the prompt was also computed, as a natural logarithm summed over its tokens.")
    return " ".join(parts)


def _rep_paragraph(runs: list[dict]) -> str:
    sets = {s["name"]: s for r in runs for s in r.get("sets", [])}
    described = "; ".join(f"{name} ({', '.join(s.get('categories', []))})" for name, s in sets.items())
    used = "The set used here is" if len(sets) == 1 else "The sets used here are"
    return (
        "A REP set pairs one demographic and its categories with a list of roles, and each role has an unfinished "
        "sentence (a stem) that stops just before the person in that role would be described. "
        f"{used} {described or 'listed with each run'}. Every stem was put to each model "
        f"{_sampling_phrase(runs)}. Base models continued the bare stem; chat models received it inside the set's "
        "instruction frame, quoted with each run. Completions were stored word for word and classified afterwards, "
        "either with the set's word lists (among the first words of a completion, the listed word that appears "
        "earliest decides the label; with none, the label is 'unclear/none') or by a judge model. For "
        "each model, role and category the share of classified completions in that category is reported with a "
        "95% Wilson interval. "
        "Generations that failed are counted beside the shares and kept out of them; judge answers that name no "
        "single label stay in the denominator as unparsed.")


JUDGE_PARAGRAPH = (
    "A judge model read each completion together with its stem and the set's labels, through the set's "
    "classification template (quoted with each run), greedily (temperature 0) and with a fixed seed, so the same "
    "completion always receives the same verdict. A reply counts only when, ignoring case, spacing and "
    "punctuation, it is exactly one of the labels or one of the synonyms the set lists for it; any other reply is "
    "kept and counted as unparsed, never guessed at.")


def _eep_paragraph(runs: list[dict]) -> str:
    pipelines = _same(p["pipeline"] for r in runs for p in r.get("entity_recognition", {}).get("pipelines", []))
    recogniser = f"spaCy's named-entity recogniser ({pipelines})" if pipelines else "spaCy's named-entity recogniser"
    return (
        "Entity eliciting prompts are open sentence beginnings that invite a model to name people, places and "
        f"organisations. Every stem was put to each model {_sampling_phrase(runs)}. {recogniser} then listed the "
        "distinct named entities in every completion and in the reference books: people, nationalities and groups, "
        "buildings, organisations, places, products, events, works, laws and languages, but no dates or numbers. "
        "Entities are compared in lower case, with single spaces, without a leading 'the' or a final possessive "
        "'s. A completion's overlap is the share of its entities that also occur somewhere in the reference books; "
        "completions that name no entity have no overlap and are counted apart. The reference books (for example "
        "all books tagged with one decade) are chosen when the comparison is made, so the same completions can be "
        "compared with several sets of books.")


def _summaries_paragraph(runs: list[dict]) -> str:
    attempts = _same((r.get("summaries") or {}).get("max_attempts") for r in runs)
    retry = _same((r.get("summaries") or {}).get("retry_temperature") for r in runs)
    limit = f"at most {attempts} attempts in all" if attempts else "a limited number of attempts"
    warmer = f", later attempts at a temperature of at least {_number(retry)} and with another seed" if retry else ""
    return (
        "For the summary-validity task a model first summarized each scene with the summary template, then rewrote "
        "its own summary with the distortion template, keeping the characters and the setting but changing what "
        "happens. An answer is used only when text follows the marker the prompt asks for; otherwise the request "
        f"is repeated ({limit}{warmer}), and a unit that never succeeds is stored as a failure and left out of the "
        "annotation items. Annotators, who do not know which side is which, then pick the summary that is true to "
        "the scene.")


def _procedures(runs: list[dict]) -> dict[str, str]:
    by_family: dict[str, list[dict]] = {}
    for run in runs:
        by_family.setdefault(run["probe"], []).append(run)
    writers = {"name-cloze": _cloze_paragraph, "rep": _rep_paragraph, "rep-judge": lambda _runs: JUDGE_PARAGRAPH,
               "rep-eep": _eep_paragraph, "summaries": _summaries_paragraph}
    return {family: writers[family](by_family[family]) for family in FAMILY_ORDER
            if family in by_family and family in writers}


# ---------------------------------------------------------------------------------------------- the record
def _chosen_runs(project: "Project", run_ids: Sequence[int] | None) -> list[int]:
    known = [r[0] for r in project.db.execute("SELECT id FROM runs ORDER BY id").fetchall()]
    if run_ids is None:
        if not known:
            raise UserError("This project has no runs yet, so there are no methods to describe. Run a probe first.")
        return known
    chosen = list(dict.fromkeys(int(r) for r in run_ids))
    missing = [r for r in chosen if r not in set(known)]
    if missing:
        raise UserError(f"There is no run number {missing[0]} in this project. The Jobs page (or "
                        "'palimpsest runs') lists the runs.")
    if not chosen:
        raise UserError("Choose at least one run to describe.")
    return sorted(chosen)


def methods_record(project: "Project", run_ids: Sequence[int] | None = None) -> dict[str, Any]:
    """Everything the methods text says, as JSON-ready data (for provenance beside the text)."""
    runs = [_run_record(project, run_id) for run_id in _chosen_runs(project, run_ids)]
    families = [f for f in FAMILY_ORDER if any(r["probe"] == f for r in runs)]
    every = _statistics()
    return {
        "format": FORMAT,
        "generated_at": now(),
        "palimpsest_version": __version__,
        "project": Path(project.path).name,
        "runs": runs,
        "procedures": _procedures(runs),
        "statistics": {family: every[family] for family in families if family in every},
    }


def _dumps(record: dict[str, Any]) -> str:
    return json.dumps(record, indent=2, ensure_ascii=False) + "\n"


def methods_json(project: "Project", run_ids: Sequence[int] | None = None) -> str:
    """The methods record as JSON text."""
    return _dumps(methods_record(project, run_ids))


# ---------------------------------------------------------------------------------------------- Markdown
def _when(stamp: str | None) -> str:
    return f"{stamp[:16].replace('T', ' ')} UTC" if stamp else "not yet"


def _dates(dates: dict[str, str | None]) -> str:
    created, started, finished = (_when(dates[k]) if dates[k] else None for k in ("created", "started", "finished"))
    if not started:
        return f"created {created}, not started"
    ran = f"ran {started}" if not finished or finished == started else f"ran {started} to {finished}"
    if not finished:
        ran += " (not finished)"
    return ran if created == started else f"created {created}, {ran}"


def _code(text: str) -> str:
    """``text`` as a fenced block that its own backticks cannot close."""
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}text\n{text.rstrip()}\n{fence}"


def _cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _tags(tags: dict[str, str]) -> str:
    return ", ".join(f"{k}={v}" if v else k for k, v in tags.items())


def _model_line(model: dict | None) -> str:
    if model is None:
        return "none"
    parts = [f"**{model['label']}**, {model['backend_name']}"]
    if model["reference"]:
        parts.append(f"`{model['reference']}`")
    if model["server"]:
        parts.append(f"served at {model['server']}")
    line = ", ".join(parts)
    extras = []
    if model["tags"]:
        extras.append(f"tags {_tags(model['tags'])}")
    if model["settings"]:
        extras.append("settings " + ", ".join(f"{k}={v}" for k, v in sorted(model["settings"].items())))
    return line + (f" ({'; '.join(extras)})" if extras else "")


def _generation_line(run: dict) -> str:
    params = run["generation"]
    if run["kind"] == "cloze-mlm":
        return f"the {params.get('top_k', 5)} most probable fillers kept; the first is the answer"
    if run["kind"] == "cloze-logprob":
        return "no text generated: the expected answer is scored"
    if not params:
        return "not recorded (imported results)" if run["model"] and run["model"]["backend"] == "external" \
            else "none recorded"
    parts = []
    if "temperature" in params:
        parts.append(f"temperature {_number(params['temperature'])}")
    if "top_p" in params:
        parts.append(f"top-p {_number(params['top_p'])}")
    if "max_tokens" in params:
        parts.append(f"at most {params['max_tokens']} new tokens")
    if params.get("min_tokens"):
        parts.append(f"at least {params['min_tokens']} new tokens")
    samples = run["counts"]["samples_per_item"]
    parts.append(f"{samples} sample{'s' if samples != 1 else ''} per {run['item']}")
    if params.get("seed") is not None:
        parts.append(f"seed {params['seed']}" + (" (sample i uses seed + i)" if samples > 1 else ""))
    if params.get("stop"):
        parts.append("stops at " + ", ".join(f"`{s}`" for s in params["stop"]))
    if params.get("logit_bias"):
        parts.append(f"logit bias on {len(params['logit_bias'])} token(s)")
    if params.get("max_attempts"):
        parts.append(f"up to {params['max_attempts']} attempts per {run['item']}")
    return ", ".join(parts)


def _counts_line(run: dict) -> str:
    c = run["counts"]
    item = run["item"]
    plural = "es" if item.endswith("s") else "s"
    if run["imported"]:
        return (f"{c['ok']:,} answer{'s' if c['ok'] != 1 else ''} imported for {c['items']:,} {item}"
                f"{plural if c['items'] != 1 else ''}; {c['failed']:,} failed.")
    line = (f"{c['requests']:,} request{'s' if c['requests'] != 1 else ''} ({c['items']:,} {item}"
            f"{plural if c['items'] != 1 else ''} × {c['samples_per_item']} sample"
            f"{'s' if c['samples_per_item'] != 1 else ''}): {c['ok']:,} answered, {c['failed']:,} failed, "
            f"{c['not_yet_asked']:,} not yet asked")
    if c["model_calls"] or c["from_cache"]:
        line += f"; {c['model_calls']:,} model calls, {c['from_cache']:,} answered from the cache"
    if c["prompt_tokens"] or c["completion_tokens"]:
        line += f"; {c['prompt_tokens']:,} tokens in, {c['completion_tokens']:,} out"
    return line + "."


def _cloze_lines(facts: dict) -> list[str]:
    lines = [f"- **Passages:** {facts['passages']:,} from {facts['books']:,} book{'s' if facts['books'] != 1 else ''}"
             + (f", {facts['imported_passages']:,} of them imported" if facts["imported_passages"] else "")
             + (f" (from {facts['imported_from']})" if facts.get("imported_from") else "") + "."]
    for group in facts.get("extraction", []):
        lines.append(
            f"- **Extraction** ({group['books']} book{'s' if group['books'] != 1 else ''}): spaCy "
            f"`{group['spacy_model']}`; windows of {group['min_tokens']}-{group['max_tokens']} tokens "
            f"({group['target_tokens']} preferred) within blocks of at least {group['block_words']} words; "
            f"other proper nouns {'rejected' if group['reject_other_proper_nouns'] else 'allowed'}; "
            f"{FAST_MODE if group['fast'] else 'whole books read'}; "
            f"up to {group['per_book']} passages per book, seed {group['seed']}; "
            f"{len(group['excluded_words'])} excluded words, {len(group['titles'])} titles allowed before a name "
            "(both lists in the JSON record).")
    if "candidates" in facts:
        c = facts["candidates"]
        flagged = facts["flagged_books"]
        short = ("no book had fewer than the passages asked for" if not flagged else
                 f"{flagged} book{'s' if flagged != 1 else ''} had fewer than the passages asked for (flagged)")
        lines.append(
            f"- **Candidates:** {c['total']:,} in all; per book median {_number(c['median'])} (range {c['min']:,}-"
            f"{c['max']:,}); {short}.")
    return lines


def _set_lines(sets: list[dict], seen: dict[str, int], run_id: int) -> list[str]:
    lines = []
    for s in sets:
        key = f"{s['name']}:{s['sha256']}"
        head = (f"- **{'REP' if s['kind'] == 'rep' else 'EEP'} set:** {s['title']} (`{s['name']}`), version "
                f"{s['version']}, SHA-256 `{s['sha256'][:16]}…`")
        if key in seen:
            lines.append(f"{head}: the same text as in run {seen[key]}.")
            continue
        seen[key] = run_id
        if s.get("categories"):
            head += f"; categories: {', '.join(s['categories'])}"
        lines.append(head + ".")
        lines.append("")
        lines.append("  | key | stem |")
        lines.append("  |---|---|")
        lines += [f"  | {_cell(p['key'])} | {_cell(p['stem'])} |" for p in s["prompts"]]
        lines.append("")
        frame = s["frame"]
        text = (f"[system]\n{frame['system']}\n\n[user]\n" if frame["system"].strip() else "") + frame["instruction"]
        lines.append("  Frame for chat models ({stem} is where the stem goes):")
        lines.append("")
        lines += ["  " + line if line else "" for line in _code(text).splitlines()]
        lines.append("")
    return lines


def _template_lines(template: dict | None, seen: dict[str, int], run_id: int, form: str | None) -> list[str]:
    if template is None:
        return []
    sent = f", sent as {form}" if form else ""
    origin = ORIGINS.get(template["origin"], template["origin"])
    head = (f"- **Prompt template:** *{template['name']}*, version {template['version']} ({origin}), "
            f"SHA-256 `{template['sha256'][:16]}…`{sent}")
    if template["sha256"] in seen:
        return [f"{head}: the same text as in run {seen[template['sha256']]}."]
    seen[template["sha256"]] = run_id
    return [head + ". Full text:", "", *["  " + line if line else "" for line in _code(template["text"]).splitlines()],
            ""]


def _run_lines(run: dict, seen: dict[str, int]) -> list[str]:
    model = run["model"]
    title = f"### Run {run['id']}: " + (f"{model['label']}, " if model else "") + run["description"]
    lines = [title, "", f"- **Model:** {_model_line(model)}.", f"- **Generation:** {_generation_line(run)}."]
    lines += _template_lines(run["template"], seen, run["id"], run["prompt_form"])
    if run.get("sets"):
        if run["kind"] in ("rep", "rep-eep") and run["prompt_form"]:
            lines.append(f"- **Prompts** went to the model as {run['prompt_form']}.")
        lines += _set_lines(run["sets"], seen, run["id"])
    if run.get("cloze"):
        lines += _cloze_lines(run["cloze"])
    if run.get("entity_recognition"):
        pipelines = ", ".join(f"`{p['pipeline']}` ({p['books_read']} books read)"
                              for p in run["entity_recognition"]["pipelines"]) or "not run yet"
        lines.append(f"- **Entity recognition:** spaCy {pipelines}; entity types "
                     f"{', '.join(run['entity_recognition']['entity_types'])}.")
    lines.append(f"- **Counts:** {_counts_line(run)}")
    dates = run["dates"]
    lines.append(f"- **Dates:** {_dates(dates)}; status {run['status']}; made with Palimpsest {run['code_version']}.")
    if run["note"]:
        lines.append(f"- **Note:** {run['note']}")
    if run["example_prompt"]:
        lines += ["- **First prompt as sent:**", "",
                  *["  " + line if line else "" for line in _code(run["example_prompt"]).splitlines()], ""]
    return lines + [""]


def render_markdown(record: dict[str, Any]) -> str:
    """The methods record as Markdown: procedure paragraphs, one section per run, the statistics."""
    runs = record["runs"]
    lines = [
        "# Methods",
        "",
        f"Project *{record['project']}*: {len(runs)} run{'s' if len(runs) != 1 else ''}. Written by Palimpsest "
        f"{record['palimpsest_version']} on {_when(record['generated_at'])}; the JSON record beside this file "
        "holds the same facts for provenance. API keys are never part of a project, and neither they nor the "
        "names of the variables holding them appear here.",
        "",
        "## Procedure",
        "",
    ]
    for family, paragraph in record["procedures"].items():
        lines += [f"### {FAMILY_TITLES[family]}", "", paragraph, ""]
    lines += ["## Models", "", "| model | backend | reference | tags |", "|---|---|---|---|"]
    models = {r["model"]["label"]: r["model"] for r in runs if r["model"]}
    lines += [f"| {_cell(m['label'])} | {_cell(m['backend_name'])} | {_cell(m['reference'] or '')} | "
              f"{_cell(_tags(m['tags']))} |" for m in models.values()]
    lines += ["", "## Runs", ""]
    seen: dict[str, int] = {}
    for run in runs:
        lines += _run_lines(run, seen)
    lines += ["## Statistics", ""]
    for family, entries in record["statistics"].items():
        lines += [f"### {FAMILY_TITLES[family]}", ""]
        for e in entries:
            how = f"; computed with {e['implementation']}." if e["implementation"] else "."
            lines.append(f"- **{e['name']}** {e['used_for']}{how}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def methods_text(project: "Project", run_ids: Sequence[int] | None = None) -> str:
    """The methods of ``run_ids`` (default: every run) as Markdown."""
    return render_markdown(methods_record(project, run_ids))


def write_methods(project: "Project", out: str | Path, run_ids: Sequence[int] | None = None) -> list[Path]:
    """Write the Markdown to ``out`` (.md) and its JSON twin beside it; returns both paths."""
    out = Path(out)
    if not out.suffix:
        out = out.with_name(out.name + ".md")
    if out.suffix.lower() not in MARKDOWN_SUFFIXES:
        raise UserError(f"The methods text is Markdown: give the file an .md ending, not '{out.name}'.")
    record = methods_record(project, run_ids)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_markdown(record), encoding="utf-8")
    twin = out.with_suffix(".json")
    twin.write_text(_dumps(record), encoding="utf-8")
    return [out, twin]
