"""The validity chart says in words when there is nothing to draw, instead of showing empty axes."""

import pandas as pd

from tests.fixtures.chart_view import wait_drawn
from ui.background import BackgroundOps
from ui.widgets.chart_view import ChartView


def test_a_year_chart_where_every_answer_is_missing_says_so(qtbot):
    ops = BackgroundOps()
    plot = ChartView(ops)
    qtbot.addWidget(plot)
    rows = [{"model": "tiny", "by": "gpt4", "groups": "decile", "group": group, "books": 58, "predicted": 0,
             "missing": 58, "missing_share": 1.0, "mae": float("nan"), "mae_ci_low": float("nan"),
             "mae_ci_high": float("nan"), "spearman_rho": float("nan"), "spearman_p": float("nan"),
             "difference_mae": float("nan"), "difference_p_value": float("nan"), "note": ""}
            for group in ("top", "bottom", "all")]
    plot.show_chart(None, "validity-year-groups", {}, frame=pd.DataFrame(rows))
    wait_drawn(qtbot, plot)
    assert plot.kind == "message" and "No answer gave a year" in plot.message.text()
    assert not plot.marks
    ops.join()
