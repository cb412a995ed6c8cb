"""A server address holding a user name and password (or a key in its query) is refused, and never repeated:
not in the message, whatever the spelling of its scheme (``HTTP://``), and not for an address that is not
a web address at all."""

from __future__ import annotations

import pytest

from workbench.cli import main
from workbench.errors import UserError
from workbench.models.catalog import ModelSpec, add_model

PASSWORD = "Tr0ub4dor-secret"


@pytest.mark.parametrize("address", [
    f"HTTP://reader:{PASSWORD}@127.0.0.1:8000/v1",
    f"Https://reader:{PASSWORD}@example.org/v1",
    f"http://reader:{PASSWORD}@127.0.0.1:8000/v1",
    f"ftp://reader:{PASSWORD}@example.org/v1",
    f"reader:{PASSWORD}@example.org/v1",
    f"https://example.org/v1?api_key={PASSWORD}",
    f"HTTPS://example.org/v1?token={PASSWORD}",
])
def test_an_address_with_a_password_is_refused_without_repeating_it(project, address):
    with pytest.raises(UserError) as caught:
        add_model(project, ModelSpec(label="api", backend="openai", ref="gpt-test", base_url=address))
    assert PASSWORD not in str(caught.value)
    assert project.db.execute("SELECT COUNT(*) FROM models").fetchone()[0] == 0


def test_an_uppercase_scheme_is_a_web_address(project):
    spec = add_model(project, ModelSpec(label="api", backend="openai", ref="tiny", base_url="HTTP://127.0.0.1:9/v1"))
    assert spec.base_url.lower() == "http://127.0.0.1:9/v1"


def test_model_add_and_edit_on_the_command_line_never_echo_the_password(project, capsys):
    path = str(project.path)
    project.close()
    address = f"HTTP://reader:{PASSWORD}@127.0.0.1:8000/v1"
    assert main(["model", "add", path, "--label", "api", "--backend", "openai", "--ref", "tiny",
                 "--base-url", address]) == 1
    captured = capsys.readouterr()
    assert "password" in captured.err and PASSWORD not in captured.err + captured.out
    assert main(["model", "add", path, "--label", "api", "--backend", "openai", "--ref", "tiny",
                 "--base-url", "http://127.0.0.1:9/v1"]) == 0
    capsys.readouterr()
    assert main(["model", "edit", path, "api", "--base-url", address]) == 1
    captured = capsys.readouterr()
    assert PASSWORD not in captured.err + captured.out


@pytest.mark.parametrize("address", [f"http://[reader:{PASSWORD}@x/v1", "http://[x/v1", "http://x:port/v1"])
def test_an_address_python_cannot_read_is_one_plain_sentence_on_the_command_line(project, capsys, address):
    path = str(project.path)
    project.close()
    code = main(["model", "add", path, "--label", "api", "--backend", "openai", "--ref", "tiny", "--base-url", address])
    err = capsys.readouterr().err
    assert code == 1
    assert "Traceback" not in err and PASSWORD not in err
    assert "password" in err or "not a web address" in err
