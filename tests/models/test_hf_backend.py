"""TransformersBackend on the tiny real models built by the test session (no mocks, no network)."""

from __future__ import annotations

import json
import shutil

import pytest
import torch

from workbench.errors import UserError
from workbench.jobs import Unit, create_run, responses_frame, run_job
from workbench.models.base import (
    BackendError,
    Failure,
    Generation,
    GenerationParams,
    Message,
    NotSupported,
    Request,
    prompt_request,
)
from workbench.models.calls import generation_process
from workbench.models.hf_backend import TransformersBackend
from workbench.models.hf_locate import _progress_bar_class
from workbench.models.prompt_text import flatten_messages
from workbench.models.torch_env import choose_device, choose_dtype

PROMPTS = [
    "The lighthouse keeper",
    "In the village below, the baker Rosalind",
    "One night",
    "Her brother Casimir came back from the sea in the spring of the wet year. He brought",
]
GREEDY = GenerationParams(max_tokens=12)


@pytest.fixture(scope="module")
def causal(tiny_causal_dir):
    backend = TransformersBackend(tiny_causal_dir)
    yield backend
    backend.close()


@pytest.fixture(scope="module")
def chat(tiny_chat_dir):
    backend = TransformersBackend(tiny_chat_dir)
    yield backend
    backend.close()


@pytest.fixture(scope="module")
def mlm(tiny_mlm_dir):
    backend = TransformersBackend(tiny_mlm_dir)
    yield backend
    backend.close()


def run_all(backend, requests):
    results = list(backend.generate(requests))
    assert sorted(i for i, _ in results) == list(range(len(requests))), "one result per request"
    return [result for _, result in sorted(results, key=lambda pair: pair[0])]


def texts(backend, requests):
    results = run_all(backend, requests)
    assert all(isinstance(r, Generation) for r in results), results
    return [r.text for r in results]


class RecordingBackend(TransformersBackend):
    """Records the size of every batch it runs."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.batch_sizes: list[int] = []
        self.batch_tokens: list[int] = []  # padded prompt length + max_tokens, times the batch size

    def _generate_batch(self, batch):
        self.batch_sizes.append(len(batch))
        width = max(len(p.ids) for p in batch) + batch[0].request.params.max_tokens
        self.batch_tokens.append(width * len(batch))
        return super()._generate_batch(batch)


class OutOfMemoryAbove(RecordingBackend):
    """Runs out of memory (a real ``torch.OutOfMemoryError``) on batches larger than ``limit``."""

    limit = 2

    def _generate_batch(self, batch):
        if len(batch) > self.limit:
            self.batch_sizes.append(-len(batch))
            raise torch.OutOfMemoryError(f"CUDA out of memory (test: batch of {len(batch)})")
        return super()._generate_batch(batch)


# ---- generation --------------------------------------------------------------------------------


def test_one_generation_per_request_with_token_counts(causal):
    requests = [Request(prompt=p, params=GREEDY) for p in PROMPTS]
    results = run_all(causal, requests)
    for prompt, result in zip(PROMPTS, results):
        assert isinstance(result, Generation)
        assert result.prompt_tokens == len(causal.tokenizer(prompt)["input_ids"])
        assert 0 < result.completion_tokens <= GREEDY.max_tokens
        assert result.finish_reason in {"length", "stop"}
        assert result.latency_ms is not None and result.latency_ms > 0
        assert result.text == causal.tokenizer.decode(causal.tokenizer(result.text)["input_ids"])


def test_generations_are_stored_raw_by_the_job_runner(causal, project):
    prompts = dict(enumerate(PROMPTS[:3], start=1))
    run_id = create_run(project, "test-generation", params=GREEDY.as_dict())
    units = [Unit(item, 0) for item in prompts]
    process = generation_process(causal, lambda unit: Request(prompt=prompts[unit.item_id], params=GREEDY))
    report = run_job(project, run_id, units, process)
    assert report.status == "done" and report.failed == 0
    stored = responses_frame(project, run_id).set_index("item_id")
    expected = texts(causal, [Request(prompt=prompts[i], params=GREEDY) for i in prompts])
    assert list(stored.loc[list(prompts), "raw"]) == expected
    assert list(stored.loc[list(prompts), "prompt"]) == list(prompts.values())
    assert (stored["completion_tokens"] > 0).all() and (stored["status"] == "ok").all()


def test_greedy_is_deterministic(causal):
    requests = [Request(prompt=p, params=GREEDY) for p in PROMPTS]
    assert texts(causal, requests) == texts(causal, requests)


def test_batched_greedy_equals_one_at_a_time_with_left_padding(tiny_causal_dir):
    backend = RecordingBackend(tiny_causal_dir)
    requests = [Request(prompt=p, params=GREEDY) for p in PROMPTS]
    lengths = {len(backend.tokenizer(p)["input_ids"]) for p in PROMPTS}
    assert len(lengths) == len(PROMPTS), "prompts of different lengths, so the batch needs padding"
    batched = texts(backend, requests)
    assert backend.batch_sizes == [len(PROMPTS)], "greedy requests run as one batch"
    alone = [texts(backend, [r])[0] for r in requests]
    assert batched == alone
    assert len(set(batched)) == len(PROMPTS), "the continuation depends on the prompt"


def test_token_budget_limits_the_batch_size(tiny_causal_dir):
    backend = RecordingBackend(tiny_causal_dir)
    longest = max(len(backend.tokenizer(p)["input_ids"]) for p in PROMPTS)
    backend.token_budget = 2 * (longest + GREEDY.max_tokens)
    texts(backend, [Request(prompt=p, params=GREEDY) for p in PROMPTS])
    assert backend.batch_sizes[0] == 2, "the longest prompts come first, two fit"
    assert sum(backend.batch_sizes) == len(PROMPTS) and len(backend.batch_sizes) > 1
    assert all(tokens <= backend.token_budget for tokens in backend.batch_tokens)


def test_same_seed_gives_the_same_sample_whatever_shares_the_batch(causal):
    params = GenerationParams(temperature=1.0, max_tokens=16, seed=11)
    target = Request(prompt=PROMPTS[2], params=params, sample=3)
    alone = texts(causal, [target])[0]
    others = [Request(prompt=p, params=params, sample=s) for p in PROMPTS for s in range(2)]
    in_batch = texts(causal, [*others, target])[-1]
    assert in_batch == alone
    draws = texts(causal, [Request(prompt=PROMPTS[2], params=params, sample=s) for s in range(6)])
    assert len(set(draws)) > 1, "different samples are different draws"
    greedy = texts(causal, [Request(prompt=PROMPTS[2], params=GREEDY.__class__(max_tokens=16))])[0]
    assert any(d != greedy for d in draws), "temperature 1 samples rather than decoding greedily"


def test_stop_string_cuts_the_text(causal):
    full = texts(causal, [Request(prompt=PROMPTS[0], params=GREEDY)])[0]
    words = full.split()
    stop = words[2]
    assert full.find(stop) > 0
    params = GenerationParams(max_tokens=GREEDY.max_tokens, stop=(stop, "zzzz-never"))
    result = run_all(causal, [Request(prompt=PROMPTS[0], params=params)])[0]
    assert result.text == full[: full.find(stop)]
    assert result.finish_reason == "stop"
    assert result.completion_tokens < GREEDY.max_tokens


def test_logit_bias_forces_a_token(causal):
    token = causal.tokenizer.convert_tokens_to_ids("Ġparrot") if "Ġparrot" in causal.tokenizer.get_vocab() else 300
    word = causal.tokenizer.decode([token])
    plain = texts(causal, [Request(prompt=PROMPTS[0], params=GREEDY)])[0]
    assert word not in plain
    biased = texts(causal, [Request(prompt=PROMPTS[0], params=GenerationParams(max_tokens=4, logit_bias=((token, 100.0),)))])
    assert biased[0] == word * 4


def test_logit_bias_with_an_unknown_token_id_fails_that_request(causal):
    result = run_all(causal, [Request(prompt="x", params=GenerationParams(logit_bias=((10**6, 5.0),)))])[0]
    assert isinstance(result, Failure) and "token id 1000000" in result.error


def test_min_tokens_keeps_the_model_talking(causal):
    eos = causal.eos_ids[0]
    ends_at_once = GenerationParams(max_tokens=10, logit_bias=((eos, 100.0),))
    first = run_all(causal, [Request(prompt=PROMPTS[0], params=ends_at_once)])[0]
    assert first.text == "" and first.completion_tokens == 0 and first.finish_reason == "stop"
    at_least_five = GenerationParams(max_tokens=10, logit_bias=((eos, 100.0),), min_tokens=5)
    second = run_all(causal, [Request(prompt=PROMPTS[0], params=at_least_five)])[0]
    assert second.completion_tokens == 5 and second.finish_reason == "stop" and second.text


def test_logprobs_are_the_models_scores_of_the_generated_tokens(causal):
    params = GenerationParams(max_tokens=8, logprobs=1)
    result = run_all(causal, [Request(prompt=PROMPTS[1], params=params)])[0]
    assert len(result.token_logprobs) == result.completion_tokens
    assert "".join(token for token, _ in result.token_logprobs) == result.text
    assert all(lp <= 0 for _, lp in result.token_logprobs)
    total = sum(lp for _, lp in result.token_logprobs)
    assert total == pytest.approx(causal.continuation_logprob(PROMPTS[1], result.text), abs=1e-4)
    assert run_all(causal, [Request(prompt=PROMPTS[1], params=GREEDY)])[0].token_logprobs is None


def test_too_long_prompt_is_a_failure_not_a_crash(causal):
    long_prompt = "lighthouse " * 600
    results = run_all(causal, [Request(prompt=long_prompt, params=GREEDY), Request(prompt=PROMPTS[0], params=GREEDY)])
    assert isinstance(results[0], Failure) and results[0].kind == "too_long"
    assert "at most 512 tokens" in results[0].error
    assert isinstance(results[1], Generation)


# ---- chat --------------------------------------------------------------------------------------


def test_chat_mode_follows_the_tokenizers_template(causal, chat, tiny_chat_dir, tiny_causal_dir):
    assert chat.is_chat and not causal.is_chat
    assert not TransformersBackend(tiny_chat_dir, chat=False).is_chat
    with pytest.raises(BackendError, match="no chat template"):
        TransformersBackend(tiny_causal_dir, chat=True)


def test_chat_request_uses_the_template_and_base_model_gets_flat_text(causal, chat):
    messages = (Message("system", "You keep a lighthouse."), Message("user", "What happened in October?"))
    templated = chat.tokenizer.apply_chat_template(
        [{"role": m.role, "content": m.content} for m in messages], tokenize=False, add_generation_prompt=True
    )
    request = Request(messages=messages, params=GREEDY)
    on_chat = run_all(chat, [request])[0]
    assert on_chat.prompt_tokens == len(chat.tokenizer(templated, add_special_tokens=False)["input_ids"])
    assert on_chat.text == texts(chat, [Request(prompt=templated, params=GREEDY)])[0]
    on_base = run_all(causal, [request])[0]
    flat = flatten_messages(messages)
    assert flat == "You keep a lighthouse.\n\nWhat happened in October?"
    assert on_base.prompt_tokens == len(causal.tokenizer(flat)["input_ids"])
    assert prompt_request(chat, "hello", GREEDY).is_chat and not prompt_request(causal, "hello", GREEDY).is_chat


def test_flattened_multi_turn_chat_ends_with_the_assistant():
    messages = (Message("user", "Hi"), Message("assistant", "Hello."), Message("user", "Who kept the lamp?"))
    assert flatten_messages(messages) == "User: Hi\n\nAssistant: Hello.\n\nUser: Who kept the lamp?\n\nAssistant:"


# ---- scoring -----------------------------------------------------------------------------------


def test_continuation_logprob_equals_a_manual_computation(causal):
    prompt, continuation = "The lighthouse keeper", " of Marrow Point"
    tok, model = causal.tokenizer, causal.model
    prompt_ids = tok(prompt)["input_ids"]
    continuation_ids = tok(continuation)["input_ids"]
    assert tok(prompt + continuation)["input_ids"] == prompt_ids + continuation_ids  # a clean boundary
    with torch.no_grad():
        logits = model(torch.tensor([prompt_ids + continuation_ids])).logits[0]
    logprobs = torch.log_softmax(logits, dim=-1)
    manual = sum(float(logprobs[len(prompt_ids) - 1 + i, t]) for i, t in enumerate(continuation_ids))
    assert causal.continuation_logprob(prompt, continuation) == pytest.approx(manual, abs=1e-5)
    assert causal.continuation_logprob(prompt, " of Marrow Point") > causal.continuation_logprob(prompt, " of Parrot Bread")
    assert causal.continuation_logprob(prompt, "") == 0.0


def test_continuation_logprob_scores_a_chat_after_its_template(chat):
    messages = (Message("user", "Tell me about the lamp."),)
    templated = chat.tokenizer.apply_chat_template(
        [{"role": "user", "content": "Tell me about the lamp."}], tokenize=False, add_generation_prompt=True
    )
    assert chat.continuation_logprob(messages, "It went out") == pytest.approx(
        chat.continuation_logprob(templated, "It went out"), abs=1e-6
    )


def test_continuation_logprob_with_a_merged_boundary_scores_the_merged_token(causal):
    # Split a sentence inside a word, where the prompt's last token merges with the continuation's first.
    tok = causal.tokenizer
    sentence = "The lighthouse keeper of Marrow Point"
    for cut in range(5, len(sentence)):
        prompt, continuation = sentence[:cut], sentence[cut:]
        prompt_ids, full_ids = tok(prompt)["input_ids"], tok(sentence)["input_ids"]
        if full_ids[: len(prompt_ids)] != prompt_ids:
            break
    else:
        pytest.fail("no split merges tokens")
    shared = next(i for i, (a, b) in enumerate(zip(prompt_ids, full_ids)) if a != b)
    with torch.no_grad():
        logprobs = torch.log_softmax(causal.model(torch.tensor([full_ids])).logits[0], dim=-1)
    manual = sum(float(logprobs[i - 1, full_ids[i]]) for i in range(shared, len(full_ids)))
    assert causal.continuation_logprob(prompt, continuation) == pytest.approx(manual, abs=1e-5)


# ---- masked models -----------------------------------------------------------------------------


def test_fill_mask_returns_top_k_fills_like_the_pipeline(mlm, tiny_mlm_dir):
    from transformers import pipeline

    assert mlm.mask_token == "[MASK]" and not mlm.is_chat and "fill_mask" in mlm.capabilities
    passages = ["the lighthouse [MASK] of marrow point", "one night in october the [MASK] went out completely"]
    fills = mlm.fill_mask(passages, top_k=4)
    assert [len(f) for f in fills] == [4, 4]
    for passage_fills in fills:
        probs = [p for _, p in passage_fills]
        assert probs == sorted(probs, reverse=True) and all(0 < p <= 1 for p in probs) and sum(probs) <= 1
    specials = set(mlm.tokenizer.all_special_tokens)
    assert not any(token in specials for passage_fills in fills for token, _ in passage_fills)
    reference = pipeline("fill-mask", model=str(tiny_mlm_dir))(passages[0], top_k=4 + len(specials))
    reference = [r for r in reference if r["token_str"].strip() not in specials][:4]
    assert [t for t, _ in fills[0]] == [r["token_str"].strip() for r in reference]
    assert [p for _, p in fills[0]] == pytest.approx([r["score"] for r in reference], abs=1e-6)
    swapped = mlm.fill_mask([passages[1], passages[0]], top_k=4)[1]
    assert [t for t, _ in swapped] == [t for t, _ in fills[0]]
    assert [p for _, p in swapped] == pytest.approx([p for _, p in fills[0]], abs=1e-6)


def test_fill_mask_needs_exactly_one_mask(mlm):
    with pytest.raises(UserError, match="exactly once"):
        mlm.fill_mask(["no mask here"])


def test_masked_model_cannot_generate_and_causal_model_cannot_fill(mlm, causal):
    with pytest.raises(NotSupported, match="masked model"):
        list(mlm.generate([Request(prompt="the lamp")]))
    with pytest.raises(NotSupported, match="mask"):
        causal.fill_mask(["the [MASK]"])
    assert causal.mask_token is None


# ---- running out of memory ---------------------------------------------------------------------


def test_out_of_memory_halves_the_batch_and_keeps_every_result(tiny_causal_dir, causal):
    prompts = [f"{p} and" for p in PROMPTS] + PROMPTS[:3]
    requests = [Request(prompt=p, params=GREEDY) for p in prompts]
    backend = OutOfMemoryAbove(tiny_causal_dir)
    results = texts(backend, requests)
    assert results == texts(causal, requests)
    assert backend.batch_sizes[0] == -7, "the first try was the whole batch"
    assert all(size <= 2 for size in backend.batch_sizes if size > 0)
    assert backend._batch_cap <= 2, "later batches stay small"
    texts(backend, requests)
    assert all(size > 0 for size in backend.batch_sizes[len(backend.batch_sizes) - 4 :]), "no more failed tries"


def test_a_single_request_that_still_runs_out_of_memory_is_a_failure(tiny_causal_dir):
    backend = OutOfMemoryAbove(tiny_causal_dir)
    backend.limit = 0
    results = run_all(backend, [Request(prompt=p, params=GREEDY) for p in PROMPTS[:3]])
    assert all(isinstance(r, Failure) and r.kind == "oom" for r in results)
    assert "ran out of memory" in results[0].error and "Shorten the passage" in results[0].error


# ---- finding and loading models ----------------------------------------------------------------


def test_hub_model_missing_offline_says_it_is_not_on_this_computer():
    with pytest.raises(BackendError) as caught:
        TransformersBackend("palimpsest-tests/no-such-model-anywhere")
    message = str(caught.value)
    assert "'palimpsest-tests/no-such-model-anywhere' is not on this computer" in message
    assert "offline" in message and "connect to the internet" in message
    assert "hf download palimpsest-tests/no-such-model-anywhere" in message


def test_hub_model_in_the_local_cache_loads_offline(tiny_causal_dir, tmp_path):
    revision = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "models--palimpsest-tests--tiny"
    shutil.copytree(tiny_causal_dir, repo / "snapshots" / revision)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(revision)
    backend = TransformersBackend("palimpsest-tests/tiny", cache_dir=tmp_path)
    assert backend.model_name == "palimpsest-tests/tiny"
    assert texts(backend, [Request(prompt=PROMPTS[0], params=GREEDY)])[0].startswith(" of Marrow")


@pytest.mark.parametrize(
    "make, expected",
    [
        (lambda tmp: tmp / "missing-folder", "There is no model folder at"),
        (lambda tmp: tmp, "no config.json"),
        (lambda tmp: (tmp / "model.gguf").write_bytes(b"GGUF") and tmp / "model.gguf", "llama.cpp"),
        (lambda tmp: "not a model id!", "neither a folder on this computer nor a Hugging Face model id"),
    ],
)
def test_wrong_local_paths_get_clear_messages(tmp_path, make, expected):
    with pytest.raises(BackendError, match=expected):
        TransformersBackend(make(tmp_path))


def test_folder_without_weights_says_so(tiny_causal_dir, tmp_path):
    folder = tmp_path / "no-weights"
    shutil.copytree(tiny_causal_dir, folder)
    (folder / "model.safetensors").unlink()
    with pytest.raises(BackendError, match="has no model weights"):
        TransformersBackend(folder)


def test_safetensors_are_preferred_and_pickle_weights_are_only_a_fallback(tiny_causal_dir, causal, tmp_path):
    from safetensors.torch import load_file

    both = tmp_path / "both"
    shutil.copytree(tiny_causal_dir, both)
    (both / "pytorch_model.bin").write_bytes(b"not a pickle: loading this would fail")
    assert texts(TransformersBackend(both), [Request(prompt=PROMPTS[0], params=GREEDY)]) == texts(
        causal, [Request(prompt=PROMPTS[0], params=GREEDY)]
    )
    only_pickle = tmp_path / "only-pickle"
    shutil.copytree(tiny_causal_dir, only_pickle)
    torch.save(load_file(only_pickle / "model.safetensors"), only_pickle / "pytorch_model.bin")
    (only_pickle / "model.safetensors").unlink()
    assert texts(TransformersBackend(only_pickle), [Request(prompt=PROMPTS[0], params=GREEDY)]) == texts(
        causal, [Request(prompt=PROMPTS[0], params=GREEDY)]
    )


def test_model_with_its_own_code_needs_permission(tiny_causal_dir, tmp_path):
    folder = tmp_path / "custom-code"
    shutil.copytree(tiny_causal_dir, folder)
    config = json.loads((folder / "config.json").read_text())
    config["model_type"] = "palimpsest-custom"
    config["auto_map"] = {"AutoConfig": "custom.CustomConfig", "AutoModelForCausalLM": "custom.CustomModel"}
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "custom.py").write_text("raise RuntimeError('remote code must not run in this test')\n")
    with pytest.raises(BackendError, match="trust remote code"):
        TransformersBackend(folder)


def test_device_and_number_format_choices(tiny_causal_dir):
    assert choose_device("cpu").type == "cpu"
    assert choose_dtype("auto", torch.device("cpu")) == torch.float32
    assert choose_dtype("bf16", torch.device("cpu")) == torch.bfloat16
    with pytest.raises(BackendError, match="number format"):
        choose_dtype("float8-please", torch.device("cpu"))
    with pytest.raises(BackendError, match="not a device"):
        choose_device("abacus")
    if not torch.cuda.is_available():
        with pytest.raises(BackendError, match="No NVIDIA GPU"):
            choose_device("cuda")
    backend = TransformersBackend(tiny_causal_dir, device="cpu", dtype="bfloat16")
    assert next(backend.model.parameters()).dtype == torch.bfloat16
    assert isinstance(run_all(backend, [Request(prompt=PROMPTS[0], params=GREEDY)])[0], Generation)


def test_download_progress_reaches_the_callback():
    seen = []
    bar = _progress_bar_class("org/model", lambda done, total, message: seen.append((done, total, message)))(
        total=1000, unit="B", desc="Downloading bytes"
    )
    bar.update(400)
    bar.update(600)
    bar.close()
    assert seen == [(400, 1000, "Downloading org/model"), (1000, 1000, "Downloading org/model")]


def test_close_is_safe_twice_and_stops_use(tiny_causal_dir):
    backend = TransformersBackend(tiny_causal_dir)
    backend.close()
    backend.close()
    with pytest.raises(BackendError, match="closed"):
        list(backend.generate([Request(prompt="x")]))


def test_the_models_own_generation_defaults_do_not_change_results(tiny_causal_dir, causal, tmp_path):
    folder = tmp_path / "opinionated-defaults"
    shutil.copytree(tiny_causal_dir, folder)
    config_path = folder / "generation_config.json"
    config = json.loads(config_path.read_text())
    first_token = causal.tokenizer(texts(causal, [Request(prompt=PROMPTS[0], params=GREEDY)])[0])["input_ids"][0]
    config.update(
        repetition_penalty=3.0, no_repeat_ngram_size=1, suppress_tokens=[first_token], do_sample=True, temperature=5.0, top_k=2
    )
    config_path.write_text(json.dumps(config))
    opinionated = TransformersBackend(folder)
    requests = [Request(prompt=p, params=GREEDY) for p in PROMPTS]
    assert texts(opinionated, requests) == texts(causal, requests)


def test_an_empty_prompt_starts_from_the_start_of_text_token(causal):
    result = run_all(causal, [Request(prompt="", params=GenerationParams(max_tokens=5, min_tokens=5))])[0]
    assert isinstance(result, Generation) and result.prompt_tokens == 1 and result.completion_tokens == 5
    assert causal.continuation_logprob("", "The lighthouse") < 0


def test_a_tokenizer_without_pad_token_and_with_right_padding_still_batches_correctly(tiny_causal_dir, causal, tmp_path):
    # Like the original GPT-2 tokenizer: no pad token, padding on the right.
    folder = tmp_path / "gpt2-like"
    shutil.copytree(tiny_causal_dir, folder)
    config_path = folder / "tokenizer_config.json"
    config = json.loads(config_path.read_text())
    config.update(padding_side="right", pad_token=None)
    config_path.write_text(json.dumps(config))
    backend = TransformersBackend(folder)
    assert backend.tokenizer.pad_token is None and backend.tokenizer.padding_side == "right"
    requests = [Request(prompt=p, params=GREEDY) for p in PROMPTS]
    assert texts(backend, requests) == texts(causal, requests) == [texts(causal, [r])[0] for r in requests]
