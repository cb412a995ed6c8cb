"""The project's models: what each one is, how to open it, tags for grouping (``decade=1950s``).

A model is a row of ``models`` (label, backend, reference, server address, the NAME of the variable or
keyring entry holding its API key, parameters) plus tags in ``model_tags``. ``open_backend`` turns one
into a working ``Backend``, wrapped in the project's response cache.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import pandas as pd

from workbench.errors import UserError
from workbench.models import secrets
from workbench.models.base import Backend, BackendError, Failure, GenerationParams, prompt_request
from workbench.models.spec import DEFAULT_CONCURRENCY, ModelSpec
from workbench.project import now

if TYPE_CHECKING:
    from workbench.project import Project

BACKENDS = {
    "hf": "Hugging Face transformers (a hub id or a local folder)",
    "gguf": "llama.cpp (a local .gguf file)",
    "openai": "an OpenAI-compatible server (OpenAI, vLLM, llama.cpp server, Ollama, LM Studio)",
    "external": "results imported from elsewhere (cannot be run from here)",
}

#: the parameters each backend understands (anything else is refused with a plain message)
BACKEND_PARAMS = {
    "hf": {"device", "dtype", "chat", "trust_remote_code", "token_budget", "max_batch_size", "local_files_only",
           "cache_dir"},
    "gguf": {"n_ctx", "n_gpu_layers", "n_threads", "chat"},
    "openai": {"chat", "concurrency", "timeout", "max_retries", "free", "n_ctx"},
    "external": set(),
}

#: what each backend is called wherever a model is shown (the Models table, model lists, the command line)
BACKEND_NAMES = {"openai": "API server", "gguf": "GGUF file", "hf": "Hugging Face", "external": "imported results"}
MAX_CONCURRENCY = 256

TEST_PROMPT = "In one short sentence: what is a novel?"


class FreeOnPaidHost(UserError):
    """A model on a known paid service is being marked free: the person must confirm it."""

    def __init__(self, label: str, host: str):
        super().__init__(
            f"'{label}' is marked as costing nothing, but its server {host} is a paid service: runs on it would "
            "then start without showing what they cost. If this address really reaches a free server of your "
            "own, confirm it (on the command line: --yes); otherwise leave 'Costs nothing' unticked.")
        self.host = host


# ---------------------------------------------------------------------------------------------- parsing
def parse_value(text: str) -> Any:
    """A parameter typed on a command line or in a form: true/false, numbers, JSON, else the text."""
    text = text.strip()
    lowered = text.lower()
    if lowered in ("true", "yes", "on"):
        return True
    if lowered in ("false", "no", "off"):
        return False
    if lowered in ("none", "null", ""):
        return None
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    if text[:1] in "[{":
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            pass
    return text


def parse_pairs(pairs: Iterable[str], *, what: str, typed: bool) -> dict[str, Any]:
    """``["k=v", "flag"]`` -> ``{"k": v, "flag": ""}`` (a bare word is a tag without a value)."""
    result: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not key:
            raise UserError(f"'{pair}' is not a {what}: write it as name=value.")
        if not sep and typed:
            raise UserError(f"'{pair}' is not a {what}: write it as name=value, e.g. chat=true.")
        result[key] = parse_value(value) if typed else value.strip()
    return result


# ---------------------------------------------------------------------------------------------- validation
def _clean(spec: ModelSpec) -> ModelSpec:
    spec = replace(spec, label=(spec.label or "").strip(), backend=(spec.backend or "").strip().lower(),
                   ref=(spec.ref or "").strip(), base_url=(spec.base_url or "").strip() or None,
                   api_key_env=(spec.api_key_env or "").strip() or None,
                   api_key_keyring=(spec.api_key_keyring or "").strip() or None,
                   params=dict(spec.params or {}),
                   tags={str(k).strip(): str(v if v is not None else "").strip() for k, v in (spec.tags or {}).items()})
    if not spec.label:
        raise UserError("Give the model a label (a short name such as gpt4o-2024 or llama-1950s).")
    if spec.backend not in BACKENDS:
        choices = "; ".join(f"{k}: {v}" for k, v in BACKENDS.items())
        raise UserError(f"Unknown backend '{spec.backend}'. Choose one of — {choices}.")
    unknown = set(spec.params) - BACKEND_PARAMS[spec.backend]
    if unknown:
        allowed = ", ".join(sorted(BACKEND_PARAMS[spec.backend])) or "none"
        raise UserError(f"{spec.backend} models have no parameter {', '.join(sorted(unknown))}. "
                        f"Parameters they understand: {allowed}.")
    _check_concurrency(spec)
    if any(not key for key in spec.tags):
        raise UserError("A tag needs a name (e.g. decade=1950s or fine-tuned).")
    if spec.backend == "gguf":
        _check_gguf(spec.ref)
        spec = replace(spec, ref=_absolute(spec.ref))
    elif spec.backend == "hf":
        _check_hf(spec.ref)
        if Path(spec.ref).expanduser().is_dir():
            spec = replace(spec, ref=_absolute(spec.ref))
    elif spec.backend == "openai":
        spec = _check_openai(spec)
    if spec.backend != "openai" and (spec.base_url or spec.api_key_env or spec.api_key_keyring):
        raise UserError(f"A server address and API key only apply to openai models, not {spec.backend} ones.")
    return spec


def _check_concurrency(spec: ModelSpec) -> None:
    value = spec.params.get("concurrency")
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_CONCURRENCY:
        raise UserError(f"Requests at once (concurrency) must be a whole number from 1 to {MAX_CONCURRENCY}, not "
                        f"{value!r}. {DEFAULT_CONCURRENCY} suits most servers; a vLLM server on several GPUs, or "
                        "several servers behind a router, can take more.")


def choice_text(spec: ModelSpec) -> str:
    """A model as lists for choosing one show it: its label, what kind of model it is and how it is paid for."""
    from workbench.models.prices import cost_word

    return f"{spec.label}  ({BACKEND_NAMES.get(spec.backend, spec.backend)}, {cost_word(spec)})"


def _check_free_mark(spec: ModelSpec, before: ModelSpec | None, confirmed: bool) -> None:
    """Marking a model on a known paid service free takes a confirmation (once: editing it again does not ask)."""
    from workbench.models.prices import paid_host

    if confirmed or spec.params.get("free") is not True:
        return
    host = paid_host(spec)
    if host is None:
        return
    if before is not None and before.params.get("free") is True and paid_host(before) == host:
        return
    raise FreeOnPaidHost(spec.label, host)


def _absolute(ref: str) -> str:
    """Local files are stored by their full path, so the project works from any folder."""
    return str(Path(ref).expanduser().resolve())


def _check_gguf(ref: str) -> None:
    if not ref:
        raise UserError("Choose the .gguf file of the model.")
    path = Path(ref).expanduser()
    if not path.exists():
        raise UserError(f"There is no GGUF file at {path}. Check the path, or choose the file again.")
    if path.is_dir():
        raise UserError(f"{path} is a folder. Choose the .gguf file inside it.")
    with open(path, "rb") as fh:
        if fh.read(4) != b"GGUF":
            raise UserError(f"{path.name} is not a GGUF model file. llama.cpp models end in .gguf; "
                            "for a Hugging Face model choose the hf backend.")


def _check_hf(ref: str) -> None:
    if not ref:
        raise UserError("Enter the Hugging Face model id (e.g. gpt2) or choose the model's folder.")
    looks_like_path = ref.startswith(("/", ".", "~")) or "\\" in ref or ref.count("/") > 1
    path = Path(ref).expanduser()
    if looks_like_path and not path.exists():
        raise UserError(f"There is no model folder at {path}. Check the path, or enter a Hugging Face id such as gpt2.")
    if path.is_file():
        raise UserError(f"{path.name} is a file; a transformers model is a folder (with config.json). "
                        "For a .gguf file choose the gguf backend.")


_SECRET_QUERY_WORDS = ("key", "token", "secret", "password", "auth", "sig")


def _address_holds_secrets(url: str) -> bool:
    parts = secrets.split_address(url)
    if parts is None:  # not readable as an address: anything that could be a password counts
        return "@" in url or "?" in url
    query_names = [name.lower() for name, _ in parse_qsl(parts.query, keep_blank_values=True)]
    return bool(parts.username or parts.password or "@" in parts.netloc
                or ("://" not in url and "@" in url)  # "user:password@host", without a scheme
                or any(word in name for name in query_names for word in _SECRET_QUERY_WORDS))


def _check_openai(spec: ModelSpec) -> ModelSpec:
    if not spec.ref:
        raise UserError("Enter the model's name as the server knows it (e.g. gpt-4o-mini, or the name your "
                        "local server lists).")
    # Never repeat an address that may hold a secret: the password check comes first, whatever the scheme.
    if spec.base_url and _address_holds_secrets(spec.base_url):
        raise UserError("That server address holds a user name, password or key. Enter the address without them "
                        "and put the key in an environment variable or your system keyring: the project never "
                        "stores keys.")
    if spec.base_url and not secrets.is_web_address(spec.base_url):
        raise UserError(f"'{secrets.shown_address(spec.base_url)}' is not a web address. It should look like "
                        "http://127.0.0.1:8000/v1 or https://api.openai.com/v1.")
    if spec.base_url:  # HTTP://Host/v1 is http://Host/v1
        parts = urlsplit(spec.base_url)
        spec = replace(spec, base_url=urlunsplit((parts.scheme.lower(), *parts[1:])))
    if spec.api_key_env and spec.api_key_keyring:
        raise UserError("Choose one place for the API key: an environment variable or a keyring entry, not both.")
    if spec.api_key_env:
        spec = replace(spec, api_key_env=secrets.check_variable_name(spec.api_key_env))
    elif spec.api_key_keyring:
        spec = replace(spec, api_key_keyring=secrets.check_keyring_name(spec.api_key_keyring))
    elif not spec.base_url:  # OpenAI itself always needs a key; the usual variable is the default
        spec = replace(spec, api_key_env="OPENAI_API_KEY")
    return spec


# ---------------------------------------------------------------------------------------------- storage
_COLUMNS = "id, label, backend, ref, base_url, api_key_env, api_key_keyring, params, created_at"


def _row_to_spec(row: tuple, tags: dict[str, str]) -> ModelSpec:
    id_, label, backend, ref, base_url, env, keyring_entry, params, created_at = row
    return ModelSpec(label=label, backend=backend, ref=ref, base_url=base_url, api_key_env=env,
                     api_key_keyring=keyring_entry, params=json.loads(params or "{}"), tags=tags, id=id_,
                     created_at=created_at)


def _tags(project: "Project") -> dict[int, dict[str, str]]:
    tags: dict[int, dict[str, str]] = {}
    for model_id, key, value in project.db.execute("SELECT model_id, key, value FROM model_tags ORDER BY key"):
        tags.setdefault(model_id, {})[key] = value
    return tags


def list_models(project: "Project") -> list[ModelSpec]:
    tags = _tags(project)
    rows = project.db.execute(f"SELECT {_COLUMNS} FROM models ORDER BY label COLLATE NOCASE").fetchall()
    return [_row_to_spec(row, tags.get(row[0], {})) for row in rows]


#: a model's tag holding the last year of its training data
CUTOFF_TAG = "cutoff"


def training_cutoff(project: "Project", model: str, cutoff_year: int | None = None) -> tuple[int | None, str]:
    """The training cutoff year used for ``model`` and where it comes from: ``cutoff_year`` when given, else the
    model's tag ``cutoff=YEAR`` (Models page), else none."""
    if cutoff_year is not None:
        return int(cutoff_year), "given"
    tagged = (get_model(project, model).tags or {}).get(CUTOFF_TAG, "").strip()
    if not tagged:
        return None, ""
    try:
        return int(tagged), f"the model's tag {CUTOFF_TAG}={tagged}"
    except ValueError:
        raise UserError(f"The model '{model}' has the tag {CUTOFF_TAG}={tagged}, which is not a year. Write the last "
                        "year of its training data, such as 2023 (Models page).") from None


def get_model(project: "Project", label_or_id: str | int) -> ModelSpec:
    if isinstance(label_or_id, int):
        row = project.db.execute(f"SELECT {_COLUMNS} FROM models WHERE id = ?", [label_or_id]).fetchone()
    else:
        row = project.db.execute(f"SELECT {_COLUMNS} FROM models WHERE label = ?", [label_or_id]).fetchone()
    if row is None:
        labels = [m.label for m in list_models(project)]
        known = f"Models in this project: {', '.join(labels)}." if labels else "This project has no models yet."
        raise UserError(f"There is no model called '{label_or_id}'. {known}")
    return _row_to_spec(row, _tags(project).get(row[0], {}))


def _label_taken(project: "Project", label: str, except_id: int | None) -> bool:
    row = project.db.execute("SELECT id FROM models WHERE label = ?", [label]).fetchone()
    return row is not None and row[0] != except_id


def _write_tags(project: "Project", model_id: int, tags: dict[str, str]) -> None:
    project.db.execute("DELETE FROM model_tags WHERE model_id = ?", [model_id])
    project.db.conn.executemany("INSERT INTO model_tags (model_id, key, value) VALUES (?, ?, ?)",
                                [(model_id, k, v) for k, v in tags.items()])


def add_model(project: "Project", spec: ModelSpec, *, confirm_free: bool = False) -> ModelSpec:
    """Add a model; marking one on a known paid service free raises ``FreeOnPaidHost`` unless ``confirm_free``."""
    spec = _clean(spec)
    _check_free_mark(spec, None, confirm_free)
    if _label_taken(project, spec.label, None):
        raise UserError(f"There is already a model called '{spec.label}'. Choose another label.")
    created = now()
    with project.db.transaction():
        cur = project.db.execute(
            "INSERT INTO models (label, backend, ref, base_url, api_key_env, api_key_keyring, params, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [spec.label, spec.backend, spec.ref, spec.base_url, spec.api_key_env, spec.api_key_keyring,
             json.dumps(spec.params, sort_keys=True), created],
        )
        _write_tags(project, cur.lastrowid, spec.tags)
    return replace(spec, id=cur.lastrowid, created_at=created)


def external_model(project: "Project", label: str) -> int:
    """The id of the ``external`` model called ``label`` (results imported from elsewhere), created if needed."""
    row = project.db.execute("SELECT id, backend FROM models WHERE label = ?", [label]).fetchone()
    if row is not None:
        if row[1] != "external":
            raise UserError(
                f"The model '{label}' is a {row[1]} model of this project. Imported results need their own label; "
                "choose another."
            )
        return row[0]
    return add_model(project, ModelSpec(label=label, backend="external")).id


def update_model(project: "Project", label_or_id: str | int, *, confirm_free: bool = False,
                 **changes: Any) -> ModelSpec:
    """Change some fields of a model (``label=``, ``params=``, ``tags=`` ...); the rest stay. Newly marking a
    model on a known paid service free raises ``FreeOnPaidHost`` unless ``confirm_free``."""
    current = get_model(project, label_or_id)
    unknown = set(changes) - (set(ModelSpec.__dataclass_fields__) - {"id", "created_at"})
    if unknown:
        raise UserError(f"A model has no field {', '.join(sorted(unknown))}.")
    spec = _clean(replace(current, **changes))
    _check_free_mark(spec, current, confirm_free)
    if _label_taken(project, spec.label, current.id):
        raise UserError(f"There is already a model called '{spec.label}'. Choose another label.")
    with project.db.transaction():
        project.db.execute(
            "UPDATE models SET label = ?, backend = ?, ref = ?, base_url = ?, api_key_env = ?, api_key_keyring = ?,"
            " params = ? WHERE id = ?",
            [spec.label, spec.backend, spec.ref, spec.base_url, spec.api_key_env, spec.api_key_keyring,
             json.dumps(spec.params, sort_keys=True), current.id],
        )
        _write_tags(project, current.id, spec.tags)
    return replace(spec, id=current.id, created_at=current.created_at)


def runs_using(project: "Project", model_id: int) -> tuple[int, int]:
    """How many runs use the model, and how many responses they hold."""
    from workbench.runs import model_run_counts

    return model_run_counts(project, model_id)


def remove_model(project: "Project", label_or_id: str | int, *, with_runs: bool = False) -> None:
    """Remove a model. If runs used it, refuse unless ``with_runs`` (then its runs go too)."""
    spec = get_model(project, label_or_id)
    runs, responses = runs_using(project, spec.id)
    if runs and not with_runs:
        raise UserError(
            f"'{spec.label}' has {runs} run(s) with {responses} response(s). Removing it would remove them too; "
            "confirm that (in the command line: --with-runs), or keep the model."
        )
    with project.db.transaction():
        if runs:
            from workbench.runs import delete_runs, run_ids

            delete_runs(project, run_ids(project, model_id=spec.id), doing=f"remove '{spec.label}'")
        project.db.execute("DELETE FROM models WHERE id = ?", [spec.id])


def models_frame(project: "Project") -> pd.DataFrame:
    from workbench.models.prices import cost_word
    from workbench.runs import runs_per_model

    counts = runs_per_model(project)
    rows = [
        {
            "id": m.id,
            "label": m.label,
            "backend": m.backend,
            "ref": m.ref,
            "base_url": m.base_url or "",
            "api_key": m.key_source,
            "chat": {True: "yes", False: "no", None: "auto"}[m.chat],
            "costs": cost_word(m),
            "requests_at_once": m.concurrency,
            "params": ", ".join(f"{k}={v}" for k, v in sorted(m.params.items())),
            "tags": ", ".join(f"{k}={v}" if v else k for k, v in m.tags.items()),
            "runs": counts.get(m.id, 0),
        }
        for m in list_models(project)
    ]
    return pd.DataFrame(rows, columns=["id", "label", "backend", "ref", "base_url", "api_key", "chat", "costs",
                                       "requests_at_once", "params", "tags", "runs"])


# ---------------------------------------------------------------------------------------------- opening
def _open_uncached(spec: ModelSpec) -> Backend:
    params = dict(spec.params)
    if spec.backend == "openai":
        from workbench.models.openai_backend import OpenAIBackend

        params.pop("free", None)  # the project's bookkeeping (no cost question), not the server's
        params["concurrency"] = spec.concurrency

        return OpenAIBackend(spec.ref, base_url=spec.base_url, api_key_env=spec.api_key_env,
                             api_key_keyring=spec.api_key_keyring, **params)
    if spec.backend == "gguf":
        _check_gguf(spec.ref)
        try:
            from workbench.models.gguf_backend import LlamaCppBackend
        except ImportError as exc:
            raise BackendError("GGUF models need llama.cpp: pip install 'palimpsest-workbench[gguf]'.") from exc
        return LlamaCppBackend(str(Path(spec.ref).expanduser()), **params)
    if spec.backend == "hf":
        try:
            from workbench.models.hf_backend import TransformersBackend
        except ImportError as exc:
            raise BackendError("Hugging Face models need PyTorch and transformers: "
                               "pip install 'palimpsest-workbench[local]'.") from exc
        return TransformersBackend(spec.ref, **params)
    raise BackendError(f"'{spec.label}' holds imported results; it cannot be run from Palimpsest.")


def runnable_model(project: "Project", model: "str | int | ModelSpec", doing: str = "be asked") -> ModelSpec:
    """The model (by label, id or spec) that a probe is about to call; a model holding imported results
    (backend ``external``) is refused, saying it cannot ``doing``, before anything starts."""
    spec = model if isinstance(model, ModelSpec) else get_model(project, model)
    if spec.backend == "external":
        raise UserError(f"'{spec.label}' holds imported results; it cannot {doing}. Choose a model you added on "
                        "the Models page.")
    return spec


def require_api_key(spec: ModelSpec) -> None:
    """Says, before any cost question or run, that a model reading its API key from an environment variable
    cannot be asked while that variable is not set."""
    if spec.api_key_env:
        try:
            secrets.key_from_environment(spec.api_key_env)
        except BackendError as exc:
            raise UserError(f"{spec.label} cannot be asked yet. {exc}") from None


def open_backend(spec: ModelSpec, project: "Project | None" = None, *, use_cache: bool = True) -> Backend:
    """A working backend for ``spec``; with a project, answers are cached in it (``models.cache``)."""
    backend = _open_uncached(spec)
    if project is None or not use_cache:
        return backend
    from workbench.models.cache import CachedBackend

    return CachedBackend(backend, project)


def model_warnings(spec: ModelSpec) -> list[str]:
    """What a person should know before using this model (a transformers model with pickle weights only).
    Looks only at what is on this computer: nothing is downloaded."""
    if spec.backend != "hf":
        return []
    try:
        from workbench.models.hf_locate import locate_model, weight_warnings

        folder = locate_model(spec.ref, local_files_only=True)
    except (ImportError, UserError):
        return []
    return weight_warnings(folder, spec.label)


def test_model(spec: ModelSpec, prompt: str = TEST_PROMPT, *, max_tokens: int = 24) -> tuple[str, float]:
    """Send one short prompt (never from the cache). Returns the answer and the seconds it took."""
    params = GenerationParams(temperature=0.0, max_tokens=max_tokens)
    started = time.monotonic()
    with open_backend(spec, use_cache=False) as backend:
        request = prompt_request(backend, prompt, params)
        results = list(backend.generate([request]))
    seconds = time.monotonic() - started
    if not results:
        raise BackendError(f"'{spec.label}' gave no answer at all.")
    result = results[0][1]
    if isinstance(result, Failure):
        raise BackendError(result.error)
    return result.text, seconds


test_model.__test__ = False  # a library function, not a pytest test (tests import it by name)
