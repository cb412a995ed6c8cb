"""Colours of the interactive charts: the same as the publication figures (``group_colours`` of the chart
module: tab10, viridis for more than ten groups, grey for books without a group)."""

from __future__ import annotations

from PySide6.QtGui import QColor

from workbench.probes.cloze.charts import INTERVAL_GREY, NAMED_BAND_COLOUR, group_colours

SINGLE_COLOUR = "#1f77b4"
BAR_COLOUR = "#8c8c8c"
WHISKER_COLOUR = "#7f7f7f"
__all__ = ["BAR_COLOUR", "INTERVAL_GREY", "NAMED_BAND_COLOUR", "SINGLE_COLOUR", "WHISKER_COLOUR", "group_colours",
           "translucent"]


def translucent(colour: str, alpha: float) -> QColor:
    """``colour`` with opacity ``alpha`` (0-1), as the publication figure draws crowded points and intervals."""
    result = QColor(colour)
    result.setAlphaF(alpha)
    return result
