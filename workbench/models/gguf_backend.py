"""Local GGUF models through llama.cpp (llama-cpp-python).

- One request at a time (llama.cpp's Python API runs one sequence); requests that share a prompt
  prefix reuse llama.cpp's cached prompt state.
- Chat requests go through ``create_chat_completion``, which formats them with the chat template
  stored in the GGUF file; a chat sent to a model without a template is flattened to a bare prompt.
- Only the request's parameters count: llama-cpp-python's own sampling defaults (top-k 40, min-p
  0.05) are switched off, so temperature and top-p mean what they mean for the other backends.
- Temperature 0 is greedy. Sampling is seeded with ``request.seed`` (fresh randomness without one).
- Log-probabilities need llama.cpp to keep the scores of every position, which costs memory
  (context size x vocabulary). The model is therefore reloaded that way only when a request asks
  for ``logprobs`` or a continuation is scored, and stays so afterwards.
"""

from __future__ import annotations

import math
import os
import random
import time
from pathlib import Path
from typing import Any, Iterator, Sequence

from workbench.errors import UserError
from workbench.models.base import (
    Backend,
    BackendError,
    Failure,
    Generation,
    Message,
    Request,
    Result,
    TokenScores,
    check_logit_bias,
    scoring_windows,
)
from workbench.models.prompt_text import flatten_messages

GGUF_MAGIC = b"GGUF"
CHAT_TEMPLATE_KEY = "tokenizer.chat_template"
# llama.cpp's own sampling defaults, switched off (see the module docstring).
_NEUTRAL_SAMPLING = {"top_k": 0, "min_p": 0.0, "typical_p": 1.0, "repeat_penalty": 1.0}


class LlamaCppBackend(Backend):
    """A GGUF model file run by llama.cpp on this computer.

    Parameters
    - ``path``: the ``.gguf`` file.
    - ``n_ctx``: context size in tokens (prompt plus answer).
    - ``n_gpu_layers``: layers to put on the GPU (0: CPU only; -1: all), for a GPU build of llama.cpp.
    - ``n_threads``: CPU threads (``None``: llama.cpp's choice).
    - ``chat``: ``None`` uses chat mode when the file has a chat template; ``True``/``False`` force it
      (``True`` needs a template).
    """

    kind = "llama.cpp"

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        n_ctx: int = 2048,
        n_gpu_layers: int = 0,
        n_threads: int | None = None,
        chat: bool | None = None,
    ):
        self.path = _checked_gguf_path(path)
        self.model_name = self.path.name
        self._settings = {"n_ctx": int(n_ctx), "n_gpu_layers": int(n_gpu_layers), "n_threads": n_threads}
        self._logits_all = False
        self.llama = self._load(logits_all=False)
        self.chat_template = self.llama.metadata.get(CHAT_TEMPLATE_KEY) or None
        if chat and not self.chat_template:
            raise BackendError(
                f"{self.path.name} has no chat template, so it cannot be used as a chat model. "
                "Use it as a base model (chat off), or choose a chat (instruct) version of the model."
            )
        self.is_chat = bool(self.chat_template) if chat is None else bool(chat)

    # ---- loading -------------------------------------------------------------------------------

    def _load(self, *, logits_all: bool):
        try:
            from llama_cpp import Llama
        except ImportError:
            raise BackendError(
                "llama.cpp support is not installed. Install it with: pip install 'palimpsest-workbench[gguf]'"
            ) from None
        try:
            return Llama(model_path=str(self.path), logits_all=logits_all, verbose=False, **self._settings)
        except (ValueError, RuntimeError, OSError) as exc:
            raise BackendError(
                f"llama.cpp could not load the GGUF file {self.path.name}. It may be damaged or incomplete, or made "
                "for a newer llama.cpp: download it again, or update Palimpsest's llama.cpp."
            ) from exc

    def _with_logits(self):
        """The model, reloaded once so that it keeps the scores of every position."""
        if not self._logits_all:
            self._release()
            self.llama = self._load(logits_all=True)
            self._logits_all = True
        return self.llama

    # ---- the Backend interface -----------------------------------------------------------------

    @property
    def capabilities(self) -> frozenset[str]:
        return frozenset({"generate", "continuation_logprob", "logprobs", "score_texts"})

    def generate(self, requests: Sequence[Request]) -> Iterator[tuple[int, Result]]:
        self._require_open()
        for index, request in enumerate(requests):
            yield index, self._generate_one(request)

    def continuation_logprob(self, prompt: str | Sequence[Message], continuation: str) -> float:
        import numpy as np

        self._require_open()
        if not continuation:
            return 0.0
        llama = self._with_logits()
        text, bos = self._render(prompt)
        prompt_ids = bos + llama.tokenize(text.encode("utf-8"), add_bos=False, special=True)
        full_ids = bos + llama.tokenize((text + continuation).encode("utf-8"), add_bos=False, special=True)
        # The continuation starts where the two tokenizations part (a merged boundary token counts).
        start = next((i for i, (a, b) in enumerate(zip(prompt_ids, full_ids)) if a != b), min(len(prompt_ids), len(full_ids)))
        if start == 0:  # nothing to condition on: start from the beginning-of-text token
            full_ids, start = [llama.token_bos()] + full_ids, 1
        if len(full_ids) > llama.n_ctx():
            raise UserError(
                f"The prompt and continuation are {len(full_ids)} tokens long, but this model was opened with room "
                f"for {llama.n_ctx()}. Shorten the text or open the model with a larger context size."
            )
        llama.reset()
        llama.eval(full_ids)
        scores = np.asarray(llama.scores[: len(full_ids)], dtype=np.float64)
        rows = scores[start - 1 : -1]
        peak = rows.max(axis=-1, keepdims=True)
        logprobs = rows - peak - np.log(np.exp(rows - peak).sum(axis=-1, keepdims=True))
        return float(logprobs[np.arange(len(rows)), full_ids[start:]].sum())

    def score_texts(self, texts: Sequence[str], *, start_token: bool = False,
                    word_boundaries: bool = False) -> list[TokenScores | Failure]:
        """Token log-probabilities of whole texts, one text at a time (see ``Backend.score_texts``).

        The start-of-text token comes first when the model asks for it (as ``create_completion`` does),
        or when ``start_token`` is set; texts longer than the context are read in half-overlapping
        windows."""
        import numpy as np

        self._require_open()
        llama = self._with_logits()
        mask = self._word_start_mask() if word_boundaries else None
        results: list[TokenScores | Failure] = []
        for text in texts:
            add_bos = llama._model.add_bos_token() or start_token
            prefix = [llama.token_bos()] if add_bos and llama.token_bos() >= 0 else []
            if start_token and not prefix:
                prefix = [llama.token_eos()]
            ids = llama.tokenize(text.encode("utf-8"), add_bos=False, special=False)
            offsets = _char_offsets(llama, ids, text)
            all_ids = prefix + ids
            n = len(all_ids)
            logprobs: list[float | None] = [None] * n
            expected: list[float | None] = [None] * n
            variance: list[float | None] = [None] * n
            starts: list[float | None] = [None] * (n + 1)
            for begin, end, first in scoring_windows(n, llama.n_ctx()):
                llama.reset()
                llama.eval(all_ids[begin:end])
                rows = np.asarray(llama.scores[: end - begin], dtype=np.float64)
                logp = rows - rows.max(axis=-1, keepdims=True)
                logp -= np.log(np.exp(logp).sum(axis=-1, keepdims=True))
                probs = np.exp(logp)
                mean = (probs * logp).sum(-1)
                spread = np.maximum((probs * logp ** 2).sum(-1) - mean ** 2, 0.0)
                mass = probs @ mask if mask is not None else None
                for t in range(max(1, first - begin), end - begin):
                    logprobs[begin + t] = float(logp[t - 1, all_ids[begin + t]])
                    expected[begin + t] = float(mean[t - 1])
                    variance[begin + t] = float(spread[t - 1])
                if mass is not None:
                    for t in range(max(1, first - begin), end - begin + 1):
                        starts[begin + t] = float(mass[t - 1])
            skip = len(prefix)
            results.append(TokenScores(
                tokens=[text[a:b] for a, b in offsets], offsets=offsets, logprobs=logprobs[skip:],
                expected=expected[skip:], variance=variance[skip:],
                word_start=starts[skip:] if mask is not None else None))
        return results

    def _word_start_mask(self):
        """1.0 for tokens whose text starts with white space, and for end-of-text."""
        import numpy as np

        if getattr(self, "_word_starts", None) is None:
            llama = self.llama
            mask = np.zeros(llama.n_vocab(), dtype=np.float64)
            for token in range(llama.n_vocab()):
                piece = llama.detokenize([token], special=False)
                if piece[:1].isspace():
                    mask[token] = 1.0
            mask[llama.token_eos()] = 1.0
            self._word_starts = mask
        return self._word_starts

    def close(self) -> None:
        self._release()

    # ---- one request ---------------------------------------------------------------------------

    def _generate_one(self, request: Request) -> Result:
        params = request.params
        unknown_token = check_logit_bias(params, self.llama.n_vocab())
        if unknown_token:
            return unknown_token
        llama = self._with_logits() if params.logprobs else self.llama
        seed = request.seed if request.seed is not None else random.getrandbits(32)
        options: dict[str, Any] = {
            **_NEUTRAL_SAMPLING,
            "temperature": params.temperature,
            "top_p": params.top_p,
            "max_tokens": params.max_tokens,
            "stop": list(params.stop),
            "seed": seed % 2**32,
            "logit_bias": {int(token): float(bias) for token, bias in params.logit_bias} or None,
        }
        if params.min_tokens:
            # llama-cpp-python drops both its logit bias and a logits processor given together
            # (``list.extend`` returns None), so the bias goes into our processor.
            options["logits_processor"] = _min_tokens_processor(llama.token_eos(), params.min_tokens, params.logit_bias)
            options["logit_bias"] = None
        chat = request.messages is not None and self.is_chat
        started = time.perf_counter()
        try:
            if chat:
                messages = [{"role": m.role, "content": m.content} for m in request.messages or ()]
                if params.logprobs:
                    options.update(logprobs=True, top_logprobs=params.logprobs)
                response = llama.create_chat_completion(messages=messages, **options)
            else:
                prompt = request.prompt if request.prompt is not None else flatten_messages(request.messages or ())
                if params.logprobs:
                    options["logprobs"] = params.logprobs
                response = llama.create_completion(prompt=prompt, **options)
        except ValueError as exc:
            if "context window" in str(exc):
                return Failure(
                    f"The prompt and answer do not fit in this model's context ({llama.n_ctx()} tokens): {exc}. "
                    "Shorten the passage, lower the maximum answer length, or open the model with a larger context.",
                    kind="too_long",
                )
            raise
        latency_ms = (time.perf_counter() - started) * 1000
        choice = response["choices"][0]
        usage = response.get("usage") or {}
        return Generation(
            text=choice["message"]["content"] if chat else choice["text"],
            finish_reason=choice.get("finish_reason"),
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
            token_logprobs=_token_logprobs(choice.get("logprobs"), chat) if params.logprobs else None,
            latency_ms=latency_ms,
        )

    def _render(self, prompt: str | Sequence[Message]) -> tuple[str, list[int]]:
        """The text llama.cpp reads, and the beginning-of-text tokens to put before it."""
        llama = self.llama
        if isinstance(prompt, str) or not self.is_chat:
            text = prompt if isinstance(prompt, str) else flatten_messages(prompt)
            # As create_completion does: BOS only when the model asks for it.
            bos = [llama.token_bos()] if llama._model.add_bos_token() and llama.token_bos() >= 0 else []
            return text, bos
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        formatter = Jinja2ChatFormatter(
            template=self.chat_template,
            eos_token=_token_text(llama, llama.token_eos()),
            bos_token=_token_text(llama, llama.token_bos()),
        )
        rendered = formatter(messages=[{"role": m.role, "content": m.content} for m in prompt])
        return rendered.prompt, []  # the template writes its own special tokens

    def _require_open(self) -> None:
        if self.llama is None:
            raise BackendError("This model has been closed. Open it again to use it.")

    def _release(self) -> None:
        llama = getattr(self, "llama", None)
        self.llama = None
        if llama is not None:
            llama.close()


def _checked_gguf_path(path: str | os.PathLike) -> Path:
    path = Path(path).expanduser()
    if not path.exists():
        raise BackendError(f"There is no file at {path}. Check the path, or choose the GGUF file again.")
    if path.is_dir():
        raise BackendError(
            f"{path} is a folder. Choose the model's .gguf file itself (a transformers model folder opens with "
            "the transformers backend)."
        )
    with path.open("rb") as handle:
        magic = handle.read(len(GGUF_MAGIC))
    if magic != GGUF_MAGIC:
        raise BackendError(
            f"{path.name} is not a GGUF model file (it does not start the way GGUF files do). Choose a .gguf file, "
            "for example one downloaded from a model's GGUF page on the Hugging Face Hub."
        )
    return path


def _token_text(llama, token: int) -> str:
    if token < 0:
        return ""
    return llama.detokenize([token], special=True).decode("utf-8", errors="replace")


def _min_tokens_processor(eos: int, min_tokens: int, logit_bias: Sequence[tuple[int, float]]):
    """Add the logit bias, and forbid end-of-text for the first ``min_tokens`` tokens.

    llama.cpp calls the processor once per generated token.
    """
    import numpy as np
    from llama_cpp import LogitsProcessorList

    ids = np.array([token for token, _ in logit_bias], dtype=np.intc)
    values = np.array([value for _, value in logit_bias], dtype=np.single)
    calls = 0

    def bias_and_forbid_eos(input_ids, scores):
        nonlocal calls
        calls += 1
        scores = scores.copy()
        scores[ids] += values
        if calls <= min_tokens:
            scores[eos] = -math.inf
        return scores

    return LogitsProcessorList([bias_and_forbid_eos])


def _token_logprobs(logprobs: dict | None, chat: bool) -> list[tuple[str, float]] | None:
    if not logprobs:
        return None
    if chat:
        return [(item["token"], float(item["logprob"])) for item in logprobs.get("content") or []]
    return [(token, float(lp)) for token, lp in zip(logprobs["tokens"], logprobs["token_logprobs"])]


def _char_offsets(llama, ids: list[int], text: str) -> list[tuple[int, int]]:
    """Character offsets of llama.cpp tokens in ``text``: the growth of the decoded bytes, token by token
    (a token holding part of a character gets the character once it is complete)."""
    offsets, done, data = [], 0, b""
    for token in ids:
        data += llama.detokenize([token], special=False)
        now = min(len(text), len(data.decode("utf-8", errors="ignore")))
        offsets.append((done, now))
        done = now
    return offsets
