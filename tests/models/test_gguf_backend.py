"""LlamaCppBackend on the tiny GGUF built by the test session, checked against transformers on the same weights."""

from __future__ import annotations

import os

import pytest
import torch

from tests.fixtures.tiny_model_builders import build_tiny_gguf
from workbench.errors import UserError
from workbench.models.base import BackendError, Failure, Generation, GenerationParams, Message, Request
from workbench.models.gguf_backend import LlamaCppBackend
from workbench.models.hf_backend import TransformersBackend
from workbench.models.prompt_text import flatten_messages

PROMPTS = ["The lighthouse keeper", "In the village below, the baker Rosalind", "One night"]
GREEDY = GenerationParams(max_tokens=12)


@pytest.fixture(scope="module")
def gguf(tiny_gguf_path):
    backend = LlamaCppBackend(tiny_gguf_path, n_ctx=256, n_threads=1)
    yield backend
    backend.close()


@pytest.fixture(scope="module")
def hf_chat(tiny_chat_dir):
    backend = TransformersBackend(tiny_chat_dir)
    yield backend
    backend.close()


@pytest.fixture(scope="module")
def base_gguf_path(tmp_path_factory, tiny_causal_dir):
    return build_tiny_gguf(tmp_path_factory.mktemp("base-gguf") / "tiny-base.gguf", hf_dir=tiny_causal_dir)


def run_all(backend, requests):
    results = list(backend.generate(requests))
    assert sorted(i for i, _ in results) == list(range(len(requests))), "one result per request"
    return [result for _, result in sorted(results, key=lambda pair: pair[0])]


def texts(backend, requests):
    results = run_all(backend, requests)
    assert all(isinstance(r, Generation) for r in results), results
    return [r.text for r in results]


def test_one_generation_per_request_with_token_counts(gguf, hf_chat):
    results = run_all(gguf, [Request(prompt=p, params=GREEDY) for p in PROMPTS])
    for prompt, result in zip(PROMPTS, results):
        assert result.prompt_tokens == len(hf_chat.tokenizer(prompt)["input_ids"])
        assert result.completion_tokens == GREEDY.max_tokens and result.finish_reason == "length"
        assert result.latency_ms > 0


def test_greedy_output_is_deterministic_and_matches_transformers_on_the_same_weights(gguf, hf_chat):
    requests = [Request(prompt=p, params=GREEDY) for p in PROMPTS]
    first = texts(gguf, requests)
    assert first == texts(gguf, list(reversed(requests)))[::-1]
    assert first == texts(hf_chat, requests)
    assert len(set(first)) == len(PROMPTS)


def test_llama_cpp_token_ids_agree_with_the_transformers_tokenizer(gguf, hf_chat):
    samples = [
        "The lighthouse keeper of Marrow Point",
        "Casimir's parrot said 401!  Twice,\n\nthen   stopped.",
        "Héloïse — naïve café, 東京, emoji 🐦 and tabs\there",
        "<|im_start|>user\nhello<|im_end|>\n",
    ]
    for text in samples:
        assert gguf.llama.tokenize(text.encode("utf-8"), add_bos=False, special=True) == hf_chat.tokenizer(text)["input_ids"]


def test_same_seed_gives_the_same_sample(gguf):
    params = GenerationParams(temperature=1.0, max_tokens=16, seed=5)
    requests = [Request(prompt=PROMPTS[2], params=params, sample=s) for s in range(5)]
    draws = texts(gguf, requests)
    assert texts(gguf, [requests[3]])[0] == draws[3]
    assert texts(gguf, requests) == draws
    assert len(set(draws)) > 1, "different samples are different draws"


def test_stop_string_cuts_the_text(gguf):
    full = texts(gguf, [Request(prompt=PROMPTS[0], params=GREEDY)])[0]
    stop = full.split()[2]
    result = run_all(gguf, [Request(prompt=PROMPTS[0], params=GenerationParams(max_tokens=12, stop=(stop,)))])[0]
    assert result.text == full[: full.find(stop)] and result.finish_reason == "stop"


def test_logit_bias_forces_a_token(gguf):
    token = 300
    word = gguf.llama.detokenize([token]).decode("utf-8")
    assert word not in texts(gguf, [Request(prompt=PROMPTS[0], params=GREEDY)])[0]
    biased = texts(gguf, [Request(prompt=PROMPTS[0], params=GenerationParams(max_tokens=4, logit_bias=((token, 100.0),)))])
    assert biased[0] == word * 4
    bad = run_all(gguf, [Request(prompt="x", params=GenerationParams(logit_bias=((10**6, 1.0),)))])[0]
    assert isinstance(bad, Failure) and "token id 1000000" in bad.error


def test_min_tokens_keeps_the_model_talking(gguf):
    eos = gguf.llama.token_eos()
    ends_at_once = run_all(gguf, [Request(prompt=PROMPTS[0], params=GenerationParams(max_tokens=10, logit_bias=((eos, 100.0),)))])[0]
    assert ends_at_once.text == "" and ends_at_once.finish_reason == "stop"
    params = GenerationParams(max_tokens=10, logit_bias=((eos, 100.0),), min_tokens=5)
    result = run_all(gguf, [Request(prompt=PROMPTS[0], params=params)])[0]
    assert result.completion_tokens == 5 and result.finish_reason == "stop" and result.text


def test_logprobs_load_the_full_scores_only_when_asked(tiny_gguf_path, hf_chat):
    backend = LlamaCppBackend(tiny_gguf_path, n_ctx=256, n_threads=1)
    run_all(backend, [Request(prompt=PROMPTS[1], params=GREEDY)])
    assert backend._logits_all is False
    result = run_all(backend, [Request(prompt=PROMPTS[1], params=GenerationParams(max_tokens=8, logprobs=1))])[0]
    assert backend._logits_all is True
    assert len(result.token_logprobs) == result.completion_tokens == 8
    assert "".join(token for token, _ in result.token_logprobs) == result.text
    total = sum(lp for _, lp in result.token_logprobs)
    assert total == pytest.approx(backend.continuation_logprob(PROMPTS[1], result.text), abs=1e-3)
    assert total == pytest.approx(hf_chat.continuation_logprob(PROMPTS[1], result.text), abs=0.05)
    backend.close()


def test_chat_mode_comes_from_the_file(gguf, tiny_gguf_path, base_gguf_path):
    assert gguf.is_chat and gguf.chat_template
    assert not LlamaCppBackend(tiny_gguf_path, chat=False, n_ctx=64).is_chat
    base = LlamaCppBackend(base_gguf_path, n_ctx=64)
    assert not base.is_chat
    with pytest.raises(BackendError, match="no chat template"):
        LlamaCppBackend(base_gguf_path, chat=True, n_ctx=64)


def test_chat_request_uses_the_files_template(gguf, hf_chat, base_gguf_path):
    messages = (Message("system", "You keep a lighthouse."), Message("user", "What happened in October?"))
    templated = hf_chat.tokenizer.apply_chat_template(
        [{"role": m.role, "content": m.content} for m in messages], tokenize=False, add_generation_prompt=True
    )
    result = run_all(gguf, [Request(messages=messages, params=GREEDY)])[0]
    assert result.prompt_tokens == len(hf_chat.tokenizer(templated, add_special_tokens=False)["input_ids"])
    assert result.text == texts(hf_chat, [Request(messages=messages, params=GREEDY)])[0]
    with_logprobs = run_all(gguf, [Request(messages=messages, params=GenerationParams(max_tokens=6, logprobs=1))])[0]
    assert len(with_logprobs.token_logprobs) == with_logprobs.completion_tokens
    base = LlamaCppBackend(base_gguf_path, n_ctx=256, n_threads=1)
    flat = run_all(base, [Request(messages=messages, params=GREEDY)])[0]
    assert flat.prompt_tokens == len(hf_chat.tokenizer(flatten_messages(messages))["input_ids"])
    assert flat.text == texts(base, [Request(prompt=flatten_messages(messages), params=GREEDY)])[0]


def test_continuation_logprob_agrees_with_a_manual_computation_in_transformers(gguf, hf_chat):
    prompt, continuation = "The lighthouse keeper", " of Marrow Point"
    tok = hf_chat.tokenizer
    prompt_ids, continuation_ids = tok(prompt)["input_ids"], tok(continuation)["input_ids"]
    with torch.no_grad():
        logits = hf_chat.model(torch.tensor([prompt_ids + continuation_ids])).logits[0]
    logprobs = torch.log_softmax(logits, dim=-1)
    manual = sum(float(logprobs[len(prompt_ids) - 1 + i, t]) for i, t in enumerate(continuation_ids))
    assert gguf.continuation_logprob(prompt, continuation) == pytest.approx(manual, abs=0.02)
    messages = (Message("user", "Tell me about the lamp."),)
    assert gguf.continuation_logprob(messages, "It went out") == pytest.approx(
        hf_chat.continuation_logprob(messages, "It went out"), abs=0.02
    )
    assert gguf.continuation_logprob(prompt, "") == 0.0


def test_too_long_prompt_is_a_failure(tiny_gguf_path):
    backend = LlamaCppBackend(tiny_gguf_path, n_ctx=64, n_threads=1)
    result = run_all(backend, [Request(prompt="lighthouse " * 100, params=GREEDY)])[0]
    assert isinstance(result, Failure) and result.kind == "too_long" and "context" in result.error
    with pytest.raises(UserError, match="larger context size"):
        backend.continuation_logprob("lighthouse " * 100, " keeper")
    backend.close()


@pytest.mark.parametrize(
    "content",
    [os.urandom(4096), b"This is a note about a book, not a model.\n" * 20, b"GGUF" + os.urandom(64)],
    ids=["random-bytes", "text-file", "damaged-gguf"],
)
def test_a_file_that_is_not_a_usable_gguf_gets_a_clear_message(tmp_path, content):
    path = tmp_path / "notes-for-chapter-3.gguf"
    path.write_bytes(content)
    with pytest.raises(BackendError, match="notes-for-chapter-3.gguf") as caught:
        LlamaCppBackend(path)
    assert "GGUF" in str(caught.value)


def test_missing_file_and_folder_get_clear_messages(tmp_path):
    with pytest.raises(BackendError, match="There is no file at .*missing.gguf"):
        LlamaCppBackend(tmp_path / "missing.gguf")
    with pytest.raises(BackendError, match="is a folder"):
        LlamaCppBackend(tmp_path)


def test_close_is_safe_twice_and_stops_use(tiny_gguf_path):
    backend = LlamaCppBackend(tiny_gguf_path, n_ctx=64)
    backend.close()
    backend.close()
    with pytest.raises(BackendError, match="closed"):
        list(backend.generate([Request(prompt="x")]))
