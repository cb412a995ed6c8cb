"""The leakage probe's kinds of run, declared once (``workbench.runs``); in each, ``responses.item_id`` is a
``leakage_passages`` id.

- ``leakage-overlap``: each passage's longest overlap with a reference corpus (``overlap``);
- ``leakage-chance``: how often those overlaps occur in a background corpus, the chance model (``overlap``);
- ``leakage-frequency``: n-gram counts per book in a reference corpus (``frequency``);
- ``membership``: token log-probabilities for membership scores (``membership``);
- ``surprisal``: word-level surprisal of a text (``surprisal``);
- ``decop-paraphrase``: three paraphrases of each passage (``decop``); ``decop``: the DE-COP questions, each
  passage in several option orders (the samples), asked of the model under test.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping

from workbench.runs import Run, RunKind, Unit, declare_run_kind, optional

if TYPE_CHECKING:
    from workbench.project import Project

_LEAKAGE = "workbench.probes.leakage"
#: paraphrases made of each passage (a DE-COP question's other three options)
PARAPHRASES = 3


@dataclass(frozen=True)
class PassagesConfig:
    """A run's config: the passages it covers."""

    passage_ids: tuple[int, ...] = ()


@dataclass(frozen=True)
class CorpusConfig:
    """A run against a reference corpus: the corpus (its name and number when the run was made) and the
    passages. When the corpus is removed its number moves to ``removed_corpus_id`` (a corpus built later may
    get the number, and its results must never be mixed with these)."""

    corpus: str = ""
    corpus_id: int | None = None
    passage_ids: tuple[int, ...] = ()
    removed_corpus_id: int | None = optional()


@dataclass(frozen=True)
class ChanceConfig(CorpusConfig):
    """A chance-model run: the overlaps found in ``corpus``, counted in the ``background`` corpus."""

    background: str = ""
    background_id: int | None = None


@dataclass(frozen=True)
class QuizConfig:
    """A DE-COP question run: the passages, the model whose paraphrases are the options (``paraphraser_id``) and
    which of its samples (``paraphrase_samples``: passage -> sample numbers), the option orders per passage
    and their seed, and the book named in each question (``names``: passage -> title and author; runs made
    before questions named the book have none)."""

    passage_ids: tuple[int, ...] = ()
    paraphraser_id: int | None = None
    orders: int | None = None
    seed: int | None = None
    paraphrase_samples: Mapping[str, Any] = field(default_factory=dict)
    names: Mapping[str, Any] | None = optional()


def _index_only(_run: dict) -> str:
    return "none: no model is involved, the answers are counts from the n-gram index"


def _read_only(_run: dict) -> str:
    return "none: the model read each text once, and the log-probability of every token was kept"


def passage_units(_project: "Project", run: Run) -> list[Unit]:
    """One unit per passage of the run's config."""
    return [Unit(int(i)) for i in run.config.passage_ids]


def paraphrase_units(_project: "Project", run: Run[PassagesConfig]) -> list[Unit]:
    """Each passage's paraphrases, one sample each."""
    return [Unit(int(i), s) for i in run.config.passage_ids for s in range(PARAPHRASES)]


def quiz_units(_project: "Project", run: Run[QuizConfig]) -> list[Unit]:
    """Each passage in each of the run's option orders."""
    return [Unit(int(i), n) for i in run.config.passage_ids for n in range(int(run.config.orders))]


OVERLAP_KIND = declare_run_kind(RunKind(
    "leakage-overlap", "overlap with a reference corpus", "passage", generation=_index_only, config=CorpusConfig,
    resume=f"{_LEAKAGE}.overlap:resume", units=passage_units))
CHANCE_KIND = declare_run_kind(RunKind(
    "leakage-chance", "counts of the overlaps in a background corpus (chance model)", "passage",
    generation=_index_only, config=ChanceConfig, resume=f"{_LEAKAGE}.overlap:resume_background",
    units=passage_units))
FREQUENCY_KIND = declare_run_kind(RunKind(
    "leakage-frequency", "n-gram counts per book in a reference corpus", "passage", generation=_index_only,
    config=CorpusConfig, resume=f"{_LEAKAGE}.frequency:resume", units=passage_units))
MEMBERSHIP_KIND = declare_run_kind(RunKind(
    "membership", "token log-probabilities for membership scores", "passage", generation=_read_only,
    config=PassagesConfig, resume=f"{_LEAKAGE}.membership:resume", units=passage_units))
SURPRISAL_KIND = declare_run_kind(RunKind(
    "surprisal", "word-level surprisal", "text", generation=_read_only, config=PassagesConfig,
    resume=f"{_LEAKAGE}.surprisal:resume", units=passage_units))
PARAPHRASE_KIND = declare_run_kind(RunKind(
    "decop-paraphrase", "DE-COP paraphrases", "passage", config=PassagesConfig,
    resume=f"{_LEAKAGE}.decop:resume_paraphrases", units=paraphrase_units))
QUIZ_KIND = declare_run_kind(RunKind(
    "decop", "DE-COP questions", "passage in one option order", config=QuizConfig,
    resume=f"{_LEAKAGE}.decop:resume_quiz", units=quiz_units))
