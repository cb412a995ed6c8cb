"""Run kinds: each kind of run declared once, in the probe that makes it.

A ``RunKind`` says everything the rest of the program needs to know about a kind of run:

- ``kind``: the string stored in ``runs.kind`` (never renamed: old projects hold it);
- ``description`` and ``item``: what such a run is and what one of its items is, in words (the Jobs page's
  name for the kind, the methods text's heading and counts);
- ``generation``: where the methods text's shared Generation line does not fit, a function writing it;
- ``config``: a frozen dataclass, the run's typed config (what decides its items). Reading a stored config
  tolerates what old projects hold: keys the dataclass does not know are left out, missing ones take the
  field's default. Writing stores every field, except those made with ``optional()`` while they are None
  (keys that only some runs of the kind have, so that asking again for the same work finds the earlier run);
- ``resume``: ``fn(project, run_id, state, retry_failed) -> JobReport``, which rebuilds the run's work from
  what its row recorded and executes it (the Jobs page's Continue, ``palimpsest continue``);
- ``units``: ``fn(project, run) -> list[Unit]``, the run's units of work as its config gives them;

``resume`` and ``units`` may be named as ``"package.module:function"`` instead (as pages are named in a
part), so that a probe can declare its kinds in a small module that the rest of the probe imports (the
module doing the work imports the kinds, not the other way round); the function is imported when first used.
- ``follows``: the config field naming the run this one builds on (a distorted-summary run names its
  summary run), so that ``store.follow_ups`` finds them.

A probe declares its kinds with ``declare_run_kind`` in a module its part names in ``run_kinds=(...)``
(``workbench.parts``); the methods text lists the same objects in its ``MethodsSection``.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from workbench import parts

if TYPE_CHECKING:
    from workbench.progress import TaskState
    from workbench.project import Project
    from workbench.runs.records import Run, Unit

#: ``fn(project, run_id, state, retry_failed) -> JobReport`` (``workbench.jobs.JobReport``)
Resumer = Callable[["Project", int, "TaskState", bool], Any]
#: ``fn(project, run) -> list[Unit]``
Units = Callable[["Project", "Run"], list["Unit"]]

_OPTIONAL = "omitted while None"


def optional(default: Any = None) -> Any:
    """A config field that is stored only when it holds a value (only some runs of the kind have it)."""
    return dataclasses.field(default=default, metadata={_OPTIONAL: True})


class RunKind(str):
    """A kind of run (``runs.kind``); see the module docstring.

    A ``RunKind`` is its kind's string (it compares, hashes, is stored and is written as that string, so a
    probe's constant ``KIND = declare_run_kind(RunKind("leakage-overlap", ...))`` goes wherever the string
    went) and carries the kind's declaration. It is not changed once made."""

    kind: str
    description: str
    item: str
    generation: Callable[[dict], str] | None
    config: type | None
    resume: "Resumer | str | None"
    units: "Units | str | None"
    follows: str | None

    def __new__(cls, kind: str, description: str = "", item: str = "item",
                generation: Callable[[dict], str] | None = None, *, config: type | None = None,
                resume: "Resumer | str | None" = None, units: "Units | str | None" = None,
                follows: str | None = None) -> "RunKind":
        self = super().__new__(cls, kind)
        values = {"kind": str(kind), "description": description or str(kind), "_worded": bool(description),
                  "item": item, "generation": generation, "config": config, "resume": resume, "units": units, "follows": follows}
        self.__dict__.update(values)
        if config is not None and not dataclasses.is_dataclass(config):
            raise TypeError(f"The config of run kind {kind!r} must be a dataclass.")
        if follows is not None and follows not in self.fields():
            raise TypeError(f"Run kind {kind!r} follows the config field {follows!r}, which its config does not have.")
        return self

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Run kind {self.kind!r} is declared once and not changed.")

    def __repr__(self) -> str:
        return f"RunKind({self.kind!r})"

    def __reduce__(self) -> tuple:
        return (str, (self.kind,))  # sent elsewhere (another process), it is the string it is stored as

    def resumer(self) -> Resumer | None:
        """The function that continues a run of this kind (imported now if named); ``ImportError`` when its
        part is not installed."""
        return _function(self.resume)

    def units_of(self, project: "Project", run: "Run") -> list["Unit"]:
        """The run's units of work, as the kind's ``units`` builds them from its config."""
        build = _function(self.units)
        if build is None:
            raise TypeError(f"Run kind {self.kind!r} does not say how its units are built.")
        return build(project, run)

    @property
    def name(self) -> str:
        """What a run of this kind is, as a heading ('Name cloze, prompted model'); a kind declared without
        words is shown as it is stored."""
        if not self.__dict__["_worded"]:
            return self.kind
        return self.description[:1].upper() + self.description[1:]

    def fields(self) -> tuple[str, ...]:
        """The config's field names (none where the config is read as stored)."""
        return tuple(f.name for f in dataclasses.fields(self.config)) if self.config is not None else ()

    def read_config(self, stored: Mapping[str, Any] | None) -> Any:
        """A stored config as this kind's dataclass (lists become tuples); as stored where there is none."""
        stored = dict(stored or {})
        if self.config is None:
            return stored
        known = {f.name for f in dataclasses.fields(self.config)}
        return self.config(**{k: _frozen(v) for k, v in stored.items() if k in known})

    def stored_config(self, config: Any) -> dict[str, Any]:
        """What is stored for ``config`` (this kind's dataclass, or a dict kept as it is)."""
        if config is None:
            return {}
        if isinstance(config, Mapping):
            return dict(config)
        if self.config is None or not isinstance(config, self.config):
            raise TypeError(f"A {self.kind!r} run's config must be a {getattr(self.config, '__name__', 'dict')}, "
                            f"not a {type(config).__name__}.")
        return config_dict(config)


def _function(named: Any) -> Any:
    """A function given as itself or as ``"package.module:function"`` (imported now)."""
    if not isinstance(named, str):
        return named
    module, _, name = named.partition(":")
    return getattr(importlib.import_module(module), name)


def config_dict(config: Any) -> dict[str, Any]:
    """A config dataclass as the JSON-ready dict it is stored as (``optional`` fields only when set)."""
    return {f.name: _plain(getattr(config, f.name)) for f in dataclasses.fields(config)
            if not (f.metadata.get(_OPTIONAL) and getattr(config, f.name) is None)}


def config_value(config: Any, key: str) -> Any:
    """``key`` of a typed config or of a config read as stored (None where it has none)."""
    if isinstance(config, Mapping):
        return config.get(key)
    return getattr(config, key, None)


def same_value(stored: Any, wanted: Any) -> bool:
    """Whether two config values are equal as the JSON values they are stored as (a tuple equals a list)."""
    if stored == wanted:
        return True
    if isinstance(stored, (tuple, list, dict)) or isinstance(wanted, (tuple, list, dict)):
        return _as_json(stored) == _as_json(wanted)
    return False


def _as_json(value: Any) -> Any:
    return json.loads(json.dumps(_plain(value), sort_keys=True))


def _frozen(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


# ---------------------------------------------------------------------------------------------- the declarations
_DECLARED: dict[str, RunKind] = {}
_loaded = False


def declare_run_kind(declared: RunKind) -> RunKind:
    """Make a kind of run known (its config, how it resumes, its words); returns it, so a probe keeps it as a
    constant: ``CLOZE = declare_run_kind(RunKind("cloze", ...))``. Declaring a kind again replaces it."""
    _DECLARED[declared.kind] = declared
    return declared


def forget_run_kind(kind: str) -> None:
    """Undo a declaration (tests declare kinds of their own)."""
    _DECLARED.pop(kind, None)


def _load() -> None:
    # Every part's declarations, so that a run is found even when its probe's page or command has not been
    # used in this session; an optional part that is not installed cannot declare its kinds here.
    global _loaded
    if not _loaded:
        _loaded = True
        parts.load("run_kinds", skip_missing=True)


def run_kind(kind: "str | RunKind") -> RunKind | None:
    """The declaration of ``kind`` (None for a kind nothing declares, such as an old probe's)."""
    if isinstance(kind, RunKind):
        return kind
    if kind not in _DECLARED:
        _load()
    return _DECLARED.get(kind)


def declared_kinds() -> list[RunKind]:
    """Every declared kind, in the order of the parts."""
    _load()
    return list(_DECLARED.values())


def kind_string(kind: "str | RunKind") -> str:
    return str(kind)


def kind_strings(kinds: "str | RunKind | Sequence[str | RunKind]") -> list[str]:
    if isinstance(kinds, str):
        return [str(kinds)]
    return [kind_string(k) for k in kinds]


def kind_name(kind: "str | RunKind") -> str:
    """What a run of ``kind`` is, in the words of the probe that declared it ('Name cloze, prompted model');
    a kind nothing declares is shown as it is stored."""
    declared = run_kind(kind)
    return declared.name if declared is not None else kind_string(kind)


def can_resume(kind: "str | RunKind") -> bool:
    """Whether runs of ``kind`` can be continued here (its part installed, a resumer declared)."""
    declared = run_kind(kind)
    if declared is None:
        return False
    try:
        return declared.resumer() is not None
    except ImportError:
        return False
