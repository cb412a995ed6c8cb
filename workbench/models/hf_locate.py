"""Find the folder of a transformers model: a folder on this computer or a Hugging Face Hub id.

Hub models come from the local Hugging Face cache when they are there; otherwise they are downloaded
(with progress) unless Palimpsest works offline, in which case the message says how to get the model.
Only safetensors weights are downloaded when the model has them; older pickle weights only when it
has nothing else.
"""

from __future__ import annotations

import io
import os
import re
from pathlib import Path
from typing import Callable

from workbench.models.base import BackendError

#: ``progress(done, total, message)``, e.g. ``TaskState.progress``; bytes while downloading.
Progress = Callable[[int, int, str], None]

_CONFIG = "config.json"
_SAFE_WEIGHTS = ("*.safetensors", "*.safetensors.index.json")
_PICKLE_WEIGHTS = ("*.bin", "*.bin.index.json")
_SMALL_FILES = ("*.json", "*.jinja", "*.txt", "*.model", "*.tiktoken", "*.py")
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")


def locate_model(
    ref: str | os.PathLike,
    *,
    local_files_only: bool | None = None,
    cache_dir: str | os.PathLike | None = None,
    progress: Progress | None = None,
) -> Path:
    """The folder holding the model ``ref`` (downloading it if needed and allowed)."""
    text = str(ref).strip()
    path = Path(text).expanduser()
    if path.exists() or _looks_like_path(text):
        return _local_folder(path)
    if not _HUB_ID.match(text):
        raise BackendError(
            f"'{text}' is neither a folder on this computer nor a Hugging Face model id (such as 'gpt2' or "
            "'EleutherAI/pythia-160m'). Check the spelling or choose the model's folder."
        )
    return _hub_folder(text, local_files_only=local_files_only, cache_dir=cache_dir, progress=progress)


def has_safetensors(folder: Path) -> bool:
    return any(folder.glob("*.safetensors"))


#: transformers reads pickle weights (``torch.load``) only with PyTorch 2.6 or newer (a security fix)
PICKLE_MIN_TORCH = (2, 6)


def weight_warnings(folder: Path, name: str | None = None) -> list[str]:
    """What to tell a person about the weights in ``folder``: pickle files only (no safetensors)."""
    if has_safetensors(folder) or not any(folder.glob("*.bin")):
        return []
    return [f"{name or folder.name} has its weights only as pickle files (.bin), not as safetensors. Loading a "
            "pickle file can run code hidden in it: use this model only if you trust where it came from, or use a "
            "copy saved as safetensors (saving it again with save_pretrained writes them)."]


def pickle_loading_problem(name: str, torch_version: str) -> str | None:
    """Why ``name``'s pickle weights cannot be loaded with this PyTorch, or None when they can."""
    found = re.match(r"(\d+)\.(\d+)", torch_version)
    if found is None or (int(found.group(1)), int(found.group(2))) >= PICKLE_MIN_TORCH:
        return None
    wanted = ".".join(map(str, PICKLE_MIN_TORCH))
    return (f"{name} has its weights only as pickle files (.bin), which transformers loads only with PyTorch "
            f"{wanted} or newer; this computer has PyTorch {torch_version}. Update it (pip install --upgrade "
            f"'torch>={wanted}'), or use a copy of the model saved as safetensors.")


def is_offline() -> bool:
    from huggingface_hub import constants

    flag = os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in {"1", "ON", "YES", "TRUE"}
    return flag or bool(constants.HF_HUB_OFFLINE)


def _looks_like_path(text: str) -> bool:
    return text.startswith(("/", "~", ".", "\\")) or bool(re.match(r"^[A-Za-z]:[\\/]", text)) or text.count("/") > 1


def _local_folder(path: Path) -> Path:
    if not path.exists():
        raise BackendError(f"There is no model folder at {path}. Check the path, or choose the folder again.")
    if path.is_file():
        if path.suffix.lower() == ".gguf":
            raise BackendError(f"{path.name} is a GGUF file. Open it with the llama.cpp (GGUF) backend instead.")
        raise BackendError(
            f"{path} is a file, not a model folder. Choose the folder that holds config.json and the model's weights."
        )
    if not (path / _CONFIG).is_file():
        raise BackendError(
            f"The folder {path} does not hold a transformers model (there is no config.json in it). "
            "Choose the folder that holds config.json and the model's weights."
        )
    if not (has_safetensors(path) or any(path.glob("*.bin"))):
        raise BackendError(
            f"The folder {path} has no model weights (no .safetensors or .bin files). "
            "The download may be incomplete: download the model again."
        )
    return path


def _hub_folder(repo_id: str, *, local_files_only: bool | None, cache_dir, progress: Progress | None) -> Path:
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    offline = is_offline() if local_files_only is None else local_files_only
    try:
        cached = Path(snapshot_download(repo_id, cache_dir=cache_dir, local_files_only=True))
        if (cached / _CONFIG).is_file() and (has_safetensors(cached) or any(cached.glob("*.bin"))):
            return cached
    except LocalEntryNotFoundError:
        pass
    if offline:
        raise BackendError(
            f"The model '{repo_id}' is not on this computer, and Palimpsest is working offline "
            "(HF_HUB_OFFLINE is set), so it cannot download it. To get it, connect to the internet and open the "
            f"model once without offline mode (it is saved in the Hugging Face cache), or run "
            f"'hf download {repo_id}' on a computer with internet and copy its cache folder here, "
            "or choose a folder that already holds the model."
        )
    return _download(repo_id, cache_dir=cache_dir, progress=progress)


def _download(repo_id: str, *, cache_dir, progress: Progress | None) -> Path:
    from huggingface_hub import HfApi, snapshot_download
    from huggingface_hub.errors import GatedRepoError, RepositoryNotFoundError, RevisionNotFoundError

    try:
        files = HfApi().list_repo_files(repo_id)
        weights = _SAFE_WEIGHTS if any(f.endswith(".safetensors") for f in files) else _PICKLE_WEIGHTS
        folder = snapshot_download(
            repo_id,
            cache_dir=cache_dir,
            allow_patterns=[*_SMALL_FILES, *weights],
            tqdm_class=_progress_bar_class(repo_id, progress) if progress else None,
        )
    except GatedRepoError:
        raise BackendError(
            f"The model '{repo_id}' is gated: accept its licence on huggingface.co/{repo_id} with your account, "
            "then make your access token available (run 'hf auth login' or set HF_TOKEN) and try again."
        ) from None
    except RepositoryNotFoundError:
        raise BackendError(
            f"There is no model called '{repo_id}' on the Hugging Face Hub (or it is private). "
            "Check the spelling; for a private model, log in with 'hf auth login' first."
        ) from None
    except RevisionNotFoundError:
        raise BackendError(f"The requested version of '{repo_id}' does not exist on the Hugging Face Hub.") from None
    except Exception as exc:  # network errors come from several libraries (httpx, OSError...)
        raise BackendError(
            f"The model '{repo_id}' is not on this computer and could not be downloaded from the Hugging Face Hub "
            f"({exc}). Check your internet connection and try again, or choose a folder that holds the model."
        ) from None
    return _local_folder(Path(folder))


def _progress_bar_class(repo_id: str, progress: Progress):
    """A tqdm class for ``snapshot_download`` that reports downloaded bytes to ``progress``."""
    from tqdm import tqdm

    class ForwardingBar(tqdm):
        def __init__(self, *args, **kwargs):
            kwargs.pop("name", None)
            kwargs["disable"] = False  # a disabled bar stops counting
            kwargs["file"] = io.StringIO()  # nothing on the terminal; the caller shows progress
            super().__init__(*args, **kwargs)

        def update(self, n=1):
            shown = super().update(n)
            if self.unit == "B":
                progress(int(self.n), int(self.total or 0), f"Downloading {repo_id}")
            return shown

    return ForwardingBar
