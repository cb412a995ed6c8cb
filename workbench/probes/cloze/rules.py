"""What makes a name-cloze passage: the settings of an extraction and the word lists behind them.

The word lists are data (``resources/cloze/*.txt``, one word per line, ``#`` for notes). A project can
use its own exclusion list: ``project.set_setting("cloze.excluded_words", ["mom", "dad", ...])``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from workbench.errors import UserError

if TYPE_CHECKING:
    from workbench.project import Project

RESOURCES = Path(__file__).resolve().parents[3] / "resources" / "cloze"
EXCLUDED_WORDS_FILE = RESOURCES / "excluded_words.txt"
TITLES_FILE = RESOURCES / "titles.txt"
EXCLUDED_WORDS_SETTING = "cloze.excluded_words"

#: spaCy entity labels that are proper names. Dates, times, numbers, money and quantities are not.
PROPER_ENTITY_LABELS = frozenset(
    {"PERSON", "NORP", "FAC", "ORG", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW", "LANGUAGE"}
)


def normalise_word(word: str) -> str:
    return word.strip().rstrip(".").replace("’", "'").casefold()


def read_word_list(path: Path) -> frozenset[str]:
    """The words of a list file: one per line, case and trailing full stops ignored, ``#`` lines skipped."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise UserError(f"Could not read the word list {path}: {exc.strerror or exc}.") from exc
    return frozenset(normalise_word(line) for line in lines if line.strip() and not line.lstrip().startswith("#"))


def default_excluded_words() -> frozenset[str]:
    return read_word_list(EXCLUDED_WORDS_FILE)


def default_titles() -> frozenset[str]:
    return read_word_list(TITLES_FILE)


@dataclass(frozen=True)
class ExtractionSettings:
    """Everything that decides which passages an extraction finds and samples.

    per_book        how many passages to sample per book (books with fewer candidates are flagged)
    seed            the seed of the sample (and of the fast mode's visiting order)
    fast            stop once ``per_book`` candidates are found, visiting blocks in seeded random order
    min_tokens, max_tokens, target_tokens
                    the window of whole sentences around a name: its length in tokens (spaCy tokens,
                    whitespace not counted), the one closest to ``target_tokens`` preferred
    block_words     consecutive paragraphs are grouped into blocks of at least this many words; a window
                    never crosses a block boundary, and the fast mode visits whole blocks
    reject_other_proper_nouns
                    also refuse windows with another word tagged as a proper noun (NNP/NNPS) that the
                    entity recogniser missed, titles and excluded words apart: fewer passages, fewer
                    hidden names
    excluded_words  a mention whose word is in this list is never a name (kinship, address, deities)
    titles          words allowed in front of the name inside its mention ("Mr. [MASK]")
    proper_labels   spaCy entity labels that count as "another proper named entity"
    """

    per_book: int = 100
    seed: int = 0
    fast: bool = False
    min_tokens: int = 40
    max_tokens: int = 60
    target_tokens: int = 50
    block_words: int = 400
    reject_other_proper_nouns: bool = True
    excluded_words: frozenset[str] = field(default_factory=default_excluded_words)
    titles: frozenset[str] = field(default_factory=default_titles)
    proper_labels: frozenset[str] = PROPER_ENTITY_LABELS

    def __post_init__(self) -> None:
        if self.per_book < 1:
            raise UserError("The number of passages per book must be at least 1.")
        if not 1 <= self.min_tokens <= self.target_tokens <= self.max_tokens:
            raise UserError(
                "The passage length must satisfy shortest <= preferred <= longest "
                f"(got {self.min_tokens}, {self.target_tokens}, {self.max_tokens} tokens)."
            )

    def with_changes(self, **changes: Any) -> "ExtractionSettings":
        return replace(self, **changes)

    def as_record(self) -> dict[str, Any]:
        """A JSON-ready description, stored with every extraction so it can be traced and repeated."""
        record = asdict(self)
        for key in ("excluded_words", "titles", "proper_labels"):
            record[key] = sorted(record[key])
        return record

    def fingerprint(self) -> str:
        """A short hash of the settings (two extractions with the same fingerprint find the same passages)."""
        text = json.dumps(self.as_record(), sort_keys=True)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def project_settings(project: "Project | None" = None, **overrides: Any) -> ExtractionSettings:
    """The default settings, with the project's own exclusion list if it has one, then ``overrides``."""
    values: dict[str, Any] = {}
    if project is not None:
        custom = project.get_setting(EXCLUDED_WORDS_SETTING)
        if custom is not None:
            values["excluded_words"] = words_from(custom)
    values.update({k: v for k, v in overrides.items() if v is not None})
    return ExtractionSettings(**values)


def words_from(words: Iterable[str]) -> frozenset[str]:
    if isinstance(words, str):
        raise UserError("The exclusion list must be a list of words, not one piece of text.")
    return frozenset(normalise_word(w) for w in words if str(w).strip())
