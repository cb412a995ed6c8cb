"""What API calls cost: a default price table, the project's own prices, costs of runs and estimates.

Prices are US dollars per million tokens. ``resources/prices.csv`` ships a few well-known models (with
the date they were set); the project's ``prices`` table overrides it and is what the user edits. A
model name ending in ``*`` is a prefix: ``gpt-4o*`` prices ``gpt-4o-2024-08-06`` (the longest match wins).
Local models (transformers, llama.cpp) cost nothing here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Mapping

import pandas as pd

from workbench.errors import UserError

if TYPE_CHECKING:
    from workbench.models.spec import ModelSpec
    from workbench.project import Project

DEFAULT_PRICES_CSV = Path(__file__).resolve().parents[2] / "resources" / "prices.csv"
LOCAL_BACKENDS = ("hf", "gguf")
CHARS_PER_TOKEN = 4  # a rough rule for English text


@dataclass(frozen=True)
class Price:
    model: str  # the table entry that matched (may end in '*')
    input_per_million: float
    output_per_million: float
    source: str = "default"  # default, project

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input_per_million + completion_tokens * self.output_per_million) / 1_000_000


@lru_cache(maxsize=1)
def _default_table() -> tuple[tuple[str, float, float], ...]:
    if not DEFAULT_PRICES_CSV.exists():
        return ()
    frame = pd.read_csv(DEFAULT_PRICES_CSV, comment="#", skipinitialspace=True)
    return tuple((str(m).strip(), float(i), float(o))
                 for m, i, o in frame[["model", "input_per_million", "output_per_million"]].itertuples(index=False))


def default_prices_note() -> str:
    """The comment lines at the top of the default table (when the prices were set, and a reminder)."""
    if not DEFAULT_PRICES_CSV.exists():
        return ""
    lines = DEFAULT_PRICES_CSV.read_text(encoding="utf-8").splitlines()
    return " ".join(line.lstrip("# ").strip() for line in lines if line.startswith("#"))


def default_prices_date() -> str | None:
    """The date the default prices were set (from the table's own note), e.g. '2025-06-01'."""
    import re

    found = re.search(r"\d{4}-\d{2}-\d{2}", default_prices_note())
    return found.group(0) if found else None


def _project_table(project: "Project") -> list[tuple[str, float, float]]:
    return [tuple(row) for row in project.db.execute(
        "SELECT model, input_per_million, output_per_million FROM prices ORDER BY model").fetchall()]


def prices_frame(project: "Project | None" = None) -> pd.DataFrame:
    """Every known price: the project's own (source 'project') and the defaults they do not replace."""
    rows: dict[str, dict] = {}
    for model, i, o in _default_table():
        rows[model] = {"model": model, "input_per_million": i, "output_per_million": o, "source": "default"}
    if project is not None:
        for model, i, o in _project_table(project):
            rows[model] = {"model": model, "input_per_million": i, "output_per_million": o, "source": "project"}
    return pd.DataFrame(sorted(rows.values(), key=lambda r: r["model"]),
                        columns=["model", "input_per_million", "output_per_million", "source"])


def _matches(entry: str, model: str) -> bool:
    if entry.endswith("*"):
        return model.startswith(entry[:-1])
    return model == entry


def _best_match(table: Iterable[tuple[str, float, float]], model: str) -> tuple[str, float, float] | None:
    candidates = [row for row in table if _matches(row[0], model)]
    if not candidates:
        return None
    # an exact name beats any prefix; among prefixes the longest wins
    return max(candidates, key=lambda row: (not row[0].endswith("*"), len(row[0])))


def price_for(project: "Project | None", model: str) -> Price | None:
    """The price of an API model: the project's entry if any matches, else the default table's."""
    if project is not None:
        row = _best_match(_project_table(project), model)
        if row is not None:
            return Price(*row, source="project")
    row = _best_match(_default_table(), model)
    return Price(*row, source="default") if row is not None else None


def _check_price(value: float, what: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise UserError(f"The {what} price '{value}' is not a number. Enter dollars per million tokens, e.g. 2.50.") from None
    if not math.isfinite(number) or number < 0:
        raise UserError(f"The {what} price must be zero or more dollars per million tokens (got {value}).")
    return number


def set_price(project: "Project", model: str, input_per_million: float, output_per_million: float) -> None:
    model = (model or "").strip()
    if not model:
        raise UserError("Enter the model's name as the API knows it (e.g. gpt-4o-mini), or a prefix ending in *.")
    i = _check_price(input_per_million, "input")
    o = _check_price(output_per_million, "output")
    with project.db.transaction():
        project.db.execute(
            "INSERT INTO prices (model, input_per_million, output_per_million) VALUES (?, ?, ?)"
            " ON CONFLICT(model) DO UPDATE SET input_per_million = excluded.input_per_million,"
            " output_per_million = excluded.output_per_million",
            [model, i, o],
        )


def remove_price(project: "Project", model: str) -> bool:
    """Forget the project's own price for ``model`` (the default, if any, applies again)."""
    with project.db.transaction():
        cur = project.db.execute("DELETE FROM prices WHERE model = ?", [model])
    return cur.rowcount > 0


def replace_prices(project: "Project", rows: Iterable[tuple[str, float, float]]) -> None:
    """Make the project's own prices exactly ``rows`` (the GUI's editable table saves this way)."""
    cleaned: dict[str, tuple[float, float]] = {}
    for model, i, o in rows:
        model = (model or "").strip()
        if not model:
            continue
        cleaned[model] = (_check_price(i, f"input ({model})"), _check_price(o, f"output ({model})"))
    with project.db.transaction():
        project.db.execute("DELETE FROM prices")
        project.db.conn.executemany(
            "INSERT INTO prices (model, input_per_million, output_per_million) VALUES (?, ?, ?)",
            [(m, i, o) for m, (i, o) in cleaned.items()],
        )


# ---------------------------------------------------------------------------------------------- costs
def is_paid(spec: "ModelSpec") -> bool:
    """Whether calls to this model may cost money: any API model (the desktop app and the command line ask
    before running one) unless the scholar marked it free (parameter ``free``: a server on their own
    computer, such as llama.cpp, vLLM or Ollama); local models and imported results cost nothing.

    A server on 127.0.0.1 is not taken to be free by itself: it may be a tunnel or a proxy to a paid API."""
    return spec.backend != "external" and not costs_nothing(spec)


def costs_nothing(spec: "ModelSpec") -> bool:
    """A model on this computer, or an API the scholar marked free (``free=true``): its estimates and runs
    cost $0."""
    return spec.backend in LOCAL_BACKENDS or spec.params.get("free") is True


#: services that charge per token: a model on one of them marked free is asked about (it may be a mistake that
#: would let runs go ahead without the cost question)
PAID_HOSTS = ("api.openai.com", "openai.azure.com", "api.anthropic.com", "generativelanguage.googleapis.com",
              "aiplatform.googleapis.com", "api.mistral.ai", "api.cohere.com", "api.cohere.ai", "api.together.xyz",
              "api.together.ai", "api.groq.com", "openrouter.ai", "api.deepseek.com", "api.fireworks.ai",
              "api.perplexity.ai", "api.x.ai", "models.inference.ai.azure.com", "router.huggingface.co",
              "api-inference.huggingface.co", "api.deepinfra.com", "api.replicate.com")


def paid_host(spec: "ModelSpec") -> str | None:
    """The known paid service a server model talks to (OpenAI itself when it has no address), else None."""
    if spec.backend != "openai":
        return None
    if not spec.base_url:
        return "api.openai.com"
    from workbench.models.secrets import split_address

    parts = split_address(spec.base_url)
    host = (parts.hostname or "").lower() if parts else ""
    return next((known for known in PAID_HOSTS if host == known or host.endswith("." + known)), None)


def cost_word(spec: "ModelSpec") -> str:
    """How a model's runs are paid for, in the words the Models table and the model lists use."""
    if spec.backend in LOCAL_BACKENDS:
        return "free (this computer)"
    if spec.backend == "external":
        return "imported"
    return "marked free" if costs_nothing(spec) else "paid"


FREE_HINT = ("If this model costs nothing (a server on your own computer), mark it free: tick 'Costs nothing' "
             "in its settings on the Models page, or 'palimpsest model edit PROJECT {label} --param free=true'.")


def cost_of_usage(project: "Project | None", spec: "ModelSpec | None", usage: Mapping[str, int]) -> float | None:
    """Dollars for the tokens in ``usage``; 0 for local models; None when no price is known."""
    if spec is None:
        return None
    if costs_nothing(spec):
        return 0.0
    price = price_for(project, spec.ref)
    if price is None:
        return None
    return price.cost(int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0))


def rough_token_count(text: str) -> int:
    """About how many tokens ``text`` is: tiktoken's count when installed, else characters / 4."""
    try:
        import tiktoken  # optional
    except ImportError:
        return math.ceil(len(text) / CHARS_PER_TOKEN)
    try:
        encoding = tiktoken.get_encoding("o200k_base")
    except Exception:  # tiktoken installed but its vocabulary not downloadable offline
        return math.ceil(len(text) / CHARS_PER_TOKEN)
    return len(encoding.encode(text, disallowed_special=()))


@dataclass(frozen=True)
class CostEstimate:
    requests: int
    prompt_tokens: int
    max_completion_tokens: int
    price: Price | None
    local: bool = False

    @property
    def cost(self) -> float | None:
        """The most the run should cost (every answer as long as allowed); None if no price is known."""
        if self.local:
            return 0.0
        if self.price is None:
            return None
        return self.price.cost(self.prompt_tokens, self.max_completion_tokens)

    def describe(self) -> str:
        tokens = f"{self.requests} requests, about {self.prompt_tokens:,} prompt tokens and at most " \
                 f"{self.max_completion_tokens:,} answer tokens"
        if self.local:
            return f"{tokens}; a model on this computer (or marked free) costs nothing per call."
        if self.price is None:
            return f"{tokens}; no price is known for this model, so the cost cannot be estimated " \
                   "(enter one in the price table)."
        return f"{tokens}; at most about ${self.cost:,.2f} at ${self.price.input_per_million:g} / " \
               f"${self.price.output_per_million:g} per million tokens ({self.price.source} price for " \
               f"{self.price.model}). Check current prices with your provider."


def estimate_cost(
    model_spec: "ModelSpec",
    prompts: Iterable[str],
    max_tokens: int,
    *,
    samples: int = 1,
    project: "Project | None" = None,
) -> CostEstimate:
    """Before a run: tokens and the most it could cost (each prompt sent ``samples`` times)."""
    prompt_tokens = 0
    count = 0
    for text in prompts:
        prompt_tokens += rough_token_count(text)
        count += 1
    requests = count * samples
    local = costs_nothing(model_spec)
    price = None if local else price_for(project, model_spec.ref)
    return CostEstimate(requests, prompt_tokens * samples, requests * int(max_tokens), price, local)
