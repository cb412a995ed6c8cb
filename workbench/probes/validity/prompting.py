"""The prompts of the two tasks: shipped templates (``resources/prompts/validity-*.txt``), editable and
versioned like every template; each holds ``{passage}`` where the passage goes."""

from __future__ import annotations

from workbench.probes.validity import NARRATIVE_TIME, TASK_NAMES, YEAR
from workbench.probes.validity.kinds import RUN_KINDS
from workbench.prompt_templates import Template, register_kind

#: task -> the shipped template's name (its kind is the task's run kind)
DEFAULT_TEMPLATES = {YEAR: "validity-year", NARRATIVE_TIME: "validity-narrative-time"}
#: task -> the longest answer asked for, in tokens (a year is one or two tokens, a duration a few)
DEFAULT_MAX_TOKENS = {YEAR: 12, NARRATIVE_TIME: 16}

for _task, _kind in RUN_KINDS.items():
    register_kind(_kind, required=["passage"], allowed=["passage"], description=f"{TASK_NAMES[_task]} prompts")


def task_prompt(template: Template, passage: str) -> str:
    return template.render(passage=passage)
