"""REP, its judge and EEP in the methods text: their sets, entity recogniser, paragraphs and statistics."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

from workbench.export.methods import (
    MethodsSection,
    RunFacts,
    Statistic,
    cell,
    indented_code,
    number,
    register_methods,
    same,
)
from workbench.probes.rep.kinds import EEP_KIND, JUDGE_KIND, REP_KIND

if TYPE_CHECKING:
    from workbench.project import Project

WILSON = "statsmodels `proportion_confint` (method 'wilson')"


# ---------------------------------------------------------------------------------------------- facts
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


def set_facts(project: "Project", run: dict) -> RunFacts:
    """The sets a run put to the model (``sets``; its items are their stems) or labelled (a judge's ``set``)."""
    config = run["config"]
    if config.get("sets"):
        sets = _set_records(project, config["sets"])
        return RunFacts({"sets": sets}, items=sum(len(s["prompts"]) for s in sets))
    if config.get("set"):
        return RunFacts({"sets": _set_records(project, [config["set"]])})
    return RunFacts({})


def eep_facts(project: "Project", run: dict) -> RunFacts:
    """The EEP set, and the entity recogniser with the books it has read so far."""
    from workbench.probes.rep.entities import NAMED_TYPES

    facts = set_facts(project, run)
    rows = project.db.execute("SELECT pipeline, COUNT(*) FROM rep_entity_extractions GROUP BY pipeline"
                              " ORDER BY pipeline").fetchall()
    recogniser = {"entity_types": list(NAMED_TYPES),
                  "pipelines": [{"pipeline": pipeline, "books_read": n} for pipeline, n in rows]}
    return RunFacts({**facts.values, "entity_recognition": recogniser}, items=facts.items)


# ---------------------------------------------------------------------------------------------- Markdown lines
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
        lines += [f"  | {cell(p['key'])} | {cell(p['stem'])} |" for p in s["prompts"]]
        lines.append("")
        frame = s["frame"]
        text = (f"[system]\n{frame['system']}\n\n[user]\n" if frame["system"].strip() else "") + frame["instruction"]
        lines.append("  Frame for chat models ({stem} is where the stem goes):")
        lines.append("")
        lines += indented_code(text)
        lines.append("")
    return lines


def set_lines(run: dict, seen: dict[str, int]) -> list[str]:
    if not run.get("sets"):
        return []
    lines = []
    if run["kind"] in (REP_KIND, EEP_KIND) and run["prompt_form"]:
        lines.append(f"- **Prompts** went to the model as {run['prompt_form']}.")
    return lines + _set_lines(run["sets"], seen, run["id"])


def eep_lines(run: dict, seen: dict[str, int]) -> list[str]:
    recogniser = run["entity_recognition"]
    pipelines = ", ".join(f"`{p['pipeline']}` ({p['books_read']} books read)"
                          for p in recogniser["pipelines"]) or "not run yet"
    return set_lines(run, seen) + [
        f"- **Entity recognition:** spaCy {pipelines}; entity types {', '.join(recogniser['entity_types'])}."]


# ---------------------------------------------------------------------------------------------- paragraphs
def sampling_phrase(runs: list[dict]) -> str:
    """'20 times at temperature 1 (top-p 1, at most 200 new tokens), the i-th sample drawn with seed 0 + i' when
    the runs agree; a pointer to the runs where they differ."""
    samples = same(r["counts"]["samples_per_item"] for r in runs)
    temperature = same(r["generation"].get("temperature") for r in runs)
    top_p = same(r["generation"].get("top_p") for r in runs)
    tokens = same(r["generation"].get("max_tokens") for r in runs)
    seed = same(r["generation"].get("seed") for r in runs)
    if None in (samples, temperature, top_p, tokens, seed):
        return "the number of times, temperature, token limit and seed given with each run below"
    times = {1: "once", 2: "twice"}.get(samples, f"{samples} times")
    return (f"{times} at temperature {number(temperature)} "
            f"(top-p {number(top_p)}, at most {tokens} new tokens), the i-th sample drawn with seed {seed} + i")


def rep_paragraph(runs: list[dict]) -> str:
    sets = {s["name"]: s for r in runs for s in r.get("sets", [])}
    described = "; ".join(f"{name} ({', '.join(s.get('categories', []))})" for name, s in sets.items())
    used = "The set used here is" if len(sets) == 1 else "The sets used here are"
    return (
        "A REP set pairs one demographic and its categories with a list of roles, and each role has an unfinished "
        "sentence (a stem) that stops just before the person in that role would be described. "
        f"{used} {described or 'listed with each run'}. Every stem was put to each model "
        f"{sampling_phrase(runs)}. Base models continued the bare stem; chat models received it inside the set's "
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


def eep_paragraph(runs: list[dict]) -> str:
    pipelines = same(p["pipeline"] for r in runs for p in r.get("entity_recognition", {}).get("pipelines", []))
    recogniser = f"spaCy's named-entity recogniser ({pipelines})" if pipelines else "spaCy's named-entity recogniser"
    return (
        "Entity eliciting prompts are open sentence beginnings that invite a model to name people, places and "
        f"organisations. Every stem was put to each model {sampling_phrase(runs)}. {recogniser} then listed the "
        "distinct named entities in every completion and in the reference books: people, nationalities and groups, "
        "buildings, organisations, places, products, events, works, laws and languages, but no dates or numbers. "
        "Entities are compared in lower case, with single spaces, without a leading 'the' or a final possessive "
        "'s. A completion's overlap is the share of its entities that also occur somewhere in the reference books; "
        "completions that name no entity have no overlap and are counted apart. The reference books (for example "
        "all books tagged with one decade) are chosen when the comparison is made, so the same completions can be "
        "compared with several sets of books.")


# ---------------------------------------------------------------------------------------------- statistics
def _level() -> str:
    from workbench.probes.rep import stats

    return f"{stats.CONFIDENCE:.0%}"


def rep_statistics() -> list[Statistic]:
    from workbench.probes.rep import stats

    level = _level()
    return [
        Statistic(f"Wilson score interval ({level})",
                  "for the share of a model's completions for a role that fall in each category", WILSON),
        Statistic("Chi-square test of independence",
                  "for the decade x category table of one role's labelled completions (models of the same decade "
                  f"pooled), flagged when an expected count is below {stats.MIN_EXPECTED:g}",
                  "scipy `chi2_contingency`"),
        Statistic("Kruskal-Wallis H test",
                  "for whether the 0/1 indicator 'falls in this category' differs between decades, for each role "
                  "and category",
                  "scipy `kruskal`"),
        Statistic("Quadratic trend over decades",
                  "for each category's share across decades: by default a binomial GLM with a logit link fitted to "
                  "the counts, or ordinary least squares on the shares, each with a "
                  f"{level} band for the fitted mean (three decades or more)",
                  "statsmodels `GLM` (binomial family) and `OLS`"),
        Statistic("Spread",
                  "for how unevenly a role's completions fall into the categories: the population standard "
                  "deviation of its category shares in percentage points ('unclear/none' left out), averaged over "
                  "the roles of a demographic",
                  "numpy `std`"),
        Statistic(f"Small-sample flag (n < {stats.SMALL_N})", "for shares and spreads that rest on few completions"),
    ]


def judge_statistics() -> list[Statistic]:
    return [
        Statistic(f"Accuracy with a Wilson score interval ({_level()})",
                  "for how often the judge's label matches the label people gave, where people have labelled a "
                  "blinded random sample of completions", WILSON),
        Statistic("Cohen's kappa", "for agreement between the judge and the people beyond what chance would give",
                  "statsmodels `cohens_kappa`"),
    ]


def eep_statistics() -> list[Statistic]:
    from workbench.probes.rep.entities import BOOTSTRAP_RESAMPLES

    return [
        Statistic(f"Percentile bootstrap interval ({_level()}, {BOOTSTRAP_RESAMPLES:,} resamples, fixed seed)",
                  "for the mean entity overlap of each model and prompt", "scipy `bootstrap` (method 'percentile')"),
        Statistic("Mann-Whitney U test (two-sided)",
                  "for comparing the overlap of base models' completions with that of fine-tuned models' completions",
                  "scipy `mannwhitneyu`"),
    ]


register_methods(MethodsSection(
    key="rep",
    title="Role-specific elicitation prompts (REPs)",
    kinds=(REP_KIND,),
    facts=set_facts, lines=set_lines, procedure=rep_paragraph, statistics=rep_statistics, order=20,
))
register_methods(MethodsSection(
    key="rep-judge",
    title="Classifying REP completions with a judge model",
    kinds=(JUDGE_KIND,),
    facts=set_facts, lines=set_lines, procedure=lambda _runs: JUDGE_PARAGRAPH, statistics=judge_statistics,
    order=30,
))
register_methods(MethodsSection(
    key="rep-eep",
    title="Entity eliciting prompts (EEPs)",
    kinds=(EEP_KIND,),
    facts=eep_facts, lines=eep_lines, procedure=eep_paragraph, statistics=eep_statistics, order=40,
))
