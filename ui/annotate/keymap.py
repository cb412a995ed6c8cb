"""The session's keys, as a plain list (like Anki's reviewer): key -> action, per task kind.

Keys with Ctrl (and Enter, F1, Esc) work everywhere, also while typing a duration; single letters and
digits work on the choice screens, where nothing is typed.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.annotation.tasks import LABEL, NAME_CLOZE, NARRATIVE_TIME, SUMMARY_VALIDITY

CHOICE_KINDS = frozenset({SUMMARY_VALIDITY, LABEL})
ALL_KINDS = frozenset({NARRATIVE_TIME, SUMMARY_VALIDITY, LABEL, NAME_CLOZE})


@dataclass(frozen=True)
class Binding:
    key: str  # a QKeySequence string
    action: str
    description: str
    kinds: frozenset[str] = ALL_KINDS


KEYMAP: list[Binding] = [
    Binding("Return", "answer", "save and next"),
    Binding("Enter", "answer", "save and next"),
    *[Binding(str(n), f"choose-{n}", f"choose summary {n}", frozenset({SUMMARY_VALIDITY})) for n in (1, 2)],
    *[Binding(str(n), f"choose-{n}", f"choose label {n}", frozenset({LABEL})) for n in range(1, 10)],
    Binding("Ctrl+D", "dont-know", "don't know", frozenset({NAME_CLOZE})),
    Binding("Ctrl+Z", "undo", "undo the last answer"),
    Binding("Ctrl+S", "skip", "skip (skipped items come back at the end)"),
    Binding("S", "skip", "skip", CHOICE_KINDS),
    Binding("Ctrl+F", "flag", "flag with a comment"),
    Binding("F", "flag", "flag with a comment", CHOICE_KINDS),
    Binding("F1", "codebook", "codebook"),
    Binding("?", "codebook", "codebook", CHOICE_KINDS),
    Binding("Escape", "escape", "close the flag box, or leave (all is saved)"),
]


def bindings_for(kind: str) -> list[Binding]:
    return [b for b in KEYMAP if kind in b.kinds]


def keymap_text(kind: str, choices: int = 9) -> str:
    """The help strip under the session: 'Enter  save and next   ·   Ctrl+Z  undo ...'."""
    seen: dict[str, list[str]] = {}
    descriptions: dict[str, str] = {}
    for binding in bindings_for(kind):
        action = "choose" if binding.action.startswith("choose-") else binding.action
        if binding.key == "Enter" or (action == "choose" and int(binding.key) > choices):
            continue  # the keypad Enter; "Return" already stands for it
        keys = seen.setdefault(action, [])
        keys.append(binding.key.replace("Return", "Enter"))
        descriptions.setdefault(action, binding.description)
    if "choose" in seen:
        digits = seen["choose"]
        seen["choose"] = [f"{digits[0]}–{digits[-1]}"] if len(digits) > 2 else digits
        descriptions["choose"] = "choose a summary" if kind == SUMMARY_VALIDITY else "choose a label"
    return "   ·   ".join(f"{' / '.join(keys)}  {descriptions[action]}" for action, keys in seen.items())
