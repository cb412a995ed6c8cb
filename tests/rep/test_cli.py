"""``palimpsest rep ...`` end to end on tiny models: sets, run, classify, validate, stats, entities, charts."""

import io
import json

import pandas as pd

from workbench.cli import main


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def csv_of(text):
    return pd.read_csv(io.StringIO(text))


def test_sets_as_csv_and_a_broken_import(project, capsys, tmp_path):
    path = project.path
    code, out, _ = run_cli(capsys, "rep", "sets", path, "--format", "csv")
    frame = csv_of(out)
    assert code == 0 and list(frame.columns[:4]) == ["demographic", "version", "role", "stem"]
    assert set(frame["demographic"]) == {"gender", "sexual_orientation", "race", "religion"}
    broken = tmp_path / "broken.toml"
    broken.write_text('demographic = "x"\n\n[labels]\nyes = ["y"\n', encoding="utf-8")
    code, _, err = run_cli(capsys, "rep", "import-set", path, broken)
    assert code == 1 and "broken.toml, line 4" in err and "Traceback" not in err
    exported = tmp_path / "gender.toml"
    assert run_cli(capsys, "rep", "export-set", path, "gender", "--out", exported)[0] == 0
    exported.write_text(exported.read_text(encoding="utf-8").replace("last winter", "last spring"), encoding="utf-8")
    code, out, _ = run_cli(capsys, "rep", "import-set", path, exported)
    assert code == 0 and "version 2" in out


def test_run_classify_validate_stats_and_charts(project, decade_models, decade_books, capsys, tmp_path):
    path = project.path
    project.close()  # the CLI opens the file itself
    for model in decade_models:
        code, out, _ = run_cli(capsys, "rep", "run", path, "--model", model, "--demographic", "gender",
                               "--demographic", "race", "--samples", 2, "--max-tokens", 8, "--seed", 5)
        assert code == 0 and "20 of 20 answered" in out
    code, out, _ = run_cli(capsys, "rep", "classify", path, "--lexical", "--format", "csv")
    assert code == 0 and csv_of(out)["labelled"].sum() == 40
    code, out, _ = run_cli(capsys, "rep", "classify", path, "--judge", "tiny-judge", "--max-tokens", 3, "--format", "csv")
    judged = csv_of(out.split("\n", 2)[2])  # two report lines, then the table
    assert code == 0 and judged.drop(columns=["model", "demographic"]).to_numpy().sum() == 40

    code, out, _ = run_cli(capsys, "rep", "stats", path, "--format", "csv")
    shares = csv_of(out)
    assert code == 0 and {"share", "ci_low", "ci_high", "n", "unparsed", "failed", "small_sample"} <= set(shares.columns)
    assert set(shares["n"]) == {2} and shares["small_sample"].all()
    code, out, _ = run_cli(capsys, "rep", "stats", path, "--table", "tests", "--judge", "tiny-judge",
                           "--format", "csv")
    assert code == 0 and {"chi-square", "kruskal-wallis"} >= set(csv_of(out)["test"])

    code, out, _ = run_cli(capsys, "rep", "validate", path, "--sample", 4, "--task", "judge check")
    assert code == 0 and "judge check (gender)" in out and "judge check (race)" in out
    code, out, _ = run_cli(capsys, "rep", "agreement", path, "--task", "judge check", "--format", "csv")
    assert code == 0  # nobody has answered yet: an empty table, not an error

    for name, option in (("rep-decade-shares", "role=gender/nurse"), ("rep-heatmap", "model=tiny-1990s")):
        code, out, _ = run_cli(capsys, "chart", path, name, "--out", tmp_path / f"{name}.png", "--option", option)
        assert code == 0 and (tmp_path / f"{name}.png").read_bytes()[:4] == b"\x89PNG"

    out_file = tmp_path / "fifties.jsonl"
    code, out, _ = run_cli(capsys, "rep", "export-finetune", path, "--tag", "decade=1950s", "--out", out_file,
                           "--chunk-words", 30)
    assert code == 0 and "examples" in out
    assert all(json.loads(line)["messages"][-1]["role"] == "assistant" for line in out_file.read_text().splitlines())

    code, out, _ = run_cli(capsys, "rep", "entities", path, "--model", "tiny-1950s", "--tag", "decade=1950s",
                           "--samples", 1, "--max-tokens", 8, "--format", "csv")
    summary = csv_of(out)
    assert code == 0 and set(summary["model"]) == {"tiny-1950s"} and "all" in set(summary["prompt"])


def test_empty_stats_say_what_they_need(project, capsys):
    from tests.fixtures.rep_data import external_model, store_rep_run
    from workbench.probes.rep.sets import get_set

    path = project.path
    code, out, _ = run_cli(capsys, "rep", "stats", path, "--table", "tests")
    assert code == 0 and "No REP completions to count yet" in out and "palimpsest rep run" in out
    external_model(project, "undated")
    store_rep_run(project, "undated", get_set(project, "gender"), {(role.key, s): " a woman" for role in get_set(project, "gender").parsed.roles for s in range(3)},
                  samples=3)
    code, out, _ = run_cli(capsys, "rep", "stats", path, "--table", "tests")
    assert code == 0 and "none of these models has a decade" in out and "--tag decade=1950s" in out
