"""Every registered chart is described once: the window's chart view and the exported figure are drawn from that
one description. On a project with something for every probe, each chart shown on screen (rendered offscreen) and
exported (SVG and CSV) has the same frame, titles, axis labels, legends and marks, and where it has nothing to draw
both say the same sentence. Every chart's pixels on screen are drawn by a drawing process (its figure pickles)."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.fixtures.chart_view import legend_texts, titles, wait_drawn
from tests.fixtures.every_probe import project_with_every_probe
from ui.background import BackgroundOps
from ui.widgets.chart_view import ChartView
from workbench.errors import UserError
from workbench.export.registry import charts, chosen_options, draw_figure, export_chart


def words(figure) -> dict:
    """What a figure says, whatever its size: titles, axis labels and legends, axes by axes."""
    return {"titles": titles(figure), "legends": legend_texts(figure),
            "labels": [(ax.get_xlabel(), ax.get_ylabel()) for ax in figure.axes]}


@pytest.fixture
def every_probe(project, tmp_path):
    return project, project_with_every_probe(project, tmp_path / "inputs")


def test_every_chart_on_screen_is_the_exported_figure(qtbot, every_probe, tmp_path):
    project, given = every_probe
    ops = BackgroundOps()
    view = ChartView(ops)
    qtbot.addWidget(view)
    view.resize(1000, 700)
    view.show()
    drawn, said = [], []
    for name, spec in charts().items():
        options = chosen_options(spec.options, project, given.get(name, {}))  # a page's defaults
        options.update(given.get(name, {}))
        view.show_chart(project, name, options)
        wait_drawn(qtbot, view, timeout=120_000)
        out = tmp_path / f"{name}.svg"
        if view.kind == "message":
            with pytest.raises(UserError) as refused:
                export_chart(project, name, out, **options)
            assert str(refused.value) == view.message.text(), name
            said.append(name)
            continue
        assert view.kind == name and view.image is not None and not view.image.isNull()
        assert view.shown.where == "apart", name  # its pixels drawn by a drawing process: its figure pickles
        figure, svg_csv = view.figure, export_chart(project, name, out, **options)
        exported = pd.read_csv(svg_csv[1])
        assert len(exported) == len(view.frame), name  # the CSV beside the figure holds what is on screen
        published, marks = draw_figure(spec, spec.frame(project, **options), **options)
        pd.testing.assert_frame_equal(view.frame.reset_index(drop=True),
                                      spec.frame(project, **options).reset_index(drop=True))
        assert words(figure) == words(published), name
        assert len(figure.axes) == len(published.axes), name
        assert len(view.marks) == sum(len(m) for m in marks), name
        assert out.read_text(encoding="utf-8").lstrip().startswith("<?xml")
        drawn.append(name)
    ops.join()
    # every chart but those the fixture gives nothing to draw
    assert sorted(said) == [], said
    assert len(drawn) == len(charts())
