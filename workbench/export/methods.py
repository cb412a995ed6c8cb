"""The "methods" export: what a paper's methods section needs to say about the runs behind its numbers.

``methods_record(project, run_ids=None)`` gathers, for each run (all runs when none are named):

- the probe and the run's status, dates and the Palimpsest version that made it;
- the model: label, backend, reference (hub id, file or API model name), server address, tags such
  as ``decade=1950s`` and the backend settings;
- the generation parameters (temperature, top-p, token limits, stop strings, seed and how samples
  derive theirs, samples per item);
- the prompt template's name, version, SHA-256 and full text, and whether the prompt went as plain
  text or as chat messages;
- counts: items, samples, requests, answered, failed, not yet asked, model calls, cache hits, tokens;
- the facts its probe adds (the name cloze its passages' books and extraction settings, REP and EEP
  runs their sets, ...);

then, for each probe present, a short paragraph describing the procedure and the statistics its
analyses use, by name and implementation. ``methods_text`` writes the same as Markdown, ready to adapt
for a paper; the record is its JSON twin, kept beside it for provenance.

**Probes describe themselves.** This module knows no probe. Each probe registers a ``MethodsSection``
(``register_methods``) from a module its part names in ``methods=(...)`` (``workbench.parts``):

- ``key`` and ``title``: the probe family, as in the record (``run["probe"]``) and as a heading;
- ``kinds``: the run kinds it describes: the probe's own declarations (``workbench.runs.RunKind``: what the
  run is, what one item is, and where the shared Generation line does not fit, a function writing it);
- ``facts(project, run) -> RunFacts``: what it adds to a run's record (``run`` is ``jobs.get_run``),
  and the number of items where the probe knows it;
- ``lines(run_record, seen) -> list[str]``: the Markdown lines for those facts, between the prompt
  template and the counts (``seen`` maps texts already quoted in full to the run that quoted them);
- ``procedure(run_records) -> str``: its paragraph, from the records of its runs;
- ``statistics() -> list[Statistic]``: what its analyses compute, from the constants of the code that
  computes it;
- ``order``: where its paragraph and statistics come in the text (smaller first);
- ``follows``: other families whose runs bring the section in too (a section with no run kinds of its own, such
  as the exposure report's verdict rule, which rests on the probes' runs).

A run whose kind no section claims is described with the shared facts only, as one of the "Other runs".

Secrets never appear. The project stores only the name of the variable or keyring entry holding an
API key; this export leaves out even that name. Server addresses lose any user name, password and
query string, and free text taken from the project (run notes, example prompts) goes through
``secrets.redact``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence
from urllib.parse import urlunsplit

from workbench import __version__, parts
from workbench.errors import UserError
from workbench.project import now
from workbench.runs import RunKind, run_kind
from workbench.runs import kind_name as kind_name
from workbench.runs import run_ids as stored_run_ids

if TYPE_CHECKING:
    from workbench.project import Project

FORMAT = "palimpsest-methods/1"
MARKDOWN_SUFFIXES = (".md", ".markdown", ".txt")
#: the family of runs no section claims
OTHER = "other"
OTHER_TITLE = "Other runs"
ORIGINS = {"shipped": "as shipped with Palimpsest", "user": "written or edited in this project",
           "imported": "imported from a file"}

BACKEND_NAMES = {
    "hf": "Hugging Face transformers",
    "gguf": "llama.cpp (GGUF file)",
    "openai": "OpenAI-compatible API",
    "external": "results imported from elsewhere",
}


# ---------------------------------------------------------------------------------------------- sections
@dataclass(frozen=True)
class Statistic:
    """One statistic a probe's analyses use: its name, what for (a phrase starting "for"), and the function
    that computes it ("" where it is plain arithmetic)."""

    name: str
    used_for: str
    implementation: str = ""


@dataclass(frozen=True)
class RunFacts:
    """What a probe adds to one run's record (keys in the order they should appear), and the number of
    items where the probe knows it (otherwise the requests divided by the samples per item)."""

    values: dict[str, Any]
    items: int | None = None


@dataclass(frozen=True)
class MethodsSection:
    """A probe's part of the methods text (see the module docstring)."""

    key: str
    title: str
    kinds: tuple[RunKind, ...]
    facts: Callable[["Project", dict], RunFacts] | None = None
    lines: Callable[[dict, dict[str, int]], list[str]] | None = None
    procedure: Callable[[list[dict]], str] | None = None
    statistics: Callable[[], list[Statistic]] | None = None
    order: int = 100
    follows: tuple[str, ...] = ()


_SECTIONS: dict[str, MethodsSection] = {}
_loaded = False


def register_methods(section: MethodsSection) -> MethodsSection:
    """Add (or replace) a probe's section. A run kind belongs to one section only."""
    for other in _SECTIONS.values():
        taken = {k.kind for k in other.kinds} & {k.kind for k in section.kinds}
        if other.key != section.key and taken:
            raise ValueError(f"Run kind {sorted(taken)[0]!r} is already described by the section {other.key!r}.")
    _SECTIONS[section.key] = section
    return section


def sections() -> list[MethodsSection]:
    """Every registered section, in text order (``order``, then the order of ``parts.PARTS``)."""
    global _loaded
    if not _loaded:
        parts.load("methods")
        _loaded = True
    return sorted(_SECTIONS.values(), key=lambda s: s.order)


def _kind(kind: str) -> tuple[MethodsSection | None, RunKind]:
    """The section that claims ``kind`` and the kind's declaration (a bare one for a kind nothing declares)."""
    for section in sections():
        for known in section.kinds:
            if known.kind == kind:
                return section, known
    return None, run_kind(kind) or RunKind(kind, kind, "item")


def _title(key: str) -> str:
    return next((s.title for s in sections() if s.key == key), OTHER_TITLE)


# ---------------------------------------------------------------------------------------------- helpers for sections
def same(values: Iterable[Any]) -> Any:
    """The one value all of ``values`` share, else None."""
    distinct = {json.dumps(v, sort_keys=True) for v in values}
    return json.loads(distinct.pop()) if len(distinct) == 1 else None


def number(value: Any) -> str:
    """``1.0`` as ``1``; anything else as it is."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def cell(value: Any) -> str:
    """``value`` fit for a Markdown table cell."""
    return str(value).replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    """``text`` as a fenced block that its own backticks cannot close."""
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}text\n{text.rstrip()}\n{fence}"


def indented_code(text: str) -> list[str]:
    """``text`` as a fenced block indented under a list item, one Markdown line each."""
    return ["  " + line if line else "" for line in _code(text).splitlines()]


# ---------------------------------------------------------------------------------------------- pieces
def safe_url(url: str | None) -> str | None:
    """A server address without user name, password, query or fragment (where keys sometimes hide)."""
    if not url:
        return None
    from workbench.models.secrets import split_address

    parts = split_address(url)
    if parts is None:
        return "(an address that cannot be read)"
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def _redact(text: str | None) -> str | None:
    from workbench.models.secrets import redact

    return None if text is None else redact(text)


def _model_record(project: "Project", model_id: int | None) -> dict[str, Any] | None:
    from workbench.models.catalog import get_model

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
    # Prompt templates are shared by every probe (a run's template_id is a column of every run).
    from workbench.prompt_templates import template_by_id

    if template_id is None:
        return None
    template = template_by_id(project, int(template_id))
    return {"id": template.id, "name": template.name, "version": template.version, "kind": template.kind,
            "origin": template.origin, "sha256": template.hash, "created_at": template.created_at,
            "text": template.body}


def _first_prompt(project: "Project", run_id: int) -> str | None:
    row = project.db.execute("SELECT prompt FROM responses WHERE run_id = ? AND prompt IS NOT NULL"
                             " ORDER BY item_id, sample LIMIT 1", [run_id]).fetchone()
    return row[0] if row else None


def _prompt_form(prompt: str | None) -> str | None:
    """'chat messages' or 'plain text', read from a prompt as stored (chats are stored with role labels)."""
    if prompt is None:
        return None
    return "chat messages" if prompt.startswith(("[system]\n", "[user]\n")) else "plain text"


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
    section, kind = _kind(run["kind"])
    config = run["config"]
    record: dict[str, Any] = {
        "id": run["id"], "kind": run["kind"], "probe": section.key if section else OTHER,
        "description": kind.description, "item": kind.item,
        "status": run["status"], "note": _redact(run["note"]) or "",
        "dates": {"created": run["created_at"], "started": run["started_at"], "finished": run["finished_at"]},
        "code_version": run["code_version"],
        "model": _model_record(project, run["model_id"]),
        "generation": dict(run["params"]),
        "template": _template_record(project, run["template_id"]),
    }
    prompt = _first_prompt(project, run["id"])
    record["prompt_form"] = ("chat messages" if config.get("chat") else "plain text") if "chat" in config \
        else _prompt_form(prompt)
    record["example_prompt"] = _redact(prompt)
    facts = section.facts(project, run) if section and section.facts else RunFacts({})
    record.update(facts.values)
    record["counts"] = _counts(project, run, facts.items)
    record["imported"] = bool(record["model"] and record["model"]["backend"] == "external")
    if record["imported"]:
        record["description"] = f"{kind.description.split(',')[0]}, results imported from elsewhere"
    return record


# ---------------------------------------------------------------------------------------------- the record
def _chosen_runs(project: "Project", run_ids: Sequence[int] | None) -> list[int]:
    known = stored_run_ids(project)
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
    present = [s for s in sections() if any(r["probe"] == s.key or r["probe"] in s.follows for r in runs)]
    return {
        "format": FORMAT,
        "generated_at": now(),
        "palimpsest_version": __version__,
        "project": Path(project.path).name,
        "runs": runs,
        "procedures": {s.key: s.procedure([r for r in runs if r["probe"] == s.key or r["probe"] in s.follows])
                       for s in present if s.procedure},
        "statistics": {s.key: [asdict(e) for e in s.statistics()] for s in present if s.statistics},
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
    own = _kind(run["kind"])[1].generation
    if own is not None:
        return own(run)
    params = run["generation"]
    if not params:
        return "not recorded (imported results)" if run["model"] and run["model"]["backend"] == "external" \
            else "none recorded"
    parts = []
    if "temperature" in params:
        parts.append(f"temperature {number(params['temperature'])}")
    if "top_p" in params:
        parts.append(f"top-p {number(params['top_p'])}")
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
    return [head + ". Full text:", "", *indented_code(template["text"]), ""]


def _run_lines(run: dict, seen: dict[str, int]) -> list[str]:
    model = run["model"]
    title = f"### Run {run['id']}: " + (f"{model['label']}, " if model else "") + run["description"]
    lines = [title, "", f"- **Model:** {_model_line(model)}.", f"- **Generation:** {_generation_line(run)}."]
    lines += _template_lines(run["template"], seen, run["id"], run["prompt_form"])
    section = _kind(run["kind"])[0]
    if section and section.lines:
        lines += section.lines(run, seen)
    lines.append(f"- **Counts:** {_counts_line(run)}")
    dates = run["dates"]
    lines.append(f"- **Dates:** {_dates(dates)}; status {run['status']}; made with Palimpsest {run['code_version']}.")
    if run["note"]:
        lines.append(f"- **Note:** {run['note']}")
    if run["example_prompt"]:
        lines += ["- **First prompt as sent:**", "", *indented_code(run["example_prompt"]), ""]
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
        lines += [f"### {_title(family)}", "", paragraph, ""]
    lines += ["## Models", "", "| model | backend | reference | tags |", "|---|---|---|---|"]
    models = {r["model"]["label"]: r["model"] for r in runs if r["model"]}
    lines += [f"| {cell(m['label'])} | {cell(m['backend_name'])} | {cell(m['reference'] or '')} | "
              f"{cell(_tags(m['tags']))} |" for m in models.values()]
    lines += ["", "## Runs", ""]
    seen: dict[str, int] = {}
    for run in runs:
        lines += _run_lines(run, seen)
    lines += ["## Statistics", ""]
    for family, entries in record["statistics"].items():
        lines += [f"### {_title(family)}", ""]
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
