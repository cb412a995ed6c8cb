"""Paid or free, visibly: which models are marked free, and a known paid service is not marked free by accident."""

from __future__ import annotations

import io
import json

import pytest

from workbench.cli import main
from workbench.errors import UserError
from workbench.models import catalog, prices
from workbench.models.catalog import FreeOnPaidHost, ModelSpec


@pytest.mark.parametrize("base_url", [None, "https://api.openai.com/v1", "https://api.anthropic.com/v1/",
                                      "https://generativelanguage.googleapis.com/v1beta/openai",
                                      "https://api.mistral.ai/v1", "https://eu.api.openai.com/v1"])
def test_marking_a_model_on_a_paid_service_free_needs_a_confirmation(project, base_url):
    spec = ModelSpec(label="paid", backend="openai", ref="gpt-4o-mini", base_url=base_url, params={"free": True})
    with pytest.raises(FreeOnPaidHost) as caught:
        catalog.add_model(project, spec)
    assert "paid service" in str(caught.value)
    assert catalog.list_models(project) == []
    added = catalog.add_model(project, spec, confirm_free=True)
    assert prices.costs_nothing(added)


def test_a_server_of_ones_own_is_marked_free_without_a_question_and_editing_does_not_ask_again(project):
    catalog.add_model(project, ModelSpec(label="here", backend="openai", ref="tiny", base_url="http://127.0.0.1:9/v1",
                                          params={"free": True}))
    catalog.add_model(project, ModelSpec(label="gpt", backend="openai", ref="gpt-4o-mini"))
    with pytest.raises(FreeOnPaidHost):
        catalog.update_model(project, "gpt", params={"free": True})
    catalog.update_model(project, "gpt", params={"free": True}, confirm_free=True)
    catalog.update_model(project, "gpt", tags={"decade": "2020s"})  # already confirmed: no second question
    frame = catalog.models_frame(project).set_index("label")
    assert frame.loc["here", "costs"] == "marked free" and frame.loc["gpt", "costs"] == "marked free"


def test_the_models_list_says_which_are_paid_free_or_local(project, tiny_causal_dir):
    catalog.add_model(project, ModelSpec(label="api", backend="openai", ref="gpt-4o-mini"))
    catalog.add_model(project, ModelSpec(label="mine", backend="openai", ref="tiny", base_url="http://127.0.0.1:9/v1",
                                          params={"free": True, "concurrency": 3}))
    catalog.add_model(project, ModelSpec(label="local", backend="hf", ref=str(tiny_causal_dir)))
    frame = catalog.models_frame(project).set_index("label")
    assert frame["costs"].to_dict() == {"api": "paid", "mine": "marked free", "local": "free (this computer)"}
    assert frame.loc["api", "requests_at_once"] == catalog.DEFAULT_CONCURRENCY
    assert frame.loc["mine", "requests_at_once"] == 3
    assert catalog.choice_text(catalog.get_model(project, "api")) == "api  (API server, paid)"


def test_the_command_line_refuses_without_a_terminal_and_takes_yes(project, capsys, monkeypatch):
    path = str(project.path)
    project.close()
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    argv = ["model", "add", path, "--label", "gpt", "--backend", "openai", "--ref", "gpt-4o-mini",
            "--param", "free=true"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "api.openai.com is a paid service" in err and "--yes" in err
    assert main([*argv, "--yes"]) == 0
    capsys.readouterr()
    assert main(["model", "list", path, "--format", "json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["costs"] == "marked free"


def test_requests_at_once_is_a_model_setting_checked_and_given_to_the_server_backend(project, capsys):
    path = str(project.path)
    project.close()
    assert main(["model", "add", path, "--label", "lab", "--backend", "openai", "--ref", "tiny",
                 "--base-url", "http://127.0.0.1:9/v1", "--concurrency", "32"]) == 0
    assert main(["model", "edit", path, "lab", "--concurrency", "0"]) == 1
    assert "from 1 to 256" in capsys.readouterr().err
    from workbench.project import Project

    with Project.open(path) as reopened:
        spec = catalog.get_model(reopened, "lab")
        assert spec.concurrency == 32
        with catalog.open_backend(spec) as backend:
            assert backend.concurrency == 32
    with Project.open(path) as reopened, pytest.raises(UserError):
        catalog.add_model(reopened, ModelSpec(label="x", backend="openai", ref="t", base_url="http://127.0.0.1:9/v1",
                                               params={"concurrency": "many"}))
