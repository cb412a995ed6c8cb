"""The exported forgetting-curve figure: both variants' points stay visible where their values are equal."""

import pandas as pd
from matplotlib.figure import Figure

from workbench.probes.reading.charts import draw_curve


def test_equal_values_of_the_two_variants_are_drawn_side_by_side_and_whole_at_zero():
    rows = [{"model": "m", "variant": variant, "bin_low": low, "bin": f"{low}+", "accuracy": accuracy,
             "ci_low": 0.0, "ci_high": 0.4, "chance": 1 / 6}
            for variant in ("original", "substituted") for low, accuracy in ((0, 0.0), (1000, 0.25))]
    figure = Figure()
    draw_curve(pd.DataFrame(rows), figure)
    ax = figure.axes[0]
    points = {bars.get_label(): list(zip(bars.lines[0].get_xdata(), bars.lines[0].get_ydata()))
              for bars in ax.containers}
    original, substituted = points["original names"], points["substituted names"]
    assert [y for _, y in original] == [y for _, y in substituted] == [0.0, 0.25]
    assert all(a[0] < b[0] < a[0] + 0.5 for a, b in zip(original, substituted))  # apart, within their bin
    assert ax.get_ylim()[0] < 0  # a marker at 0 is not cut in half by the axis
