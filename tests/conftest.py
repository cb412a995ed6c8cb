"""Test-suite setup: Qt offscreen, no network, app settings in a temporary folder.

Fixtures live in ``tests/fixtures/`` (one module per area) and are loaded as plugins below.
"""

import os
import tempfile

# Before anything imports Qt or Hugging Face libraries.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="palimpsest-test-config-")
# Never touch the real OS keyring from tests.
os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.null.Keyring"

pytest_plugins = [
    "tests.fixtures.projects",
    "tests.fixtures.dialogs",
    "tests.fixtures.pages",
    "tests.fixtures.books",
    "tests.fixtures.tiny_models",
    "tests.fixtures.servers",
    "tests.fixtures.qt_gc",
    "tests.fixtures.leakage",
    "tests.fixtures.published",
]
