"""API keys: read from an environment variable or the OS keyring, never stored in the project.

The project keeps only the NAME of the variable (``OPENAI_API_KEY``) or of the keyring entry. The key
itself is read when a backend is opened and lives only in memory. ``redact`` removes it from any text
(a server's error message, say) before that text is shown, logged or stored.
"""

from __future__ import annotations

import os
import re
from urllib.parse import SplitResult, urlsplit, urlunsplit

from workbench.models.base import BackendError

#: keyring "service" under which Palimpsest looks up entries (``python -m keyring set palimpsest NAME``)
KEYRING_SERVICE = "palimpsest"

#: sent to servers that need no key (local llama.cpp, Ollama, LM Studio): the openai client insists on one
NO_KEY = "no-key-needed"

_VARIABLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ENTRY_NAME = re.compile(r"^[\w .@:/-]{1,100}$")


def _looks_like_a_key(text: str) -> bool:
    """Long runs of letters and digits with no word structure: what keys look like, not names."""
    if text.startswith(("sk-", "sk_", "hf_", "gsk_", "xai-")):
        return True
    return len(text) >= 24 and "_" not in text.strip("_") and any(c.isdigit() for c in text)


def check_variable_name(name: str) -> str:
    """The variable name, cleaned; a plain error if it is not a name (or is a key pasted by mistake)."""
    name = (name or "").strip()
    if _looks_like_a_key(name):
        raise BackendError(
            "That looks like an API key itself. Palimpsest never stores keys: put the key in an environment "
            "variable (for example OPENAI_API_KEY) and enter only the variable's name here."
        )
    if not _VARIABLE_NAME.match(name):
        # not repeated back: what was typed may be (part of) a key pasted in the wrong field
        raise BackendError(
            "What was entered is not an environment variable name. Use letters, digits and underscores, "
            "for example OPENAI_API_KEY."
        )
    return name


def check_keyring_name(name: str) -> str:
    name = (name or "").strip()
    if _looks_like_a_key(name):
        raise BackendError(
            "That looks like an API key itself. Palimpsest never stores keys: save the key in your system's "
            "keyring and enter only the entry's name here."
        )
    if not _ENTRY_NAME.match(name):
        raise BackendError("What was entered is not a keyring entry name. Use a short name such as openai.")
    return name


def how_to_set_variable(name: str) -> str:
    return (
        f"Set it before starting Palimpsest: on macOS or Linux run  export {name}=YOUR-KEY  in the terminal "
        f"you start Palimpsest from; on Windows run  setx {name} YOUR-KEY  and open a new terminal."
    )


def key_from_environment(name: str) -> str:
    name = check_variable_name(name)
    value = os.environ.get(name, "").strip()
    if not value:
        raise BackendError(f"The environment variable {name}, which should hold the API key, is not set. "
                           + how_to_set_variable(name))
    return value


def key_from_keyring(name: str) -> str:
    name = check_keyring_name(name)
    try:
        import keyring
        from keyring.errors import KeyringError
    except ImportError as exc:  # pragma: no cover - keyring is a core dependency
        raise BackendError("The keyring package is not installed, so keys cannot be read from the system keyring. "
                           "Use an environment variable instead.") from exc
    try:
        value = keyring.get_password(KEYRING_SERVICE, name)
    except KeyringError as exc:
        raise BackendError(f"The system keyring could not be read ({type(exc).__name__}). "
                           "Use an environment variable for the key instead.") from None
    if not value:
        raise BackendError(
            f"There is no key called '{name}' in the system keyring (service '{KEYRING_SERVICE}'). "
            f"Save it with:  python -m keyring set {KEYRING_SERVICE} {name}  (it asks for the key), "
            "or use an environment variable instead."
        )
    return value.strip()


def resolve_api_key(env: str | None = None, keyring_entry: str | None = None) -> str | None:
    """The key from the named variable or keyring entry; None when the model names neither."""
    if env:
        return _usable(key_from_environment(env), describe_key_source(env, None))
    if keyring_entry:
        return _usable(key_from_keyring(keyring_entry), describe_key_source(None, keyring_entry))
    return None


def _usable(key: str, source: str) -> str:
    """Refuse a key that cannot be sent (a space, an accent, a line break copied with it): otherwise every
    request would fail on its own with a puzzling message, and the run would fill with failures."""
    if not (key.isascii() and key.isprintable()) or any(c.isspace() for c in key):
        raise BackendError(
            f"The API key in {source} contains a character keys never have (a space, a line break or an "
            "accented letter, probably copied with it). Copy the key again and set it once more."
        )
    return key


def describe_key_source(env: str | None = None, keyring_entry: str | None = None) -> str:
    """Where the key comes from, for messages: 'the variable OPENAI_API_KEY' (never the key)."""
    if env:
        return f"the variable {env}"
    if keyring_entry:
        return f"the keyring entry '{keyring_entry}'"
    return "no key (none is configured for this model)"


#: a run of this many characters of a key is treated as the key (servers echo "abcd1234…wxyz")
_FRAGMENT = 8
_TOKEN = re.compile(r"[A-Za-z0-9_\-.*+/=~]+")


def redact(text: str, *secrets: str | None) -> str:
    """``text`` with every given secret replaced, and so any word holding a piece of one (eight characters
    or more: servers often echo the first or last few), and anything shaped like a common API key."""
    for secret in secrets:
        if secret and secret != NO_KEY and len(secret) >= 4:
            text = text.replace(secret, "[key hidden]")
            if len(secret) >= _FRAGMENT:
                pieces = {secret[i:i + _FRAGMENT] for i in range(len(secret) - _FRAGMENT + 1)}

                def hide(match: re.Match, pieces=pieces) -> str:
                    word = match.group(0)
                    holds = any(word[i:i + _FRAGMENT] in pieces for i in range(len(word) - _FRAGMENT + 1))
                    return "[key hidden]" if holds else word

                text = _TOKEN.sub(hide, text)
    return re.sub(r"\b(sk|hf|gsk|xai)[-_][A-Za-z0-9_\-*]{8,}", "[key hidden]", text)


# ---------------------------------------------------------------------------------------------- addresses
def split_address(url: str) -> SplitResult | None:
    """The parts of a web address; None when it cannot be read as one (an unclosed '[', a port that is not a
    number), which the standard library reports by raising."""
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 -- reading it is what checks it
    except ValueError:
        return None
    return parts


def shown_address(url: str) -> str:
    """A web address as messages, logs and stored records may show it: without a user name, password, query
    string or fragment (where keys are put). For something that is not a web address, a neutral phrase if
    it might hold a secret (an '@' or a query), else the text itself."""
    parts = split_address(url)
    if parts is None or parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return "that address" if ("@" in url or "?" in url) else url
    if not (parts.username or parts.password or parts.query or parts.fragment):
        return url.strip()
    host = parts.hostname
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme.lower(), host, parts.path, "", ""))


def is_web_address(url: str) -> bool:
    parts = split_address(url)
    return parts is not None and parts.scheme.lower() in ("http", "https") and bool(parts.hostname)
