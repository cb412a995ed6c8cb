"""API keys come from an environment variable or the OS keyring; only their names are ever kept."""

from __future__ import annotations

import keyring
import pytest
from keyring.backend import KeyringBackend

from tests.fixtures.fake_keys import fake_key
from workbench.models import secrets
from workbench.models.base import BackendError
from workbench.models.openai_backend import OpenAIBackend


class MemoryKeyring(KeyringBackend):
    """A real keyring backend (keyring's plugin interface) that keeps entries in memory."""

    priority = 1

    def __init__(self):
        super().__init__()
        self.entries: dict[tuple[str, str], str] = {}

    def get_password(self, service, username):
        return self.entries.get((service, username))

    def set_password(self, service, username, password):
        self.entries[(service, username)] = password

    def delete_password(self, service, username):
        self.entries.pop((service, username), None)


@pytest.fixture
def memory_keyring():
    previous = keyring.get_keyring()
    ring = MemoryKeyring()
    keyring.set_keyring(ring)
    yield ring
    keyring.set_keyring(previous)


def test_the_key_is_read_from_the_named_variable(monkeypatch):
    monkeypatch.setenv("PALIMPSEST_TEST_KEY", "  sk-test-env-0123456789  ")
    assert secrets.resolve_api_key(env="PALIMPSEST_TEST_KEY") == fake_key("test-env-0123456789")


def test_a_missing_variable_says_how_to_set_it(monkeypatch):
    monkeypatch.delenv("PALIMPSEST_TEST_KEY", raising=False)
    with pytest.raises(BackendError) as info:
        secrets.resolve_api_key(env="PALIMPSEST_TEST_KEY")
    message = str(info.value)
    assert "PALIMPSEST_TEST_KEY" in message and "is not set" in message
    assert "export PALIMPSEST_TEST_KEY=" in message and "setx PALIMPSEST_TEST_KEY" in message


def test_the_key_is_read_from_the_keyring(memory_keyring):
    keyring.set_password(secrets.KEYRING_SERVICE, "openai-work", fake_key("test-ring-0123456789"))
    assert secrets.resolve_api_key(keyring_entry="openai-work") == fake_key("test-ring-0123456789")


def test_a_missing_keyring_entry_says_how_to_save_it(memory_keyring):
    with pytest.raises(BackendError, match="python -m keyring set palimpsest openai-work"):
        secrets.resolve_api_key(keyring_entry="openai-work")


def test_a_backend_opens_with_a_keyring_key(memory_keyring, llama_server):
    keyring.set_password(secrets.KEYRING_SERVICE, "local", fake_key("test-ring-0123456789"))
    with OpenAIBackend("tiny", base_url=llama_server.base_url, api_key_keyring="local") as backend:
        assert backend.list_models() == ["tiny"]
        assert fake_key("test-ring") not in repr(backend)


@pytest.mark.parametrize("pasted", [fake_key("proj-Abc123def456ghi789"), "hf_AbCdEfGh12345678", "a1b2c3d4e5f6a7b8c9d0e1f2a3b4"])
def test_a_key_pasted_where_a_name_belongs_is_refused(pasted):
    with pytest.raises(BackendError, match="looks like an API key itself"):
        secrets.check_variable_name(pasted)
    with pytest.raises(BackendError, match="looks like an API key itself"):
        secrets.check_keyring_name(pasted)


def test_names_pass(memory_keyring):
    assert secrets.check_variable_name(" OPENAI_API_KEY ") == "OPENAI_API_KEY"
    assert secrets.check_keyring_name("openai work") == "openai work"


def test_redact_hides_the_key_and_key_shaped_text():
    text = "Incorrect API key provided: " + fake_key("live-0123456789abcdef") + ". Also my-secret-value here."
    cleaned = secrets.redact(text, "my-secret-value")
    assert "0123456789abcdef" not in cleaned and "my-secret-value" not in cleaned
    assert cleaned.count("[key hidden]") == 2
