"""What the run store hands out: a run (one row of ``runs``, its config typed) and a unit of its work."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, Generic, TypeVar

C = TypeVar("C")


@dataclass(frozen=True, order=True)
class Unit:
    """One unit of a run's work: an item, and which sample of it (``responses`` is unique on run, item, sample)."""

    item_id: int
    sample: int = 0


@dataclass(frozen=True)
class Run(Generic[C]):
    """A run as stored. ``config`` is its kind's config dataclass (``RunKind.config``), or the stored dict for a
    kind nothing declares; ``stored`` is the config exactly as stored (for the record and the methods text).
    ``model`` is the label of its model (None for a run that asks no model). ``status`` is as stored: a run
    left 'running' by a program that crashed is told apart by ``store.is_active``.

    The stored JSON (params, config, usage) is parsed when first read, once per run."""

    id: int
    kind: str
    model_id: int | None
    model: str | None
    template_id: int | None
    status: str
    total: int
    note: str
    code_version: str | None
    created_at: str | None
    started_at: str | None
    finished_at: str | None
    params_text: str = field(default="{}", repr=False, compare=False)
    config_text: str = field(default="{}", repr=False, compare=False)
    usage_text: str = field(default="{}", repr=False, compare=False)
    read_config: Callable[[dict], Any] = field(default=dict, repr=False, compare=False)

    @cached_property
    def params(self) -> dict[str, Any]:
        """The generation parameters as stored."""
        return json.loads(self.params_text or "{}")

    @cached_property
    def stored(self) -> dict[str, Any]:
        """The config exactly as stored."""
        return json.loads(self.config_text or "{}")

    @cached_property
    def config(self) -> C:
        """The config as its kind's dataclass (the stored dict for a kind nothing declares)."""
        return self.read_config(self.stored)

    @cached_property
    def usage(self) -> dict[str, Any]:
        """Tokens, model calls and cached answers, as the job runner summed them."""
        return json.loads(self.usage_text or "{}")
