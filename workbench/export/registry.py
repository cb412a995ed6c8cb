"""The one export registry: named tables (CSV) and named charts (publication figures + their CSV).

A chart is two functions: ``frame(project, **options)`` builds the pandas frame of exactly what is
plotted, and ``draw(frame, fig, **options)`` draws it with matplotlib. The GUI plots the same frame
with pyqtgraph; ``export_chart`` writes a PDF, SVG or 300-dpi PNG and, beside it, the frame as CSV.

Modules that provide charts or tables register them on import; each part names its modules as its
``exports`` (``workbench.registry``), and they are loaded on first use.

A frame with per-book rows carries ``book_id``; every CSV written here with the project beside it gets the
book's stable keys next to its title (``book_source``, ``book_external_id``: ``corpus.book_keys``), since a
title alone does not tell two books apart nor join back to published results.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import pandas as pd

from workbench import registry as parts
from workbench.errors import UserError

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from workbench.project import Project

FIGURE_FORMATS = (".pdf", ".svg", ".png")
PNG_DPI = 300


@dataclass
class TableSpec:
    name: str
    title: str
    frame: Callable[..., pd.DataFrame]
    description: str = ""


@dataclass
class ChartSpec:
    name: str
    title: str
    frame: Callable[..., pd.DataFrame]
    draw: Callable[..., None]
    description: str = ""
    size_inches: tuple[float, float] = (7.0, 4.5)
    options: dict[str, Any] = field(default_factory=dict)


_TABLES: dict[str, TableSpec] = {}
_CHARTS: dict[str, ChartSpec] = {}
_loaded = False


def register_table(spec: TableSpec) -> TableSpec:
    _TABLES[spec.name] = spec
    return spec


def register_chart(spec: ChartSpec) -> ChartSpec:
    _CHARTS[spec.name] = spec
    return spec


def _load_providers() -> None:
    global _loaded
    if _loaded:
        return
    parts.load("exports")
    _loaded = True


def charts() -> dict[str, ChartSpec]:
    _load_providers()
    return dict(_CHARTS)


def tables() -> dict[str, TableSpec]:
    _load_providers()
    return dict(_TABLES)


def chart(name: str) -> ChartSpec:
    known = charts()
    if name not in known:
        raise UserError(f"There is no chart called '{name}'. Charts: {', '.join(sorted(known)) or 'none'}.")
    return known[name]


def table(name: str) -> TableSpec:
    known = tables()
    if name not in known:
        raise UserError(f"There is no table called '{name}'. Tables: {', '.join(sorted(known)) or 'none'}.")
    return known[name]


def write_csv(frame: pd.DataFrame, path: str | Path, project: "Project | None" = None) -> Path:
    """``frame`` as CSV at ``path``; with ``project``, per-book rows get their books' keys beside the title
    (``book_keys.with_book_keys``): pass it wherever the frame can hold books."""
    from workbench.corpus.book_keys import with_book_keys

    path = Path(path)
    if project is not None:
        frame = with_book_keys(project, frame)
    frame.to_csv(path, index=False)
    return path


def export_table(project: "Project", name: str, out: str | Path, **options: Any) -> Path:
    return write_csv(table(name).frame(project, **options), out, project)


def render_figure(spec: ChartSpec, frame: pd.DataFrame, **options: Any) -> "Figure":
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    fig = Figure(figsize=spec.size_inches, layout="constrained")
    spec.draw(frame, fig, **{**spec.options, **options})
    return fig


def export_chart(project: "Project", name: str, out: str | Path, **options: Any) -> list[Path]:
    """Write the chart to ``out`` (.pdf, .svg or .png) and the CSV of what it plots beside it."""
    out = Path(out)
    if out.suffix.lower() not in FIGURE_FORMATS:
        raise UserError(f"Charts are saved as PDF, SVG or PNG; '{out.name}' has none of those endings.")
    spec = chart(name)
    frame = spec.frame(project, **options)
    if frame.empty:
        raise UserError(f"The chart '{spec.title}' has nothing to show yet: run the probe it draws first.")
    return save_figure(spec, frame, out, project=project, **options)


def save_figure(spec: ChartSpec, frame: pd.DataFrame, out: Path, *, project: "Project | None" = None,
                **options: Any) -> list[Path]:
    """The figure at ``out`` and the CSV of ``frame`` beside it (with the books' keys: pass ``project``)."""
    fig = render_figure(spec, frame, **options)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=PNG_DPI if out.suffix.lower() == ".png" else None)
    csv = out.with_suffix(".csv")
    write_csv(frame, csv, project)
    return [out, csv]
