"""REP charts: frames of what is plotted, and publication files that are valid PDF, SVG and PNG."""

import random
import xml.etree.ElementTree as ET

import pandas as pd
import pytest

from tests.fixtures.rep_data import external_model, store_judge_run, store_rep_run
from workbench.errors import UserError
from workbench.export.registry import chart, charts, export_chart, tables
from workbench.probes.rep.charts import decade_shares_frame, heatmap_frame, resolve_role, trends_frame
from workbench.probes.rep.classify import classified_responses
from workbench.probes.rep.sets import get_set

WORDS = [" a woman", " a man", " the neighbour", " Mx. Lee"]


@pytest.fixture
def three_decades(project):
    gender, race = get_set(project, "gender"), get_set(project, "race")
    rng = random.Random(5)
    for decade, weights in (("1950s", [1, 8, 2, 0]), ("1980s", [3, 6, 2, 0]), ("2010s", [5, 4, 1, 1])):
        external_model(project, f"m{decade}", decade=decade, **{"fine-tuned": ""})
        completions = {(role.key, s): rng.choices(WORDS, weights)[0] for role in gender.parsed.roles for s in range(20)}
        store_rep_run(project, f"m{decade}", gender, completions, samples=20)
        store_rep_run(project, f"m{decade}", race, {("surgeon", s): " White." for s in range(20)}, samples=20)
    return project


def test_rep_charts_and_tables_are_registered():
    assert {"rep-decade-shares", "rep-trends", "rep-heatmap", "rep-spread"} <= set(charts())
    assert {"rep-shares", "rep-tests", "rep-trends", "rep-spread"} <= set(tables())


def test_decade_shares_frame_sums_to_one_per_decade(three_decades):
    frame = decade_shares_frame(three_decades, role="gender/ceo")
    assert list(frame["decade"].unique()) == ["1950s", "1980s", "2010s"]
    assert frame.groupby("decade")["share"].sum().tolist() == pytest.approx([1.0, 1.0, 1.0])
    assert set(frame["n"]) == {20} and "unparsed" not in set(frame["category"])
    with pytest.raises(UserError, match="has no results"):
        decade_shares_frame(three_decades, role="gender/plumber")


def test_unparsed_judge_answers_appear_in_the_bars(three_decades):
    external_model(three_decades, "judge")
    gender = get_set(three_decades, "gender")
    frame = classified_responses(three_decades, demographics=["gender"])
    answers = {rid: ("man" if i % 2 else "it depends") for i, rid in enumerate(frame["response_id"])}
    store_judge_run(three_decades, "judge", gender, answers)
    shares = decade_shares_frame(three_decades, role="ceo", classifier="judge:judge")
    unparsed = shares[shares["category"] == "unparsed"]
    assert len(unparsed) == 3 and unparsed["share"].tolist() == pytest.approx([0.5, 0.5, 0.5])
    assert shares.groupby("decade")["share"].sum().tolist() == pytest.approx([1.0, 1.0, 1.0])


def test_trend_frame_has_points_and_a_fitted_curve(three_decades):
    frame = trends_frame(three_decades, role="ceo", method="ols")
    observed, fit = frame[frame["kind"] == "observed"], frame[frame["kind"] == "fit"]
    assert len(observed) == 3 * 4 and set(fit["category"]) >= {"woman", "man"}
    assert fit["band_low"].isna().all()  # three decades and least squares: an exact fit, no band
    binomial = trends_frame(three_decades, role="ceo")
    woman = binomial[(binomial["kind"] == "fit") & (binomial["category"] == "woman")]
    assert (woman["band_low"] <= woman["fit"]).all() and woman["band_high"].notna().all()


def test_role_names_resolve_or_ask_for_the_demographic(three_decades):
    counts = pd.DataFrame({"demographic": ["gender", "race", "race"], "role": ["nurse", "nurse", "surgeon"]})
    assert resolve_role(counts, "surgeon") == ("race", "surgeon")
    assert resolve_role(counts, None) == ("gender", "nurse")
    with pytest.raises(UserError, match="ambiguous"):
        resolve_role(counts, "nurse")


@pytest.mark.parametrize("name, options", [
    ("rep-decade-shares", {"role": "nurse"}),
    ("rep-trends", {"role": "ceo"}),
    ("rep-heatmap", {"model": "m1980s"}),
    ("rep-spread", {}),
])
def test_exported_files_are_valid(three_decades, tmp_path, name, options):
    pdf, csv = export_chart(three_decades, name, tmp_path / f"{name}.pdf", **options)
    assert pdf.read_bytes()[:5] == b"%PDF-"
    svg, _ = export_chart(three_decades, name, tmp_path / f"{name}.svg", **options)
    assert ET.parse(svg).getroot().tag.endswith("svg")
    png, _ = export_chart(three_decades, name, tmp_path / f"{name}.png", **options)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    written = pd.read_csv(csv)
    assert len(written) == len(chart(name).frame(three_decades, **options)) > 0


def test_heatmap_covers_every_demographic_of_the_model(three_decades):
    frame = heatmap_frame(three_decades, model="m2010s")
    assert set(frame["demographic"]) == {"gender", "race"} and set(frame["model"]) == {"m2010s"}
    surgeon = frame[(frame["role"] == "surgeon") & (frame["category"] == "White")].iloc[0]
    assert surgeon["share"] == 1.0
    with pytest.raises(UserError, match="no REP results"):
        heatmap_frame(three_decades, model="nobody")


def test_charts_without_results_say_so(project, tmp_path):
    with pytest.raises(UserError, match="nothing to show"):
        export_chart(project, "rep-decade-shares", tmp_path / "x.png")


def test_heatmap_rows_add_up_with_the_judges_unparsed_answers_as_their_own_column(three_decades):
    external_model(three_decades, "judge")
    gender = get_set(three_decades, "gender")
    frame = classified_responses(three_decades, demographics=["gender"])
    answers = {rid: ("man" if i % 4 else "it depends") for i, rid in enumerate(frame["response_id"])}
    store_judge_run(three_decades, "judge", gender, answers)
    judged = heatmap_frame(three_decades, model="m1950s", classifier="judge:judge")
    gender_rows = judged[judged["demographic"] == "gender"]
    assert gender_rows.groupby("role")["share"].sum().tolist() == pytest.approx([1.0] * gender_rows["role"].nunique())
    assert (gender_rows["category"] == "unparsed").sum() == gender_rows["role"].nunique()
    assert gender_rows.loc[gender_rows["category"] == "unparsed", "count"].sum() > 0
    assert list(dict.fromkeys(gender_rows["role"])) == list(dict.fromkeys(  # the roles keep their order
        heatmap_frame(three_decades, model="m1950s")["role"]))[:gender_rows["role"].nunique()]
    assert "unparsed" not in set(heatmap_frame(three_decades, model="m1950s")["category"])  # word lists: none
