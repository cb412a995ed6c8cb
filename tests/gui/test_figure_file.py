"""Where a figure is saved: the ending of the file type chosen in the dialog when the name has none."""

from pathlib import Path

import pytest

pytest.importorskip("PySide6")
from ui.widgets.figure_file import with_figure_suffix  # noqa: E402


@pytest.mark.parametrize("typed, chosen, saved", [
    ("out/fig", "SVG (*.svg)", "out/fig.svg"),
    ("out/fig", "PNG, 300 dpi (*.png)", "out/fig.png"),
    ("out/fig", "", "out/fig.pdf"),
    ("out/fig.png", "PDF (*.pdf)", "out/fig.png"),  # an ending typed by the person wins
    ("out/fig.PDF", "SVG (*.svg)", "out/fig.PDF"),
    ("out/fig.v2", "SVG (*.svg)", "out/fig.v2.svg"),  # a dot in the name is not an ending
])
def test_a_name_gets_the_chosen_types_ending_only_when_it_has_none(typed, chosen, saved):
    assert with_figure_suffix(typed, chosen) == Path(saved)
