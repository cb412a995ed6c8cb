"""The validity chart says in words when there is nothing to draw, instead of showing empty axes."""

import pandas as pd

from ui.validity.plot import ValidityPlot


def test_a_year_chart_where_every_answer_is_missing_says_so(qtbot):
    plot = ValidityPlot()
    qtbot.addWidget(plot)
    rows = [{"model": "tiny", "by": "gpt4", "groups": "decile", "group": group, "books": 58, "predicted": 0,
             "missing": 58, "missing_share": 1.0, "mae": float("nan"), "mae_ci_low": float("nan"),
             "mae_ci_high": float("nan"), "spearman_rho": float("nan"), "spearman_p": float("nan"),
             "difference_mae": float("nan"), "difference_p_value": float("nan"), "note": ""}
            for group in ("top", "bottom", "all")]
    plot.show("validity-year-groups", pd.DataFrame(rows))
    assert "No answer gave a year" in plot.message.toPlainText()
    assert not plot.marks
