"""Asking where to save a publication figure: PDF, SVG or 300-dpi PNG, the ending added from the chosen
file type when the name has none."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QWidget

FIGURE_FILES = "PDF (*.pdf);;SVG (*.svg);;PNG, 300 dpi (*.png)"


def with_figure_suffix(path: str | Path, chosen_filter: str = "") -> Path:
    """``path``, ending in .pdf, .svg or .png: the chosen file type's ending where it has none of those."""
    from workbench.export.registry import FIGURE_FORMATS

    out = Path(path)
    if out.suffix.lower() not in FIGURE_FORMATS:
        suffix = next((s for s in FIGURE_FORMATS if s[1:] in chosen_filter.lower()), ".pdf")
        out = out.with_name(out.name + suffix)
    return out


def ask_figure_path(parent: QWidget, suggested: Path) -> Path | None:
    """The file the person chose for a figure (None if they cancelled)."""
    path, chosen = QFileDialog.getSaveFileName(parent, "Export the chart", str(suggested), FIGURE_FILES)
    return with_figure_suffix(path, chosen) if path else None
