"""A summary and a false summary for every scene of a book, made by a model through the summary runs.

The model work is that of ``workbench.summaries.runs`` (the same templates ``summary`` and
``summary-distort``, the same bounded retries, the same parsing after the ``<summary>`` line); here
the items are a scene set's scenes instead of annotation items. Two run kinds, one run per scene set,
model and level:

- ``reading-summary``: level 0 summarizes each scene (``responses.item_id`` = the scene's number);
  level L >= 1 (hierarchical summaries) joins the summaries of ``group`` consecutive nodes of level
  L - 1 into one (template ``summary-merge``; item = the node's number at its level), level after
  level until one summary covers the whole book;
- ``reading-false-summary``: the false version of each summary of a level (same characters and
  setting, other events), from that level's summary run.

Summaries made elsewhere (NarrativeXL publishes its own) come in from a CSV file with the columns
``scene``, ``summary`` and ``false_summary`` as the same two runs under an ``external`` model label;
their raw text is the summary itself (there is no ``<summary>`` line to look for).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

from workbench.annotation.passages import tidy
from workbench.errors import UserError
from workbench.jobs import JobReport, Outcome, Unit, run_counts, run_job
from workbench.models.base import GenerationParams
from workbench.probes.reading.scenes import SceneSet, get_scene_set, latest_scene_set
from workbench.progress import TaskState
from workbench.prompt_templates import get_template, register_kind
from workbench.runs import (
    Run,
    RunKind,
    config_dict,
    declare_run_kind,
    find_or_create_run,
    follow_ups,
    get_run,
    latest_run,
    optional,
    runs,
)
from workbench.summaries.runs import (
    DEFAULT_MAX_ATTEMPTS,
    DISTORT_PARAMS,
    DISTORT_TEMPLATE,
    SUMMARY_PARAMS,
    SUMMARY_TEMPLATE,
    distortions_of,
    parse_distorted,
    parse_marked,
    run_on_texts,
    summaries_of,
)

if TYPE_CHECKING:
    from workbench.models.base import Backend
    from workbench.models.catalog import ModelSpec
    from workbench.models.prices import CostEstimate
    from workbench.project import Project

MERGE_TEMPLATE = "summary-merge"
DEFAULT_GROUP = 5
IMPORT_COLUMNS = ("scene", "summary", "false_summary")

register_kind(MERGE_TEMPLATE, required=["summaries"], allowed=["summaries"],
              description="join the summaries of consecutive scenes into one")


@dataclass(frozen=True)
class LevelConfig:
    """A summary run's config: the scene set (and its book), the label of the model whose summaries these are,
    the level (0: the scenes; L: joins of ``group`` summaries of level L - 1), the attempts allowed per node;
    for summaries imported from a file, ``source`` 'import' and the file's name and digest instead of attempts."""

    scene_set: int | None = None
    book_id: int | None = None
    model: str = ""
    level: int = 0
    max_attempts: int | None = optional()
    group: int | None = optional()
    source: str | None = optional()
    file: str | None = optional()
    file_hash: str | None = optional()


@dataclass(frozen=True)
class FalseLevelConfig(LevelConfig):
    """A false-summary run's config: its summary run's, and that run (``summary_run``)."""

    summary_run: int | None = None


@dataclass(frozen=True)
class LevelReport:
    level: int
    nodes: int
    summaries: int
    summaries_failed: int
    false: int
    false_failed: int
    summary_run: int
    false_run: int | None
    #: what running the level's summary run and false-summary run came to this time (none for an import);
    #: not part of what the level is
    reports: tuple[JobReport, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class BookSummaries:
    book_id: int
    model: str
    levels: tuple[LevelReport, ...]

    def describe(self) -> str:
        parts = []
        for lv in self.levels:
            what = "scenes" if lv.level == 0 else f"level-{lv.level} parts"
            parts.append(f"{lv.nodes} {what}: {lv.summaries} summaries ({lv.summaries_failed} failed), "
                         f"{lv.false} false summaries ({lv.false_failed} failed)")
        return f"Book {self.book_id}, {self.model}: " + "; ".join(parts) + "."

    def unfinished(self) -> list[tuple[str, JobReport]]:
        """The runs of this time that stopped early or have failed items, each with what it makes ("False
        summaries at level 1"): what the command line and the Reading page report, with how to retry."""
        found = []
        for lv in self.levels:
            where = "of the scenes" if lv.level == 0 else f"at level {lv.level}"
            for what, report in zip(("Summaries", "False summaries"), lv.reports):
                if report.status != "done" or report.failed_total:
                    found.append((f"{what} {where}", report))
        return found


# ---------------------------------------------------------------------------------------------- runs
def _level_runs(project: "Project", scene_set_id: int, model: str, level: int) -> tuple[int | None, int | None]:
    """The latest summary run of ``model`` for the scene set's level, and the false-summary run after it."""
    summary = latest_run(project, SUMMARY_RUN, scene_set=scene_set_id, model=model, level=level)
    if summary is None:
        return None, None
    false = follow_ups(project, summary, FALSE_RUN)
    return summary.id, false[-1].id if false else None


def _imported(project: "Project", run_id: int) -> bool:
    return get_run(project, run_id).config.source == "import"


def _raw_texts(project: "Project", run_id: int) -> dict[int, str]:
    rows = project.db.execute("SELECT item_id, raw FROM responses WHERE run_id = ? AND status = 'ok'", [run_id])
    return {item: " ".join((raw or "").split()) for item, raw in rows.fetchall() if (raw or "").strip()}


def _summaries(project: "Project", run_id: int | None) -> dict[int, str]:
    if run_id is None:
        return {}
    return _raw_texts(project, run_id) if _imported(project, run_id) else summaries_of(project, run_id)


def _false_summaries(project: "Project", run_id: int | None, summaries: dict[int, str]) -> dict[int, str]:
    if run_id is None:
        return {}
    if _imported(project, run_id):
        return {i: t for i, t in _raw_texts(project, run_id).items() if i in summaries}
    return distortions_of(project, run_id, summaries)


def level_summaries(project: "Project", scene_set_id: int, model: str, level: int = 0
                    ) -> dict[int, tuple[str | None, str | None]]:
    """node (scene, at level 0) -> (summary, false summary) as the model's latest runs give them
    (parsed again from the raw answers); nodes with neither are left out."""
    summary_run, false_run = _level_runs(project, scene_set_id, model, level)
    summaries = _summaries(project, summary_run)
    false = _false_summaries(project, false_run, summaries)
    return {i: (summaries.get(i), false.get(i)) for i in sorted(set(summaries) | set(false))}


def summary_models(project: "Project", scene_set_id: int) -> list[str]:
    """Labels of the models with scene summaries for the scene set, newest first."""
    newest = {run.config.model: run.id for run in runs(project, SUMMARY_RUN, scene_set=scene_set_id, level=0)}
    return sorted(newest, key=newest.__getitem__, reverse=True)


def levels_of(project: "Project", scene_set_id: int, model: str) -> list[int]:
    return sorted({int(run.config.level) for run in runs(project, SUMMARY_RUN, scene_set=scene_set_id, model=model)})


def level_group(project: "Project", scene_set_id: int, model: str, level: int) -> int:
    """How many nodes of the level below each node of ``level`` (>= 1) joins, as its latest summary run made it."""
    summary_run, _ = _level_runs(project, scene_set_id, model, level)
    if summary_run is None:
        return DEFAULT_GROUP
    return int(get_run(project, summary_run).config.group or DEFAULT_GROUP)


# ---------------------------------------------------------------------------------------------- texts
def scene_texts(project: "Project", scene_set: SceneSet) -> dict[int, str]:
    """scene -> its text, whitespace tidied (what the summary prompt quotes)."""
    from workbench.corpus.library import book_text

    text = book_text(project, scene_set.book_id)
    return {s.scene: tidy(text[s.start_char : s.end_char]) for s in scene_set.scenes}


def node_count(scenes: int, level: int, group: int) -> int:
    """How many summaries level ``level`` has: every ``group`` nodes of the level below make one."""
    count = scenes
    for _ in range(level):
        count = math.ceil(count / group)
    return count


def merged_texts(children: dict[int, str], nodes: int, group: int) -> dict[int, str]:
    """node -> the summaries of its children (the ``group`` nodes below it), in order, one per paragraph;
    a node none of whose children has a summary is left out."""
    texts = {}
    for node in range(nodes):
        parts = [children[c] for c in range(node * group, (node + 1) * group) if children.get(c)]
        if parts:
            texts[node] = "\n\n".join(parts)
    return texts


def _level_texts(project: "Project", scene_set: SceneSet, model: str, level: int, group: int) -> dict[int, str]:
    if level == 0:
        return scene_texts(project, scene_set)
    below = {i: pair[0] for i, pair in level_summaries(project, scene_set.id, model, level - 1).items() if pair[0]}
    return merged_texts(below, node_count(len(scene_set.scenes), level, group), group)


# ---------------------------------------------------------------------------------------------- making
def _run_level(project: "Project", backend: "Backend", scene_set: SceneSet, *, model: str, model_id: int | None,
               level: int, group: int, summary_params: GenerationParams, false_params: GenerationParams,
               max_attempts: int, state: TaskState) -> LevelReport:
    base = LevelConfig(scene_set=scene_set.id, book_id=scene_set.book_id, model=model, level=level,
                       max_attempts=max_attempts, group=group if level else None)
    template = get_template(project, SUMMARY_TEMPLATE if level == 0 else MERGE_TEMPLATE)
    summary_run = find_or_create_run(project, SUMMARY_RUN, model_id=model_id, template_id=template.id,
                                     params={**summary_params.as_dict(), "max_attempts": max_attempts}, config=base)
    texts = _level_texts(project, scene_set, model, level, group)
    placeholder = "scene" if level == 0 else "summaries"
    summarized = run_on_texts(project, summary_run, backend, {i: (placeholder, t) for i, t in texts.items()},
                              lambda _, raw, prompt: parse_marked(raw, prompt), state)
    state.check()
    summaries = summaries_of(project, summary_run)
    false_template = get_template(project, DISTORT_TEMPLATE)
    false_run = find_or_create_run(project, FALSE_RUN, model_id=model_id, template_id=false_template.id,
                                   params={**false_params.as_dict(), "max_attempts": max_attempts},
                                   config=FalseLevelConfig(**config_dict(base), summary_run=summary_run))
    falsified = run_on_texts(project, false_run, backend, {i: ("summary", s) for i, s in summaries.items()},
                             lambda i, raw, prompt: parse_distorted(raw, prompt, summaries[i]), state)
    return replace(_level_report(project, scene_set, model, level, group), reports=(summarized, falsified))


def _level_report(project: "Project", scene_set: SceneSet, model: str, level: int, group: int) -> LevelReport:
    summary_run, false_run = _level_runs(project, scene_set.id, model, level)
    pairs = level_summaries(project, scene_set.id, model, level)
    return LevelReport(
        level=level, nodes=node_count(len(scene_set.scenes), level, group),
        summaries=sum(1 for s, _ in pairs.values() if s), false=sum(1 for _, f in pairs.values() if f),
        summaries_failed=run_counts(project, summary_run)["failed"] if summary_run else 0,
        false_failed=run_counts(project, false_run)["failed"] if false_run else 0,
        summary_run=summary_run or 0, false_run=false_run,
    )


def summarize_book(
    project: "Project",
    book_id: int,
    backend: "Backend",
    *,
    model_label: str,
    model_id: int | None = None,
    scene_set: SceneSet | None = None,
    hierarchical: bool = False,
    group: int = DEFAULT_GROUP,
    max_tokens: int = SUMMARY_PARAMS.max_tokens,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    seed: int = 0,
    state: TaskState | None = None,
) -> BookSummaries:
    """Summarize every scene of the book's scene set (its latest, unless given) and write a false version
    of each summary; with ``hierarchical``, then summarize ``group`` summaries at a time, level by level,
    up to one summary of the whole book, each with its false version. Running it again continues."""
    if max_attempts < 1:
        raise UserError("Allow at least one attempt per scene.")
    if hierarchical and group < 2:
        raise UserError("Hierarchical summaries join at least two summaries at a time.")
    state = state or TaskState()
    scene_set = scene_set or latest_scene_set(project, book_id)
    summary_params = replace(SUMMARY_PARAMS, max_tokens=max_tokens, seed=seed)
    false_params = replace(DISTORT_PARAMS, max_tokens=max_tokens, seed=seed)
    reports = []
    level = 0
    while True:
        reports.append(_run_level(project, backend, scene_set, model=model_label, model_id=model_id, level=level,
                                  group=group, summary_params=summary_params, false_params=false_params,
                                  max_attempts=max_attempts, state=state))
        if not hierarchical or reports[-1].nodes <= 1 or state.cancelled:
            break
        level += 1
    return BookSummaries(book_id, model_label, tuple(reports))


def summarize_with_model(project: "Project", book_id: int, model: "str | ModelSpec", *, hierarchical: bool = False,
                         group: int = DEFAULT_GROUP, max_tokens: int = SUMMARY_PARAMS.max_tokens,
                         max_attempts: int = DEFAULT_MAX_ATTEMPTS, state: TaskState | None = None) -> BookSummaries:
    """``summarize_book`` with a model of the project, opened for the work and closed afterwards."""
    from workbench.models.catalog import open_backend, runnable_model

    spec = runnable_model(project, model, "write summaries")
    with open_backend(spec, project) as backend:
        return summarize_book(project, book_id, backend, model_label=spec.label, model_id=spec.id,
                              hierarchical=hierarchical, group=group, max_tokens=max_tokens,
                              max_attempts=max_attempts, state=state)


def estimate_summary_cost(project: "Project", book_id: int, model: "str | ModelSpec", *, hierarchical: bool = False,
                          group: int = DEFAULT_GROUP, max_tokens: int = SUMMARY_PARAMS.max_tokens) -> "CostEstimate":
    """Requests, tokens and the most the scene summaries still to make can cost: a summary and a false
    version per scene (and per hierarchical node), every answer as long as allowed; retries come on top."""
    from workbench.models.catalog import ModelSpec, get_model
    from workbench.models.prices import estimate_cost

    spec = model if isinstance(model, ModelSpec) else get_model(project, model)
    scene_set = latest_scene_set(project, book_id)
    done = level_summaries(project, scene_set.id, spec.label, 0)
    longest = " ".join(["word"] * max_tokens)
    summary = get_template(project, SUMMARY_TEMPLATE)
    distort = get_template(project, DISTORT_TEMPLATE)
    prompts = [summary.render(scene=t) for i, t in scene_texts(project, scene_set).items() if not done.get(i, (None,))[0]]
    prompts += [distort.render(summary=longest)] * sum(1 for i in range(len(scene_set.scenes))
                                                      if not done.get(i, (None, None))[1])
    if hierarchical:
        merge = get_template(project, MERGE_TEMPLATE)
        level, nodes = 1, node_count(len(scene_set.scenes), 1, group)
        while True:
            prompts += [merge.render(summaries="\n\n".join([longest] * group)), distort.render(summary=longest)] * nodes
            if nodes <= 1:
                break
            level += 1
            nodes = node_count(len(scene_set.scenes), level, group)
    return estimate_cost(spec, prompts, max_tokens, project=project)


# ---------------------------------------------------------------------------------------------- resuming
def resume(project: "Project", run_id: int, state: TaskState, retry_failed: bool) -> JobReport:
    """Continue a ``reading-summary`` or ``reading-false-summary`` run (Jobs page, ``palimpsest continue``)."""
    from workbench.models.catalog import get_model, open_backend

    run = get_run(project, run_id)
    config = run.config
    if run.model_id is None or config.source == "import":
        raise UserError(f"Run {run_id} holds summaries imported from a file; import the file again instead.")
    get_scene_set(project, config.scene_set)  # a run whose scene set is gone is refused before the model opens
    with open_backend(get_model(project, run.model_id), project) as backend:
        if run.kind == SUMMARY_RUN:
            texts = _texts_of(project, run)
            placeholder = "scene" if config.level == 0 else "summaries"
            return run_on_texts(project, run_id, backend, {i: (placeholder, t) for i, t in texts.items()},
                                lambda _, raw, prompt: parse_marked(raw, prompt), state, retry_failed)
        summaries = summaries_of(project, config.summary_run)
        return run_on_texts(project, run_id, backend, {i: ("summary", s) for i, s in summaries.items()},
                            lambda i, raw, prompt: parse_distorted(raw, prompt, summaries[i]), state, retry_failed)


def _texts_of(project: "Project", run: Run[LevelConfig]) -> dict[int, str]:
    """node -> the text a summary run summarizes (the scene, or its children's summaries)."""
    config = run.config
    group = int(config.group if config.group is not None else DEFAULT_GROUP)
    return _level_texts(project, get_scene_set(project, config.scene_set), config.model, int(config.level), group)


def _units(project: "Project", run: Run[LevelConfig]) -> list[Unit]:
    """The nodes a run summarizes (a false-summary run: those with a usable summary)."""
    if isinstance(run.config, FalseLevelConfig):
        return [Unit(i) for i in summaries_of(project, run.config.summary_run)]
    return [Unit(i) for i in _texts_of(project, run)]


SUMMARY_RUN = declare_run_kind(RunKind("reading-summary", "reading: scene summaries", "scene", config=LevelConfig,
                                       resume=resume, units=_units))
FALSE_RUN = declare_run_kind(RunKind("reading-false-summary", "reading: false summaries", "scene",
                                     config=FalseLevelConfig, resume=resume, units=_units, follows="summary_run"))


# ---------------------------------------------------------------------------------------------- import
def _read_import(path: Path, scenes: int) -> list[tuple[int, str, str]]:
    import pandas as pd

    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise UserError(f"The file {path} could not be read as CSV ({exc}).") from exc
    missing = [c for c in IMPORT_COLUMNS if c not in frame.columns]
    if missing:
        raise UserError(f"{Path(path).name} lacks the column(s) {', '.join(missing)}; it needs "
                        f"{', '.join(IMPORT_COLUMNS)} (scene numbers start at 0).")
    rows, problems, seen = [], [], set()
    for line, (scene, summary, false) in enumerate(frame[list(IMPORT_COLUMNS)].itertuples(index=False), start=2):
        try:
            number = int(scene.strip())
        except ValueError:
            problems.append(f"line {line}: '{scene}' is not a scene number")
            continue
        if not 0 <= number < scenes:
            problems.append(f"line {line}: there is no scene {number} (the book has scenes 0 to {scenes - 1})")
        elif number in seen:
            problems.append(f"line {line}: scene {number} appears twice")
        seen.add(number)
        rows.append((number, summary, false))
    if problems:
        more = f" ... and {len(problems) - 5} more" if len(problems) > 5 else ""
        raise UserError(f"Nothing was imported from {Path(path).name}: " + "; ".join(problems[:5]) + more + ".")
    return rows


def _text_outcomes(texts: dict[int, str], note: str, original: dict[int, str] | None = None):
    """A job process that stores given texts as answers (empty ones, or a false summary that repeats its
    summary, as failures)."""

    def process(units: Sequence[Unit], state: TaskState) -> Iterable[tuple[Unit, Outcome]]:
        for unit in units:
            text = texts.get(unit.item_id, "").strip()
            if not text:
                yield unit, Outcome.failure(f"The file gives no text for this scene ({note}).")
            elif original is not None and " ".join(text.split()) == " ".join(original.get(unit.item_id, "").split()):
                yield unit, Outcome.failure(f"The false summary repeats the summary word for word ({note}).")
            else:
                yield unit, Outcome(raw=text, extra={"imported_from": note})

    return process


def import_summaries(project: "Project", book_id: int, path: str | Path, model_label: str,
                     state: TaskState | None = None) -> BookSummaries:
    """Summaries made elsewhere (CSV: ``scene``, ``summary``, ``false_summary``) for the book's latest
    scene set, stored as a summary run and a false-summary run of the external model ``model_label``.
    Importing the same file again changes nothing; a changed file makes new runs."""
    from workbench.models.catalog import external_model

    path = Path(path)
    scene_set = latest_scene_set(project, book_id)
    rows = _read_import(path, len(scene_set.scenes))
    model_id = external_model(project, model_label)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    base = LevelConfig(scene_set=scene_set.id, book_id=book_id, model=model_label, level=0, source="import",
                       file=path.name, file_hash=digest)
    summaries = {scene: summary for scene, summary, _ in rows}
    units = [Unit(scene) for scene, _, _ in rows]
    summary_run = find_or_create_run(project, SUMMARY_RUN, model_id=model_id, params={}, config=base)
    run_job(project, summary_run, units, _text_outcomes(summaries, path.name), state)
    false_run = find_or_create_run(project, FALSE_RUN, model_id=model_id, params={},
                                   config=FalseLevelConfig(**config_dict(base), summary_run=summary_run))
    run_job(project, false_run, units, _text_outcomes({s: f for s, _, f in rows}, path.name, summaries), state)
    return BookSummaries(book_id, model_label, (_level_report(project, scene_set, model_label, 0, DEFAULT_GROUP),))
