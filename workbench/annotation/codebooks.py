"""Codebooks: the instructions annotators read, shipped as Markdown in the repository's ``annotations/``.

A task keeps its own copy of its codebook (the project file stands alone and a later edit of the shipped
text does not change what past annotators read). The label codebook is a template: ``{{task}}`` and
``{{labels}}`` are filled in from the task.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from workbench.errors import UserError

CODEBOOK_DIR = Path(__file__).resolve().parents[2] / "annotations"

SHIPPED = {
    "narrative-time": "narrative-time.md",
    "summary-validity": "summary-validity.md",
    "label": "label.md",
    "name-cloze": "name-cloze.md",
}


def shipped_codebook(kind: str) -> str:
    """The Markdown text shipped for a task kind."""
    if kind not in SHIPPED:
        raise UserError(f"There is no codebook for tasks of kind '{kind}'. Kinds: {', '.join(SHIPPED)}.")
    path = CODEBOOK_DIR / SHIPPED[kind]
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"The codebook {path} could not be read ({exc}). Reinstall Palimpsest.") from exc


def fill_label_template(template: str, task_name: str, labels: Sequence[str]) -> str:
    listing = "\n".join(f"{i}. **{label}**" for i, label in enumerate(labels, start=1))
    return template.replace("{{task}}", task_name).replace("{{labels}}", listing)


def default_codebook(kind: str, task_name: str = "", labels: Sequence[str] = ()) -> str:
    text = shipped_codebook(kind)
    return fill_label_template(text, task_name, labels) if kind == "label" else text


def read_codebook_file(path: str | Path) -> str:
    """A codebook the user wrote (Markdown or plain text)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise UserError(f"{path.name} is not UTF-8 text. Save the codebook as UTF-8 Markdown or plain text.") from None
    except OSError as exc:
        raise UserError(f"Could not read the codebook {path}: {exc.strerror or exc}.") from None
    if not text.strip():
        raise UserError(f"The codebook {path.name} is empty.")
    return text
