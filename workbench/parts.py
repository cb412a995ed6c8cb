"""The one list of Palimpsest's parts, and what each part brings.

A part is a package of the core: the project file, the library, the models, annotation, the job runner,
the exports, and each probe. Its ``__init__.py`` declares ``PART = Part(...)``, naming by dotted path the
modules that bring

- ``commands``: ``palimpsest`` subcommands (a module with ``register(subparsers)``);
- ``exports``: tables and charts (modules that call ``export.registry.register_table/register_chart``
  when imported);
- ``run_kinds``: its kinds of run (modules that call ``workbench.runs.declare_run_kind`` when imported: each
  kind's string, typed config, how its runs are continued, its words for the Jobs page and the methods text);
- ``methods``: its paragraph and facts for the methods text (modules that call
  ``export.methods.register_methods`` when imported);
- ``answer_marks``: how annotators' answers of an annotation kind it owns are marked right or wrong (modules
  that call ``annotation.agreement.register_answer_marks`` when imported: the name cloze marks typed names with
  its scorer, so that annotation's agreement table can compare annotators without importing the probe);
- ``evidence``: its evidence of exposure for the exposure report (modules that call
  ``export.evidence.register_evidence`` when imported);
- ``pages``: the GUI pages that show it, as ``"ui.module:Class"`` (``ui/`` reads them; the core never
  imports them);
- ``migrations``: the module whose ``MIGRATIONS`` (a ``workbench.project.schema.MigrationSet``) makes and
  changes the part's own tables; the project applies the platform's set, then each part's in ``PARTS`` order.

Everything is named, not imported, so that reading the list is cheap and each kind of thing is loaded
only when it is first needed. ``PARTS`` gives the order: the GUI's navigation and ``palimpsest --help``.

Adding a probe is one folder in ``workbench/probes/`` (its tables in its own migrations), one in ``ui/``,
and one line here.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

#: the packages that declare a ``PART``, in the order the app shows them
PARTS: list[str] = [
    "workbench.project",
    "workbench.corpus",
    "workbench.models",
    "workbench.probes.cloze",
    "workbench.summaries",
    "workbench.annotation",
    "workbench.jobs",
    "workbench.probes.rep",
    "workbench.probes.reading",
    "workbench.probes.leakage",
    "workbench.probes.continuation",
    "workbench.probes.validity",
    "workbench.export",
]


@dataclass(frozen=True)
class PageSpec:
    """A page of the main window: its key (for settings and tests), its title and ``"ui.module:Class"``."""

    key: str
    title: str
    widget: str


@dataclass(frozen=True)
class Part:
    name: str
    commands: tuple[str, ...] = ()
    exports: tuple[str, ...] = ()
    run_kinds: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()
    evidence: tuple[str, ...] = ()
    answer_marks: tuple[str, ...] = ()
    pages: tuple[PageSpec, ...] = ()
    migrations: str = ""


def parts() -> list[Part]:
    return [importlib.import_module(name).PART for name in PARTS]


def modules(kind: str) -> list[str]:
    """Every module of ``kind`` ('commands', 'exports', 'run_kinds', 'methods', 'evidence',
    'answer_marks'), in part order."""
    return [module for part in parts() for module in getattr(part, kind)]


def load(kind: str, *, skip_missing: bool = False) -> list[object]:
    """Import every module of ``kind`` (so that they register what they bring); returns the modules.

    ``skip_missing`` passes over a module that cannot be imported because an optional part of the
    install (say, the local-model extras) is absent."""
    loaded = []
    for name in modules(kind):
        try:
            loaded.append(importlib.import_module(name))
        except ImportError:
            if not skip_missing:
                raise
    return loaded


def pages() -> list[PageSpec]:
    return [page for part in parts() for page in part.pages]
