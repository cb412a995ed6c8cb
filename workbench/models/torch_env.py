"""Where a local transformers model runs: device, number format, and running out of memory.

Imports torch lazily, so the rest of the program works without it.
"""

from __future__ import annotations

import gc
import threading
from typing import Any

from workbench.models.base import BackendError

_DTYPE_NAMES = {
    "float32": "float32",
    "fp32": "float32",
    "float": "float32",
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "float16": "float16",
    "fp16": "float16",
    "half": "float16",
}


def choose_device(device: str = "auto") -> Any:
    """``auto`` picks CUDA, then Apple MPS, then the CPU; ``cpu``, ``cuda``, ``cuda:1``, ``mps`` force one."""
    import torch

    name = (device or "auto").strip().lower()
    if name == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if _mps_available():
            return torch.device("mps")
        return torch.device("cpu")
    try:
        chosen = torch.device(name)
    except RuntimeError:
        raise BackendError(
            f"'{device}' is not a device Palimpsest knows. Choose auto, cpu, cuda (or cuda:0, cuda:1 ...) or mps."
        ) from None
    if chosen.type == "cuda" and not torch.cuda.is_available():
        raise BackendError("No NVIDIA GPU (CUDA) is available on this computer. Choose the device 'auto' or 'cpu'.")
    if chosen.type == "cuda" and chosen.index is not None and chosen.index >= torch.cuda.device_count():
        raise BackendError(
            f"There is no GPU number {chosen.index} on this computer (it has {torch.cuda.device_count()})."
            " Choose the device 'cuda' or 'auto'."
        )
    if chosen.type == "mps" and not _mps_available():
        raise BackendError("Apple's GPU (MPS) is not available on this computer. Choose the device 'auto' or 'cpu'.")
    return chosen


def choose_dtype(dtype: Any, device: Any) -> Any:
    """``auto``: bfloat16 (or float16 where bfloat16 is unsupported) on a GPU, float32 on the CPU."""
    import torch

    if isinstance(dtype, torch.dtype):
        return dtype
    name = str(dtype or "auto").strip().lower().removeprefix("torch.")
    if name == "auto":
        if device.type == "cuda":
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        if device.type == "mps":
            return torch.float16
        return torch.float32
    if name not in _DTYPE_NAMES:
        raise BackendError(f"'{dtype}' is not a number format Palimpsest knows. Choose auto, float32, bfloat16 or float16.")
    return getattr(torch, _DTYPE_NAMES[name])


def is_out_of_memory(exc: BaseException) -> bool:
    """CUDA raises ``torch.OutOfMemoryError``; MPS and the CPU allocator raise plain ``RuntimeError``s."""
    import torch

    if isinstance(exc, torch.OutOfMemoryError):
        return True
    text = str(exc).lower()
    return isinstance(exc, RuntimeError) and ("out of memory" in text or "can't allocate memory" in text)


def free_memory(device: Any) -> None:
    import torch

    # Only the main thread may collect cycles: in the desktop app a cycle can hold a widget, and a widget
    # destroyed in a worker thread crashes or deadlocks Qt (the app collects on its GUI thread instead).
    if threading.current_thread() is threading.main_thread():
        gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()
    elif device.type == "mps":
        torch.mps.empty_cache()


def _mps_available() -> bool:
    import torch

    backend = getattr(torch.backends, "mps", None)
    return bool(backend and backend.is_available())
