"""What a model of the project is (``ModelSpec``): a plain record that the registry stores and every part
reads. It imports nothing of the project, so that pricing, the registry and the probes can all name it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: requests an API server model has in flight at once unless its ``concurrency`` says otherwise: enough to keep
#: a hosted API or one vLLM server busy, few enough to stay under most accounts' rate limits
DEFAULT_CONCURRENCY = 8


@dataclass
class ModelSpec:
    label: str
    backend: str
    ref: str = ""
    base_url: str | None = None
    api_key_env: str | None = None
    api_key_keyring: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    id: int | None = None
    created_at: str | None = None

    @property
    def key_source(self) -> str:
        if self.api_key_env:
            return f"env {self.api_key_env}"
        if self.api_key_keyring:
            return f"keyring {self.api_key_keyring}"
        return ""

    @property
    def concurrency(self) -> int | None:
        """Requests in flight at once, for an API server model (None for the others: a transformers model
        answers in batches, a GGUF file one prompt at a time)."""
        if self.backend != "openai":
            return None
        return int(self.params.get("concurrency") or DEFAULT_CONCURRENCY)

    @property
    def chat(self) -> bool | None:
        """Chat mode: True/False as set; None (local models) decides from the model's chat template."""
        default = True if self.backend == "openai" else None
        value = self.params.get("chat", default)
        return None if value is None else bool(value)
