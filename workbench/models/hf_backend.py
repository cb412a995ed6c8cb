"""Local Hugging Face transformers models: causal LMs (generate, score) and masked LMs (fill the mask).

How requests are run
- Requests are grouped by their generation parameters (the seed aside), sorted by prompt length and
  sent in left-padded batches whose size comes from a token budget: a batch holds at most
  ``token_budget`` tokens counting each prompt's padded length plus ``max_tokens``, and at most
  ``max_batch_size`` requests.
- Out of memory: the batch is split in half and retried, and later batches stay at most that size;
  a single request that still does not fit becomes ``Failure(kind="oom")``.
- Only the request's parameters count: the model's own generation defaults (repetition penalties,
  top-k, ...) are not applied, so results are comparable across models.
- Temperature 0 is greedy decoding. Above 0, each request samples with its own random generator
  seeded with ``request.seed`` (the run's seed plus the sample index; see ``hf_sampling``), so the
  same request and seed give the same text whichever other requests share its batch. A request
  without a seed draws fresh randomness.
- ``token_logprobs`` (when ``params.logprobs`` is set) are the model's own log-probabilities of the
  generated tokens, before temperature and logit bias.
- ``latency_ms`` is the wall time of the batch the request ran in.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from workbench.errors import UserError
from workbench.models.base import (
    Backend,
    BackendError,
    Failure,
    Generation,
    GenerationParams,
    Message,
    NotSupported,
    Request,
    Result,
    TokenScores,
    check_logit_bias,
    scoring_windows,
)
from workbench.models.hf_locate import (
    Progress,
    has_safetensors,
    locate_model,
    pickle_loading_problem,
    weight_warnings,
)
from workbench.models.prompt_text import cut_at_stop, flatten_messages
from workbench.models.torch_env import choose_device, choose_dtype, free_memory, is_out_of_memory

DEFAULT_MAX_BATCH_SIZE = 64
# how tokenizers write a leading space or line break: byte-level BPE (GPT-2) and SentencePiece (Llama)
_WORD_START_MARKS = "\u0120\u010a\u0109\u2581"
_WHITE_SPACE_BYTES = {"<0x09>", "<0x0A>", "<0x0D>", "<0x20>"}
CPU_TOKEN_BUDGET = 8192
MPS_TOKEN_BUDGET = 16384


@dataclass
class _Prepared:
    index: int
    request: Request | None  # None for fill-mask texts
    ids: list[int]


class TransformersBackend(Backend):
    """A transformers model on this computer (CPU, NVIDIA GPU or Apple GPU).

    Parameters
    - ``ref``: a Hugging Face Hub id (``"gpt2"``, ``"EleutherAI/pythia-160m"``) or a model folder.
    - ``device``: ``"auto"`` (CUDA, then Apple MPS, then CPU), ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"mps"``.
    - ``dtype``: ``"auto"`` (bfloat16/float16 on a GPU, float32 on the CPU), ``"float32"``, ``"bfloat16"``,
      ``"float16"`` or a ``torch.dtype``.
    - ``chat``: ``None`` uses the tokenizer's chat template when it has one; ``True``/``False`` force it
      (``True`` needs a template).
    - ``trust_remote_code``: run Python code shipped with the model. Off unless the user allows it.
    - ``token_budget``: tokens per batch (prompt + answer, times batch size); ``None`` chooses one from
      the device (on CUDA: from the free memory and the model's key/value cache size).
    - ``max_batch_size``: upper limit on requests per batch.
    - ``local_files_only``: ``True`` never downloads; ``None`` downloads unless ``HF_HUB_OFFLINE`` is set.
    - ``progress``: ``progress(done_bytes, total_bytes, message)`` while downloading (e.g. ``TaskState.progress``).
    - ``cache_dir``: the Hugging Face cache folder to use instead of the default.
    """

    kind = "transformers"

    def __init__(
        self,
        ref: str | os.PathLike,
        *,
        device: str = "auto",
        dtype: Any = "auto",
        chat: bool | None = None,
        trust_remote_code: bool = False,
        token_budget: int | None = None,
        max_batch_size: int = DEFAULT_MAX_BATCH_SIZE,
        local_files_only: bool | None = None,
        progress: Progress | None = None,
        cache_dir: str | os.PathLike | None = None,
    ):
        self.folder = locate_model(ref, local_files_only=local_files_only, cache_dir=cache_dir, progress=progress)
        is_local = Path(str(ref)).expanduser().exists()
        self.model_name = str(self.folder.resolve()) if is_local else str(ref)
        #: how messages name the model: the folder's name, or the Hub id
        self.display_name = self.folder.name if is_local else str(ref)
        self.device = choose_device(device)
        self.dtype = choose_dtype(dtype, self.device)
        self.trust_remote_code = trust_remote_code
        self.tokenizer = self._load_tokenizer()
        self.config = self._load_config()
        self.is_masked = _is_masked_lm(self.config, self.tokenizer)
        self.model = self._load_model()
        self.is_chat = self._detect_chat(chat)
        self.max_batch_size = max(1, int(max_batch_size))
        self.token_budget = int(token_budget) if token_budget else self._default_token_budget()
        self._batch_cap = self.max_batch_size
        self.max_positions = _max_positions(self.config)
        self.eos_ids = _eos_ids(self.model, self.tokenizer)
        self.pad_id = _pad_id(self.model, self.tokenizer, self.eos_ids)
        if not self.is_masked:
            self._neutralize_generation_defaults()

    # ---- loading -------------------------------------------------------------------------------

    def _load_tokenizer(self):
        from transformers import AutoTokenizer

        try:
            return AutoTokenizer.from_pretrained(self.folder, trust_remote_code=self.trust_remote_code)
        except Exception as exc:
            raise _load_error(self.display_name, self.folder, "tokenizer", exc) from None

    def _load_config(self):
        from transformers import AutoConfig

        try:
            config = AutoConfig.from_pretrained(self.folder, trust_remote_code=self.trust_remote_code)
        except Exception as exc:
            raise _load_error(self.display_name, self.folder, "configuration", exc) from None
        if getattr(config, "is_encoder_decoder", False):
            raise BackendError(
                f"{self.display_name} is an encoder-decoder model (such as T5 or BART). Palimpsest can use "
                "text-generating models (GPT-style) and masked models (BERT-style); choose one of those."
            )
        return config

    def _load_model(self):
        from transformers import AutoModelForCausalLM, AutoModelForMaskedLM

        model_class = AutoModelForMaskedLM if self.is_masked else AutoModelForCausalLM
        safetensors = has_safetensors(self.folder)  # pickle weights only when there is nothing else
        if not safetensors:
            import torch

            problem = pickle_loading_problem(self.display_name, torch.__version__)
            if problem:
                raise BackendError(problem)
        #: said in the notes of every run that loads this model (``run_notes``)
        self.load_warnings = weight_warnings(self.folder, self.display_name)
        try:
            model = model_class.from_pretrained(
                self.folder,
                dtype=self.dtype,
                use_safetensors=safetensors,
                trust_remote_code=self.trust_remote_code,
            )
            return model.to(self.device).eval()
        except Exception as exc:
            if is_out_of_memory(exc):
                free_memory(self.device)
                raise BackendError(
                    f"There is not enough memory to load {self.display_name} on {self.device.type}. Close other "
                    "programs, choose a smaller model, or use the number format bfloat16 or float16."
                ) from None
            raise _load_error(self.display_name, self.folder, "model", exc) from None

    def run_notes(self, *, failures: bool) -> list[str]:
        return list(self.load_warnings)

    def _neutralize_generation_defaults(self) -> None:
        """Keep the model's end-of-text and padding ids, drop the rest of its generation defaults.

        ``generate`` fills every setting a call leaves unset from ``model.generation_config``
        (repetition penalties, suppressed tokens, n-gram blocking, ...), which would silently change
        results; a bare config leaves only the request's parameters.
        """
        from transformers import GenerationConfig

        self.model_generation_defaults = self.model.generation_config
        self.model.generation_config = GenerationConfig(
            bos_token_id=self.model_generation_defaults.bos_token_id,
            eos_token_id=self.eos_ids,
            pad_token_id=self.pad_id,
        )

    def _detect_chat(self, chat: bool | None) -> bool:
        has_template = bool(getattr(self.tokenizer, "chat_template", None))
        if self.is_masked:
            if chat:
                raise BackendError(f"{self.display_name} is a masked model (BERT-style); it cannot be used as a chat model.")
            return False
        if chat and not has_template:
            raise BackendError(
                f"{self.display_name} has no chat template, so it cannot be used as a chat model. "
                "Use it as a base model (chat off), or choose the instruction-tuned version of the model."
            )
        return has_template if chat is None else bool(chat)

    def _default_token_budget(self) -> int:
        if self.device.type == "cpu":
            return CPU_TOKEN_BUDGET
        if self.device.type != "cuda":
            return MPS_TOKEN_BUDGET
        import torch

        free, _ = torch.cuda.mem_get_info(self.device)
        per_token = _kv_bytes_per_token(self.config, self.dtype) * 2  # room for activations and logits
        return int(min(1 << 20, max(512, free * 0.6 // max(per_token, 1))))

    # ---- the Backend interface -----------------------------------------------------------------

    @property
    def capabilities(self) -> frozenset[str]:
        if self.is_masked:
            return frozenset({"fill_mask"})
        return frozenset({"generate", "continuation_logprob", "logprobs", "score_texts"})

    @property
    def mask_token(self) -> str | None:
        return self.tokenizer.mask_token if self.is_masked else None

    @property
    def context_tokens(self) -> int | None:
        """The model's positions (its config), or its tokenizer's limit where that is a real number and smaller
        (a tokenizer that knows none says 10^30)."""
        limit = getattr(self.tokenizer, "model_max_length", None)
        known = [n for n in (self.max_positions, limit) if isinstance(n, int) and 0 < n < 10_000_000]
        return min(known) if known else None

    def request_tokens(self, request: Request) -> int | None:
        return len(self._encode_request(request))

    def generate(self, requests: Sequence[Request]) -> Iterator[tuple[int, Result]]:
        self._require_causal("write text")
        groups: dict[GenerationParams, list[_Prepared]] = {}
        for index, request in enumerate(requests):
            prepared = _Prepared(index, request, self._encode_request(request))
            problem = self._check_request(prepared)
            if problem is not None:
                yield index, problem
                continue
            groups.setdefault(replace(request.params, seed=None), []).append(prepared)
        for params, group in groups.items():
            group.sort(key=lambda p: len(p.ids), reverse=True)
            start = 0
            while start < len(group):
                batch = self._next_batch(group, start, params.max_tokens)
                start += len(batch)
                yield from self._run_with_backoff(batch)

    def continuation_logprob(self, prompt: str | Sequence[Message], continuation: str) -> float:
        import torch

        self._require_causal("score a continuation")
        if not continuation:
            return 0.0
        text, special = self._render(prompt)
        prompt_ids = self._encode(text, special)
        full_ids = self._encode(text + continuation, special)
        # The continuation starts where the two tokenizations part: a token that merges the end of
        # the prompt with the start of the continuation counts as continuation.
        start = _common_prefix_length(prompt_ids, full_ids)
        if start == 0:  # no prompt tokens at all: condition on the start-of-text token
            full_ids, start = [self._start_token(), *full_ids], 1
        if self.max_positions and len(full_ids) > self.max_positions:
            raise UserError(
                f"The prompt and continuation are {len(full_ids)} tokens long, but this model reads at most "
                f"{self.max_positions} tokens at once. Shorten the text."
            )
        with torch.inference_mode():
            logits = self.model(torch.tensor([full_ids], device=self.device)).logits[0].float()
        logprobs = torch.log_softmax(logits[start - 1 : -1], dim=-1)
        targets = torch.tensor(full_ids[start:], device=self.device).unsqueeze(-1)
        return float(logprobs.gather(-1, targets).sum())

    def fill_mask(self, texts: Sequence[str], top_k: int = 5) -> list[list[tuple[str, float]]]:
        """Top-k fills per text with the model's probabilities; special tokens are not offered as fills."""
        if not self.is_masked:
            raise NotSupported(
                f"{self.display_name} is a text-generating model without a mask token; "
                "fill-in-the-mask needs a masked model such as BERT."
            )
        mask = self.tokenizer.mask_token
        for number, text in enumerate(texts, start=1):
            count = text.count(mask)
            if count != 1:
                raise UserError(f"Passage {number} must contain {mask} exactly once, but it contains it {count} times.")
        encoded = [self._encode(text, True) for text in texts]
        for number, ids in enumerate(encoded, start=1):
            if self.max_positions and len(ids) > self.max_positions:
                raise UserError(
                    f"Passage {number} is {len(ids)} tokens long, but this model reads at most "
                    f"{self.max_positions}. Shorten the passage."
                )
        if self.model is None:
            raise BackendError("This model has been closed. Open it again to use it.")
        queue = sorted((_Prepared(i, None, ids) for i, ids in enumerate(encoded)), key=lambda p: len(p.ids), reverse=True)
        fills: dict[int, list[tuple[str, float]]] = {}
        start = 0
        while start < len(queue):
            batch = self._next_batch(queue, start, 0)
            start += len(batch)
            for part, output in self._split_on_oom(batch, lambda part: self._fill_batch(part, top_k)):
                if output is None:
                    raise UserError(
                        f"There is not enough memory to read passage {part[0].index + 1} with this model. "
                        "Close other programs or shorten the passage."
                    )
                fills.update(output)
        return [fills[i] for i in range(len(texts))]

    def score_texts(self, texts: Sequence[str], *, start_token: bool = False,
                    word_boundaries: bool = False) -> list[TokenScores | Failure]:
        """Token log-probabilities of whole texts in padded batches (see ``Backend.score_texts``).

        A batch holds at most ``score_budget`` tokens, so that its logits (tokens x vocabulary) stay a few
        hundred megabytes; a text longer than the model's context is read in half-overlapping windows."""
        self._require_causal("score a text")
        prepared = self._scoring_tokens(texts, start_token)
        mask = self._word_start_mask() if word_boundaries else None
        width = self.max_positions or (1 << 30)
        slots = [_ScoreSlots(len(ids)) for ids, _, _ in prepared]
        pieces = [(index, start, end, first) for index, (ids, _, _) in enumerate(prepared)
                  for start, end, first in scoring_windows(len(ids), width)]
        pieces.sort(key=lambda piece: piece[2] - piece[1], reverse=True)
        failed: dict[int, Failure] = {}
        budget = self.score_budget
        position = 0
        while position < len(pieces):
            batch = _similar_lengths(pieces, position, budget, self._batch_cap)
            position += len(batch)
            for part, output in self._split_on_oom(batch, lambda part: self._score_batch(part, prepared, mask)):
                if output is None:
                    failed[part[0][0]] = Failure(
                        f"The model ran out of memory reading a text of {len(prepared[part[0][0]][0])} tokens. "
                        "Close other programs, or use a smaller model or number format.", kind="oom")
                    continue
                for (index, start, end, first), values in zip(part, output):
                    slots[index].fill(start, end, first, values)
        results: list[TokenScores | Failure] = []
        for index, (text, (_ids, offsets, special)) in enumerate(zip(texts, prepared)):
            results.append(failed[index] if index in failed else slots[index].scores(text, offsets, special, mask is not None))
        return results

    @property
    def score_budget(self) -> int:
        """Tokens per scoring batch: the token budget, and at most ~32 million logits."""
        vocab = self.model.get_output_embeddings().weight.shape[0]
        return max(1, min(self.token_budget, (1 << 25) // max(vocab, 1)))

    def _scoring_tokens(self, texts: Sequence[str], start_token: bool) -> list[tuple[list[int], list, list[bool]]]:
        """Per text: token ids, character offsets and which tokens are special, as the tokenizer encodes it
        (all texts in one call of a fast tokenizer)."""
        if getattr(self.tokenizer, "is_fast", False):
            out = self.tokenizer(list(texts), return_offsets_mapping=True, return_special_tokens_mask=True)
            encoded = [(list(ids), [tuple(o) for o in offsets], [bool(m) for m in special])
                       for ids, offsets, special in zip(out["input_ids"], out["offset_mapping"],
                                                        out["special_tokens_mask"])]
        else:
            specials = set(self.tokenizer.all_special_ids)
            encoded = []
            for text in texts:
                ids = self._encode(text, True)
                special = [i in specials for i in ids]
                encoded.append((ids, _offsets_by_decoding(self.tokenizer, ids, special, len(text)), special))
        if not start_token:
            return encoded
        start = self._start_token()
        return [(ids, offsets, special) if special and special[0] else
                ([start, *ids], [(0, 0), *offsets], [True, *special]) for ids, offsets, special in encoded]

    def _word_start_mask(self):
        """1.0 for tokens that begin a new word (they start with white space) and for end-of-text."""
        import torch

        if getattr(self, "_word_starts", None) is None:
            vocab = self.model.get_output_embeddings().weight.shape[0]
            pieces = self.tokenizer.convert_ids_to_tokens(list(range(min(vocab, len(self.tokenizer)))))
            mask = torch.zeros(vocab, dtype=torch.float32)
            for token_id, piece in enumerate(pieces):
                if piece and (piece[0] in _WORD_START_MARKS or piece[0].isspace() or piece in _WHITE_SPACE_BYTES):
                    mask[token_id] = 1.0
            for token_id in self.eos_ids:
                if token_id < vocab:
                    mask[token_id] = 1.0
            self._word_starts = mask.to(self.device)
        return self._word_starts

    def _score_batch(self, part, prepared, mask) -> list[dict]:
        """Per window of ``part``: the values at each of its places, from one forward pass.

        The windows are padded on the right and read without an attention mask: in a causal model a
        token sees only those before it, so padding after a text changes nothing of it, and the model
        can use its plain causal attention. The values are computed only at real tokens, all windows
        at once, and cross to the CPU as a few flat arrays."""
        import torch

        windows = [prepared[index][0][start:end] for index, start, end, _ in part]
        lengths = [len(w) for w in windows]
        width = max(lengths)
        input_ids = torch.tensor([w + [self.pad_id] * (width - len(w)) for w in windows], device=self.device)
        real = torch.arange(width, device=self.device) < torch.tensor(lengths, device=self.device).unsqueeze(1)
        following = torch.cat([input_ids[:, 1:], input_ids[:, :1]], dim=1)[real]  # junk after each last token
        with torch.inference_mode():
            logits = self.model(input_ids=input_ids, use_cache=False).logits[real].float()
            logp = torch.log_softmax(logits, dim=-1)
            del logits
            probs = logp.exp()
            weighted = probs * logp
            expected = weighted.sum(-1)
            variance = (torch.linalg.vecdot(weighted, logp) - expected.square()).clamp_min(0.0)
            del weighted
            chosen = logp.gather(-1, following.unsqueeze(-1)).squeeze(-1)
            starts = (probs @ mask).cpu().tolist() if mask is not None else None
        chosen, expected, variance = chosen.cpu().tolist(), expected.cpu().tolist(), variance.cpu().tolist()
        out, offset = [], 0
        for n in lengths:
            out.append({
                "logprobs": chosen[offset : offset + n - 1],
                "expected": expected[offset : offset + n - 1],
                "variance": variance[offset : offset + n - 1],
                "word_start": starts[offset : offset + n] if starts is not None else None,
            })
            offset += n
        return out

    def close(self) -> None:
        model = getattr(self, "model", None)
        if model is not None:
            self.model = None
            del model
            free_memory(self.device)

    # ---- preparing requests --------------------------------------------------------------------

    def _require_causal(self, action: str) -> None:
        if self.is_masked:
            raise NotSupported(
                f"{self.display_name} is a masked model (BERT-style): it fills in {self.tokenizer.mask_token} "
                f"but cannot {action}. Use it for the masked-model baseline, or choose a GPT-style model."
            )
        if self.model is None:
            raise BackendError("This model has been closed. Open it again to use it.")

    def _render(self, prompt: str | Sequence[Message]) -> tuple[str, bool]:
        """The text the model reads, and whether the tokenizer should add its special tokens."""
        if isinstance(prompt, str):
            return prompt, True
        if self.is_chat:
            chat = [{"role": m.role, "content": m.content} for m in prompt]
            return self.tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True), False
        return flatten_messages(prompt), True

    def _encode(self, text: str, add_special_tokens: bool) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=add_special_tokens)["input_ids"])

    def _encode_request(self, request: Request) -> list[int]:
        if request.messages is not None:
            ids = self._encode(*self._render(request.messages))
        else:
            ids = self._encode(request.prompt or "", True)
        return ids or [self._start_token()]  # an empty prompt starts from the start-of-text token

    def _start_token(self) -> int:
        bos = self.tokenizer.bos_token_id
        return bos if bos is not None else (self.eos_ids[0] if self.eos_ids else self.pad_id)

    def _check_request(self, prepared: _Prepared) -> Failure | None:
        params = prepared.request.params
        length = len(prepared.ids)
        if self.max_positions and length + params.max_tokens > self.max_positions:
            return Failure(
                f"The prompt is {length} tokens and up to {params.max_tokens} more were asked for, but this "
                f"model reads at most {self.max_positions} tokens at once. Shorten the passage or lower the "
                "maximum answer length.",
                kind="too_long",
            )
        return check_logit_bias(params, self.model.get_output_embeddings().weight.shape[0])

    def _next_batch(self, group: list[_Prepared], start: int, max_tokens: int) -> list[_Prepared]:
        """As many requests from ``start`` as fit the token budget and the batch-size limit."""
        width = len(group[start].ids)  # the group is sorted longest first
        per_request = width + max_tokens
        size = max(1, min(self._batch_cap, self.token_budget // max(per_request, 1)))
        return group[start : start + size]

    # ---- running batches -----------------------------------------------------------------------

    def _run_with_backoff(self, batch: list[_Prepared]) -> Iterator[tuple[int, Result]]:
        for part, output in self._split_on_oom(batch, self._generate_batch):
            if output is None:
                yield part[0].index, Failure(
                    f"The model ran out of memory on this prompt even on its own ({len(part[0].ids)} tokens, "
                    f"up to {part[0].request.params.max_tokens} more). Shorten the passage, lower the maximum "
                    "answer length, or use a smaller model or number format.",
                    kind="oom",
                )
            else:
                yield from output

    def _split_on_oom(self, batch: list[_Prepared], run: Callable[[list[_Prepared]], Any]):
        """Yield ``(part, run(part))``, halving a part that runs out of memory; ``None`` for a lone one."""
        pending = [batch]
        while pending:
            part = pending.pop(0)
            try:
                output = run(part)
            except Exception as exc:
                if not is_out_of_memory(exc):
                    raise
                output = None
            else:
                yield part, output
                continue
            # Out of memory. Freed here, outside the except block, so the traceback's tensors are gone.
            free_memory(self.device)
            if len(part) == 1:
                yield part, None
                continue
            half = len(part) // 2
            self._batch_cap = min(self._batch_cap, half)
            pending[:0] = [part[:half], part[half:]]

    def _generate_batch(self, batch: list[_Prepared]) -> list[tuple[int, Result]]:
        """Generate for requests that share their parameters (seeds aside) in one padded batch."""
        import torch
        from transformers import GenerationConfig, LogitsProcessorList, StoppingCriteriaList

        from workbench.models.hf_sampling import LogitBias, SeededSampler, StopOnStrings

        params = batch[0].request.params
        width = max(len(p.ids) for p in batch)
        input_ids = torch.tensor([[self.pad_id] * (width - len(p.ids)) + p.ids for p in batch], device=self.device)
        attention_mask = torch.tensor([[0] * (width - len(p.ids)) + [1] * len(p.ids) for p in batch], device=self.device)
        processors = LogitsProcessorList()
        if params.logit_bias:
            processors.append(LogitBias(params.logit_bias))
        if params.temperature > 0:
            processors.append(SeededSampler([p.request.seed for p in batch], params.temperature, params.top_p))
        criteria = StoppingCriteriaList([StopOnStrings(self.tokenizer, params.stop, width)] if params.stop else [])
        config = GenerationConfig(
            max_new_tokens=params.max_tokens,
            min_new_tokens=params.min_tokens or None,
            do_sample=False,
            num_beams=1,
            eos_token_id=self.eos_ids,
            pad_token_id=self.pad_id,
            return_dict_in_generate=True,
            output_logits=bool(params.logprobs),
        )
        started = time.perf_counter()
        with torch.inference_mode():
            output = self.model.generate(
                input_ids=input_ids,
                attention_mask=attention_mask,
                generation_config=config,
                logits_processor=processors,
                stopping_criteria=criteria,
            )
        latency_ms = (time.perf_counter() - started) * 1000
        new_tokens = output.sequences[:, width:]
        logprobs = _chosen_logprobs(output.logits, new_tokens) if params.logprobs else None
        return [
            (
                p.index,
                self._finish(
                    p,
                    new_tokens[row].tolist(),
                    logprobs[row].tolist() if logprobs is not None else None,
                    latency_ms,
                ),
            )
            for row, p in enumerate(batch)
        ]

    def _finish(self, prepared: _Prepared, tokens: list[int], logprobs: list[float] | None, latency_ms: float) -> Generation:
        """Cut one row at end-of-text or the first stop string and describe it."""
        eos = set(self.eos_ids)
        end = next((i for i, token in enumerate(tokens) if token in eos), None)
        finish_reason = "stop" if end is not None else "length"
        tokens = tokens if end is None else tokens[:end]
        decode = lambda ids: self.tokenizer.decode(ids, skip_special_tokens=True)  # noqa: E731
        text = decode(tokens)
        stops = prepared.request.params.stop
        if stops:
            text, stopped = cut_at_stop(text, stops)
            if stopped:
                finish_reason = "stop"
                used = next(k for k in range(1, len(tokens) + 1) if cut_at_stop(decode(tokens[:k]), stops)[1])
                tokens = tokens[:used]
        token_logprobs = None
        if logprobs is not None:
            token_logprobs = [(decode([token]), lp) for token, lp in zip(tokens, logprobs)]
        return Generation(
            text=text,
            finish_reason=finish_reason,
            prompt_tokens=len(prepared.ids),
            completion_tokens=len(tokens),
            token_logprobs=token_logprobs,
            latency_ms=latency_ms,
        )

    def _fill_batch(self, batch: list[_Prepared], top_k: int) -> dict[int, list[tuple[str, float]]]:
        import torch

        width = max(len(p.ids) for p in batch)
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        input_ids = torch.tensor([p.ids + [pad] * (width - len(p.ids)) for p in batch], device=self.device)
        attention_mask = torch.tensor([[1] * len(p.ids) + [0] * (width - len(p.ids)) for p in batch], device=self.device)
        with torch.inference_mode():
            logits = self.model(input_ids=input_ids, attention_mask=attention_mask).logits
        rows, columns = (input_ids == self.tokenizer.mask_token_id).nonzero(as_tuple=True)
        probs = torch.softmax(logits[rows, columns].float(), dim=-1)
        # Special tokens ([SEP], [CLS], ...) are no answer: they keep their share of the probability
        # but are left out of the ranking.
        ranked = probs.clone()
        ranked[:, self.tokenizer.all_special_ids] = -1.0
        top = ranked.topk(min(top_k, probs.shape[-1]), dim=-1)
        return {
            batch[row].index: [
                (self.tokenizer.decode([token]).strip(), float(prob))
                for token, prob in zip(top.indices[i].tolist(), top.values[i].tolist())
            ]
            for i, row in enumerate(rows.tolist())
        }


# ---- small helpers ------------------------------------------------------------------------------


def _is_masked_lm(config, tokenizer) -> bool:
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    )

    architectures = getattr(config, "architectures", None) or []
    if any(name.endswith("ForMaskedLM") for name in architectures):
        return True
    if any(name.endswith(("ForCausalLM", "LMHeadModel")) for name in architectures):
        return False
    model_type = getattr(config, "model_type", "")
    if model_type in MODEL_FOR_MASKED_LM_MAPPING_NAMES and tokenizer.mask_token is not None:
        return True
    if model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        return False
    raise BackendError(
        f"Palimpsest does not know how to use a '{model_type}' model. It can use text-generating models "
        "(GPT-style) and masked models (BERT-style)."
    )


def _load_error(name: str, folder: Path, part: str, exc: Exception) -> BackendError:
    text = str(exc)
    if "trust_remote_code" in text:
        return BackendError(
            f"{name} ships its own Python code, which Palimpsest runs only if you allow it for this model "
            "(the 'trust remote code' option). Allow it only for a model from a source you trust."
        )
    return BackendError(f"The {part} in {folder} could not be loaded ({text.strip() or type(exc).__name__}).")


def _max_positions(config) -> int | None:
    for name in ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length"):
        value = getattr(config, name, None)
        if isinstance(value, int) and value > 0:
            return value
    return None


def _eos_ids(model, tokenizer) -> list[int]:
    eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    if eos is None:
        eos = tokenizer.eos_token_id
    if eos is None:
        return []
    return list(eos) if isinstance(eos, (list, tuple)) else [int(eos)]


def _pad_id(model, tokenizer, eos_ids: list[int]) -> int:
    for candidate in (tokenizer.pad_token_id, getattr(getattr(model, "generation_config", None), "pad_token_id", None)):
        if candidate is not None:
            return int(candidate)
    return eos_ids[0] if eos_ids else 0


def _similar_lengths(pieces: list[tuple[int, int, int, int]], position: int, budget: int, cap: int) -> list:
    """The next scoring batch from ``pieces`` (longest first): at most ``cap`` of them and ``budget`` padded
    tokens, ending before a piece shorter than 3/4 of the first, so that padding stays under a quarter."""
    longest = pieces[position][2] - pieces[position][1]
    size = max(1, min(cap, budget // max(longest, 1)))
    end = position + 1
    while end < min(len(pieces), position + size) and 4 * (pieces[end][2] - pieces[end][1]) >= 3 * longest:
        end += 1
    return pieces[position:end]


def _kv_bytes_per_token(config, dtype) -> int:
    import torch

    layers = getattr(config, "num_hidden_layers", 32)
    heads = getattr(config, "num_attention_heads", 32)
    kv_heads = getattr(config, "num_key_value_heads", None) or heads
    head_dim = getattr(config, "head_dim", None) or getattr(config, "hidden_size", 4096) // heads
    return 2 * layers * kv_heads * head_dim * torch.tensor([], dtype=dtype).element_size()


def _chosen_logprobs(step_logits, tokens):
    """Log-probability of each generated token under the model's raw scores at its step."""
    import torch

    columns = [
        torch.log_softmax(logits.float(), dim=-1).gather(-1, tokens[:, step : step + 1])
        for step, logits in enumerate(step_logits)
    ]
    return torch.cat(columns, dim=-1).cpu()


def _common_prefix_length(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


class _ScoreSlots:
    """One text's per-token values, filled window by window (``score_texts``)."""

    def __init__(self, length: int):
        self.logprobs: list[float | None] = [None] * length
        self.expected: list[float | None] = [None] * length
        self.variance: list[float | None] = [None] * length
        self.word_start: list[float | None] = [None] * (length + 1)

    def fill(self, start: int, end: int, first: int, values: dict) -> None:
        # local position t (>= 1) of the window is predicted from position t - 1: values[...][t - 1]
        low = max(1, first - start)
        self.logprobs[start + low : end] = values["logprobs"][low - 1 : end - start - 1]
        self.expected[start + low : end] = values["expected"][low - 1 : end - start - 1]
        self.variance[start + low : end] = values["variance"][low - 1 : end - start - 1]
        if values["word_start"] is not None:
            self.word_start[start + low : end + 1] = values["word_start"][low - 1 : end - start]

    def scores(self, text: str, offsets, special, with_word_start: bool) -> TokenScores:
        if not any(special):  # the usual case for a tokenizer without a start token: all of it, as it is
            return TokenScores(
                tokens=[text[a:b] for a, b in offsets], offsets=[(int(a), int(b)) for a, b in offsets],
                logprobs=self.logprobs, expected=self.expected, variance=self.variance,
                word_start=self.word_start if with_word_start else None)
        keep = [i for i, s in enumerate(special) if not s]
        after = keep[-1] + 1 if keep else len(special)
        return TokenScores(
            tokens=[text[offsets[i][0] : offsets[i][1]] for i in keep],
            offsets=[(int(offsets[i][0]), int(offsets[i][1])) for i in keep],
            logprobs=[self.logprobs[i] for i in keep],
            expected=[self.expected[i] for i in keep],
            variance=[self.variance[i] for i in keep],
            word_start=[self.word_start[i] for i in keep] + [self.word_start[after]] if with_word_start else None,
        )


def _offsets_by_decoding(tokenizer, ids: list[int], special: list[bool], length: int) -> list[tuple[int, int]]:
    """Character offsets of tokens for a tokenizer that cannot give them: the growth of the decoded text."""
    offsets, done = [], 0
    real = []
    for token_id, is_special in zip(ids, special):
        if is_special:
            offsets.append((done, done))
            continue
        real.append(token_id)
        now = min(length, len(tokenizer.decode(real)))
        offsets.append((done, now))
        done = now
    return offsets
