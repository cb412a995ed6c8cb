"""The whole probe from the command line, with a tiny random model behind a real llama_cpp.server: its
forgetting curve must be flat at chance, on the original text and on the substituted one."""

import io
import json

import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

from tests.fixtures.annotation_data import add_book
from tests.fixtures.reading_books import named_story, summaries_csv
from tests.fixtures.servers import token_id
from workbench.cli import main
from workbench.models.catalog import ModelSpec, add_model
from workbench.probes.reading.asking import CHOICE_TEMPLATE, PASSAGE_TEMPLATE, RECONSTRUCT_TEMPLATE
from workbench.probes.reading.results import CURVE_COLUMNS, forgetting_slope
from workbench.probes.reading.run import ANSWER_RUN, run_questions
from workbench.project import Project
from workbench.prompt_templates import save_template

pytestmark = pytest.mark.slow
OPTIONS = 4


def cli(capsys, *args) -> str:
    capsys.readouterr()
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out


@pytest.fixture
def study(tmp_path, capsys):
    path = tmp_path / "reading.palimpsest"
    project = Project.create(path)
    books = [add_book(project, title, "Someone", named_story(seed)) for seed, title in ((0, "The Mill"), (1, "The Inn"))]
    # short prompts: the tiny model reads at most 512 tokens
    save_template(project, CHOICE_TEMPLATE, "{book}\n{options}\nAnswer:", CHOICE_TEMPLATE)
    save_template(project, RECONSTRUCT_TEMPLATE, "{false_summary}\n<summary>", RECONSTRUCT_TEMPLATE)
    save_template(project, PASSAGE_TEMPLATE, "{false_summary}\n{passage}\n<summary>", PASSAGE_TEMPLATE)
    project.close()
    for book in books:
        scenes = pd.read_csv(io.StringIO(cli(capsys, "reading", "scenes", path, "--book", book, "--words", 60,
                                             "--format", "csv")))
        assert list(scenes.columns) == ["scene", "start_char", "end_char", "words", "text"]
        csv = summaries_csv(tmp_path / f"s{book}.csv", len(scenes), tag=f"b{book}-")
        assert "summaries" in cli(capsys, "reading", "import-summaries", path, "--book", book, csv)
        names = pd.read_csv(io.StringIO(cli(capsys, "reading", "substitute", path, "--book", book, "--format", "csv")))
        assert {"Clara", "Whitby"} <= set(names["original"])
    return path, books


def test_a_tiny_random_model_forgets_nothing_because_it_never_knew(study, llama_server, capsys, tmp_path):
    path, books = study
    for variant in ("original", "substituted"):
        out = cli(capsys, "reading", "questions", path, "--book", books[0], "--every", 1, "--options", OPTIONS,
                  "--variant", variant, "--reconstruction", 3, "--seed", 5)
        assert "questions" in out
    project = Project.open(path)
    try:
        spec = add_model(project, ModelSpec(label="tiny-server", backend="openai", ref=llama_server.model,
                                            base_url=llama_server.base_url))
        # the reply is one of the option numbers, sampled; a model blind to the content scores chance
        # whichever numbers it prefers, because the true summary's place is shuffled
        digits = tuple((token_id(llama_server, str(n)), 100.0) for n in range(1, OPTIONS + 1))
        choice = {"max_tokens": 1, "logit_bias": digits, "temperature": 1.0}
        for variant in ("original", "substituted"):
            reports = run_questions(project, spec, variant=variant, context_words=12,
                                    choice_params=choice, reconstruct_params={"max_tokens": 12})
            assert [r.failed for r in reports] == [0] and reports[0].done == reports[0].total
        again = run_questions(project, spec, context_words=12, choice_params=choice,
                              reconstruct_params={"max_tokens": 12})
        assert again[0].processed == 0  # the same run continues: nothing left to ask
        extras = [json.loads(e) for (e,) in project.db.execute(
            "SELECT x.extra FROM responses x JOIN runs r ON r.id = x.run_id WHERE r.kind = ?"
            " AND json_extract(x.extra, '$.context_words') IS NOT NULL", [ANSWER_RUN]).fetchall()]
        assert extras and all(e["context_words"] <= 12 for e in extras) and any(e["truncated"] for e in extras)
        slopes = forgetting_slope(project, "tiny-server")
    finally:
        project.close()

    curve = pd.read_csv(io.StringIO(cli(capsys, "reading", "curve", path, "--model", "tiny-server",
                                        "--bins", "0,300,900", "--format", "csv")))
    assert list(curve.columns) == CURVE_COLUMNS
    assert set(curve["variant"]) == {"original", "substituted"}
    assert curve["unparsed"].sum() == 0 and curve["failed"].sum() == 0
    for variant, rows in curve.groupby("variant"):
        assert (rows["chance"] == 1 / OPTIONS).all()
        correct, asked = rows["correct"].sum(), rows["questions"].sum()
        assert asked >= 20
        low, high = proportion_confint(correct, asked, method="wilson")
        assert low <= 1 / OPTIONS <= high, (variant, correct, asked)
    for row in slopes.itertuples(index=False):
        assert pd.isna(row.slope) or row.ci_low <= 0 <= row.ci_high

    reconstruction = pd.read_csv(io.StringIO(cli(capsys, "reading", "reconstruction", path, "--model", "tiny-server",
                                                 "--format", "csv")))
    assert set(reconstruction["kind"]) == {"reconstruct", "reconstruct-passage"}
    out = tmp_path / "q.jsonl"
    assert "Wrote" in cli(capsys, "reading", "export", path, "--book", books[0], "--out", out, "--variant", "substituted")
    first = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert first["variant"] == "substituted" and "Clara" not in " ".join(first["options"])
    figure = tmp_path / "curve.png"
    cli(capsys, "chart", path, "reading-forgetting", "--out", figure, "--option", "model=tiny-server")
    assert figure.stat().st_size > 10_000 and figure.with_suffix(".csv").exists()

    # the command line sets how the answers are drawn (a scholar's own chance-level check needs sampling)
    project = Project.open(path)
    try:
        add_model(project, ModelSpec(label="tiny-cli", backend="openai", ref=llama_server.model,
                                     base_url=llama_server.base_url))
    finally:
        project.close()
    cli(capsys, "reading", "run", path, "--model", "tiny-cli", "--context-words", 12, "--temperature", 1,
        "--seed", -1, "--max-tokens", 1, "--yes")
    project = Project.open(path)
    try:
        (params,) = {p for (p,) in project.db.execute(
            "SELECT r.params FROM runs r JOIN models m ON m.id = r.model_id WHERE m.label = 'tiny-cli'").fetchall()}
    finally:
        project.close()
    choice = json.loads(params)["choice"]
    assert (choice["temperature"], choice["max_tokens"], choice["seed"]) == (1.0, 1, None)


def test_a_paid_model_is_not_asked_without_a_yes(study, capsys, monkeypatch):
    path, books = study
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # set, or the work is refused before the question
    project = Project.open(path)
    add_model(project, ModelSpec(label="api", backend="openai", ref="gpt-4o-mini", api_key_env="OPENAI_API_KEY"))
    project.close()
    capsys.readouterr()
    assert main(["reading", "summarize", str(path), "--book", str(books[0]), "--model", "api"]) == 1
    err = capsys.readouterr().err
    assert "api is a paid API" in err and "Nothing was sent" in err and "requests" in err and "--yes" in err
    cli(capsys, "reading", "questions", path, "--book", books[0], "--every", 3, "--reconstruction", 2)
    assert main(["reading", "run", str(path), "--model", "api", "--context-words", "500"]) == 1
    err = capsys.readouterr().err
    assert "api is a paid API" in err and "Nothing was sent" in err and "$" in err and "--yes" in err
    project = Project.open(path)
    try:
        runs = project.db.execute("SELECT COUNT(*) FROM runs r JOIN models m ON m.id = r.model_id"
                                  " WHERE m.label = 'api'").fetchone()[0]
    finally:
        project.close()
    assert runs == 0
