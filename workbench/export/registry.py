"""The one export registry: named tables (CSV) and named charts (publication figures + their CSV).

A chart is described once (``ChartSpec``): ``frame(project, **options)`` builds the pandas frame of exactly
what is plotted, and ``draw(frame, fig, **options)`` draws it with matplotlib and returns its ``Marks``: the
points (or boxes) that stand for something, with the text shown when the pointer is over one and what a click
on it opens (a book, a passage, a group). Its ``options`` say, as data, which choices it offers (a model, a
tag, a number, a flag) and which values each may take, its ``page`` where the window shows it. Two general
renderers draw every chart from that one description: ``export_chart`` / ``save_figure`` write a PDF, SVG or
300-dpi PNG and, beside it, the frame as CSV; the window's chart view (``ui.widgets.chart_view``) renders the
same figure at its own size on a worker and answers the pointer from the marks.

Modules that provide charts or tables register them on import; each part names its modules as its
``exports`` (``workbench.parts``), and they are loaded on first use.

A frame with per-book rows carries ``book_id``; every CSV written here with the project beside it gets the
book's stable keys next to its title (``book_source``, ``book_external_id``: ``corpus.book_keys``), since a
title alone does not tell two books apart nor join back to published results.
"""

from __future__ import annotations

import gc
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import pandas as pd

from workbench import parts
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


CHOICE, NUMBER, FLAG = "choice", "number", "flag"


@dataclass(frozen=True)
class ChartOption:
    """One choice a chart offers: a keyword of its ``frame`` (and ``draw``), as data. A page builds its control
    from it (a list for ``CHOICE``, a whole number for ``NUMBER``, a tick box for ``FLAG``); the command line
    takes it as ``--option name=value``.

    ``choices(project, chosen)`` lists the (text, value) pairs offered, given the options chosen so far (the
    second model of a comparison, say, or data a page has read already: see ``ChartView``); ``default`` is a
    value or a function of the same two, None meaning the first choice. ``matters(frame)`` says whether the
    option changes the chart drawn from ``frame`` (a page greys the control out when it does not), and
    ``remember_as`` is the name pages keep the choice under, so that switching charts keeps it (a
    comparison's ``model_a`` is the ``model`` of the others)."""

    name: str
    label: str
    kind: str = CHOICE
    choices: Callable[[Any, dict[str, Any]], list[tuple[str, Any]]] | None = None
    default: Any = None
    tooltip: str = ""
    low: int = 0
    high: int = 0
    suffix: str = ""
    matters: Callable[[pd.DataFrame], bool] | None = None
    remember_as: str = ""

    @property
    def key(self) -> str:
        return self.remember_as or self.name

    def offered(self, project: Any, chosen: dict[str, Any]) -> list[tuple[str, Any]]:
        return list(self.choices(project, chosen)) if self.choices is not None else []

    def default_for(self, project: Any, chosen: dict[str, Any], offered: list[tuple[str, Any]] | None = None) -> Any:
        value = self.default(project, chosen) if callable(self.default) else self.default
        if value is None and self.kind == CHOICE:
            offered = self.offered(project, chosen) if offered is None else offered
            value = offered[0][1] if offered else None
        return value


def resolve_options(options: tuple[ChartOption, ...], project: Any, wanted: dict[str, Any],
                    context: dict[str, Any] | None = None) -> list[tuple[ChartOption, list[tuple[str, Any]], Any]]:
    """Each option with the choices it offers and the value it takes: the one ``wanted`` (by option name, or by
    the name it is remembered under) where offered, else its default, else its first choice. Each option sees
    ``context`` (a page's own choices, data it has read) and the values of the options before it."""
    chosen = dict(context or {})
    resolved = []
    for option in options:
        value = wanted.get(option.name, wanted.get(option.key))
        offered: list[tuple[str, Any]] = []
        if option.kind == CHOICE:
            offered = option.offered(project, chosen) if project is not None else []
            values = [v for _, v in offered]
            if value not in values:
                value = option.default_for(project, chosen, offered) if project is not None else None
                if value not in values:
                    value = values[0] if values else None
        elif value is None:
            value = option.default_for(project, chosen)
        chosen[option.name] = value
        resolved.append((option, offered, value))
    return resolved


def chosen_options(options: tuple[ChartOption, ...], project: Any, wanted: dict[str, Any],
                   context: dict[str, Any] | None = None) -> dict[str, Any]:
    """The values ``resolve_options`` gives, by option name."""
    return {option.name: value for option, _, value in resolve_options(options, project, wanted, context)}


@dataclass
class Marks:
    """What of a drawn chart answers the pointer on screen: mark ``i`` sits at ``x[i]``, ``y[i]`` in the data
    coordinates of the axes ``ax``; with ``width`` and ``height`` it is the box from there to ``x + width``,
    ``y + height`` (a bar, a heatmap cell), else a point. ``text(i)`` is what hovering shows (plain text, its
    first line the title: written only when asked, since a chart of 57,000 passages must not write 57,000
    texts first) and ``target(i)`` what a click hands the page (a dict naming a book, a passage, a group;
    None: nothing to open)."""

    ax: Any
    x: Any
    y: Any
    text: Callable[[int], str]
    target: Callable[[int], dict[str, Any] | None] | None = None
    width: Any = None
    height: Any = None

    def __len__(self) -> int:
        return len(self.x)

    @property
    def boxes(self) -> bool:
        return self.width is not None and self.height is not None


def hover_text(title: Any, *lines: str) -> str:
    """A mark's text: its title, then the lines that are not empty."""
    return "\n".join([str(title), *(line for line in lines if line)])


@dataclass
class ChartSpec:
    """One chart, described once: what is plotted (``frame``), how (``draw``, returning its ``Marks`` or
    None), the choices it offers (``options``), the page of the window that shows it (``page``: the Charts
    page is 'charts'; '' for a chart only exported), a sentence shown with it on screen
    (``caption(project, frame, **options)``) and why it has nothing to draw (``empty(project, **options)``)."""

    name: str
    title: str
    frame: Callable[..., pd.DataFrame]
    draw: Callable[..., "list[Marks] | None"]
    description: str = ""
    size_inches: tuple[float, float] = (7.0, 4.5)
    options: tuple[ChartOption, ...] = ()
    page: str = ""
    caption: Callable[..., str] | None = None
    empty: Callable[..., str] | None = None

    @property
    def short_title(self) -> str:
        """The title without its probe ('Name cloze: per-book accuracy' -> 'Per-book accuracy')."""
        text = self.title.split(": ", 1)[-1]
        return text[:1].upper() + text[1:]

    def option(self, name: str) -> ChartOption | None:
        return next((o for o in self.options if o.name == name), None)

    def nothing_to_draw(self, project: Any, **options: Any) -> str:
        """Why the frame for ``options`` is empty, and what to do."""
        if self.empty is not None:
            return self.empty(project, **options)
        return f"The chart '{self.title}' has nothing to show yet: run the probe it draws first."


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


def charts_for(page: str) -> list[ChartSpec]:
    """The charts a page of the window shows, in the order they were registered."""
    return [spec for spec in charts().values() if spec.page == page]


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
    # written beside it, then put in its place: the file is never seen half written
    partial = path.with_name(f".{path.name}.partial")
    try:
        frame.to_csv(partial, index=False)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return path


def export_table(project: "Project", name: str, out: str | Path, **options: Any) -> Path:
    return write_csv(table(name).frame(project, **options), out, project)


def draw_figure(spec: ChartSpec, frame: pd.DataFrame, **options: Any) -> tuple["Figure", list[Marks]]:
    """A new figure of the chart (at its publication size) and its marks: what every renderer draws. A chart
    that has nothing to draw raises ``UserError`` saying why."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=spec.size_inches, layout="constrained")
    marks = spec.draw(frame, fig, **options)
    return fig, list(marks or [])


def dismantle_figure(figure: "Figure | None") -> int:
    """Break the reference cycles of a figure no longer shown, so that it is freed at once, here, by reference
    counting. A matplotlib figure is some 10,000 objects tied in cycles (each artist knows its axes and figure,
    each axis its locators, which know the axis ...): left to the cycle collector, which in the window runs on
    its thread (``ui.main_thread_gc``), a few replaced charts froze it for 100-300 ms at a time.
    Clears the attributes of the figure's own artists, transforms, markers and callback lists (no other figure
    shares them; paths and fonts, which figures share, are left alone); returns how many. Call it on a worker, on a figure nothing else will use."""
    if figure is None:
        return 0
    from matplotlib.artist import Artist
    from matplotlib.cbook import CallbackRegistry
    from matplotlib.container import Container
    from matplotlib.markers import MarkerStyle
    from matplotlib.transforms import TransformNode

    own = (Artist, TransformNode, CallbackRegistry, Container, MarkerStyle)  # each figure's own (not paths, fonts)

    containers = (dict, list, tuple, set, frozenset)
    seen: set[int] = set()
    parts = []
    stack: list[Any] = [figure]
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, own):
            parts.append(obj)
        elif not isinstance(obj, containers) and not type(obj).__module__.startswith("matplotlib"):
            continue  # numbers, texts, arrays, functions, modules: nothing of the figure's own behind them
        stack.extend(gc.get_referents(obj))
    for part in parts:
        part.__dict__.clear()
    return len(parts)


def render_figure(spec: ChartSpec, frame: pd.DataFrame, **options: Any) -> "Figure":
    return draw_figure(spec, frame, **options)[0]


def export_chart(project: "Project", name: str, out: str | Path, **options: Any) -> list[Path]:
    """Write the chart to ``out`` (.pdf, .svg or .png) and the CSV of what it plots beside it."""
    out = _figure_path(out)
    spec = chart(name)
    frame = spec.frame(project, **options)
    if frame.empty:
        raise UserError(spec.nothing_to_draw(project, **options))
    return save_figure(spec, frame, out, project=project, **options)


def _figure_path(out: str | Path) -> Path:
    out = Path(out)
    if out.suffix.lower() not in FIGURE_FORMATS:
        raise UserError(f"Charts are saved as PDF, SVG or PNG; '{out.name}' has none of those endings.")
    return out


def save_figure(spec: ChartSpec, frame: pd.DataFrame, out: Path, *, project: "Project | None" = None,
                **options: Any) -> list[Path]:
    """The figure at ``out`` and the CSV of ``frame`` beside it (with the books' keys: pass ``project``)."""
    out = _figure_path(out)
    fig = render_figure(spec, frame, **options)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=PNG_DPI if out.suffix.lower() == ".png" else None)
    dismantle_figure(fig)
    csv = out.with_suffix(".csv")
    write_csv(frame, csv, project)
    return [out, csv]
