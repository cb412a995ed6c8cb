"""The OpenAI-compatible backend against a real llama_cpp.server, directly and through the fault proxy."""

from __future__ import annotations

import time

import pytest

from tests.fixtures.fake_keys import fake_key
from tests.fixtures.fault_proxy import Fault
from tests.fixtures.servers import free_port, token_id
from workbench.models.base import BackendError, Failure, Generation, GenerationParams, Message, Request
from workbench.models.openai_backend import OpenAIBackend

KEY_VAR = "PALIMPSEST_TEST_OPENAI_KEY"


def chat(text: str, **params) -> Request:
    return Request(messages=(Message("user", text),), params=GenerationParams(**params))


def backend_for(url: str, **kw) -> OpenAIBackend:
    kw.setdefault("max_retries", 2)
    return OpenAIBackend("tiny", base_url=url, **kw)


def only_result(backend: OpenAIBackend, request: Request):
    results = list(backend.generate([request]))
    assert [i for i, _ in results] == [0]
    return results[0][1]


# ---------------------------------------------------------------------------------------------- answers
def test_chat_answers_every_request_with_usage(llama_server):
    with backend_for(llama_server.base_url, concurrency=3) as backend:
        requests = [chat(f"Tell me about book {i}.", max_tokens=6, min_tokens=2) for i in range(5)]
        results = dict(backend.generate(requests))
    assert sorted(results) == list(range(5))
    for result in results.values():
        assert isinstance(result, Generation), result
        assert isinstance(result.text, str) and result.text
        assert result.prompt_tokens > 0
        assert 2 <= result.completion_tokens <= 6
        assert result.latency_ms > 0


def test_completion_mode_returns_token_logprobs(llama_server):
    with backend_for(llama_server.base_url, chat=False) as backend:
        assert not backend.is_chat
        result = only_result(backend, Request(prompt="The parrot", params=GenerationParams(
            max_tokens=5, min_tokens=5, logprobs=1)))
    assert isinstance(result, Generation), result
    assert result.completion_tokens == 5
    assert len(result.token_logprobs) == 5
    assert all(lp <= 0 for _, lp in result.token_logprobs)
    assert "".join(t for t, _ in result.token_logprobs) == result.text


def test_temperature_zero_with_a_seed_repeats_itself(llama_server):
    request = chat("Once upon a time", max_tokens=8, min_tokens=8, temperature=0.0, seed=7)
    with backend_for(llama_server.base_url) as backend:
        first = only_result(backend, request)
        second = only_result(backend, request)
    assert first.text == second.text


def test_logit_bias_and_stop_reach_the_server(llama_server):
    forced = ((token_id(llama_server, " parrot"), 100.0),)
    with backend_for(llama_server.base_url) as backend:
        biased = only_result(backend, chat("Say something.", max_tokens=4, logit_bias=forced))
        stopped = only_result(backend, chat("Say something.", max_tokens=4, logit_bias=forced, stop=(" parrot",)))
    assert biased.text == " parrot" * 4
    assert (stopped.text, stopped.finish_reason) == ("", "stop")


def test_a_chat_sent_to_a_completion_model_fails_plainly(llama_server):
    with backend_for(llama_server.base_url, chat=False) as backend:
        result = only_result(backend, chat("hello"))
    assert isinstance(result, Failure) and not result.fatal
    assert "chat mode" in result.error


# ---------------------------------------------------------------------------------------------- concurrency
def test_concurrency_is_bounded(fault_proxy):
    fault_proxy.always(Fault.slow(0.3))
    with backend_for(fault_proxy.base_url, concurrency=3) as backend:
        results = list(backend.generate([chat(f"q{i}", max_tokens=2) for i in range(9)]))
    assert len(results) == 9 and all(isinstance(r, Generation) for _, r in results)
    assert 1 < fault_proxy.max_in_flight <= 3
    assert len(fault_proxy.posts()) == 9


def test_closing_the_generator_cancels_requests_not_started(fault_proxy):
    fault_proxy.always(Fault.slow(0.4))
    backend = backend_for(fault_proxy.base_url, concurrency=2)
    results = backend.generate([chat(f"q{i}", max_tokens=2) for i in range(12)])
    next(results)
    results.close()
    backend.close()
    time.sleep(1.0)  # let the requests already in flight arrive
    assert len(fault_proxy.posts()) <= 4  # two in flight, at most two more picked up before the close


# ---------------------------------------------------------------------------------------------- retries
def test_rate_limit_is_retried_after_the_servers_retry_after(fault_proxy):
    fault_proxy.script(Fault.rate_limited(retry_after=1.5))
    with backend_for(fault_proxy.base_url) as backend:
        result = only_result(backend, chat("hello", max_tokens=2))
    assert isinstance(result, Generation), result
    first, second = fault_proxy.posts()
    assert (first.fault, second.fault) == ("status", "ok")
    # the client's own backoff would wait at most 0.5 s; it waited as long as the server asked
    assert second.at - first.at >= 1.4


def test_retry_after_ms_is_honoured_too(fault_proxy):
    fault_proxy.script(Fault.rate_limited(retry_after_ms=1200))
    with backend_for(fault_proxy.base_url) as backend:
        assert isinstance(only_result(backend, chat("hello", max_tokens=2)), Generation)
    first, second = fault_proxy.posts()
    assert second.at - first.at >= 1.1


def test_server_errors_are_retried_then_succeed(fault_proxy):
    fault_proxy.script(Fault.server_error(500), Fault.server_error(503))
    with backend_for(fault_proxy.base_url) as backend:
        result = only_result(backend, chat("hello", max_tokens=2))
    assert isinstance(result, Generation), result
    assert [r.fault for r in fault_proxy.posts()] == ["status", "status", "ok"]


def test_persistent_server_errors_fail_the_item_only(fault_proxy):
    fault_proxy.always(Fault.server_error(500))
    with backend_for(fault_proxy.base_url, max_retries=1) as backend:
        result = only_result(backend, chat("hello", max_tokens=2))
    assert isinstance(result, Failure)
    assert (result.kind, result.fatal) == ("server", False)
    assert "HTTP 500" in result.error
    assert len(fault_proxy.posts()) == 2  # the first try and one retry


def test_persistent_rate_limit_fails_the_item_with_advice(fault_proxy):
    fault_proxy.always(Fault.rate_limited(retry_after_ms=10))
    with backend_for(fault_proxy.base_url, max_retries=2) as backend:
        result = only_result(backend, chat("hello", max_tokens=2))
    assert (result.kind, result.fatal) == ("rate_limit", False)
    assert "concurrency" in result.error
    assert len(fault_proxy.posts()) == 3


def test_slow_answers_time_out_and_are_retried(fault_proxy):
    fault_proxy.script(Fault.slow(3.0))
    with backend_for(fault_proxy.base_url, timeout=0.5) as backend:
        result = only_result(backend, chat("hello", max_tokens=2))
    assert isinstance(result, Generation), result
    assert [r.fault for r in fault_proxy.posts()] == ["slow", "ok"]


def test_a_server_that_never_answers_in_time_fails_the_item(fault_proxy):
    fault_proxy.always(Fault.slow(3.0))
    with backend_for(fault_proxy.base_url, timeout=0.3, max_retries=1) as backend:
        result = only_result(backend, chat("hello", max_tokens=2))
    assert (result.kind, result.fatal) == ("timeout", False)
    assert "0.3 seconds" in result.error


def test_cut_connections_are_retried(fault_proxy):
    fault_proxy.script(Fault.cut(), Fault.cut())
    with backend_for(fault_proxy.base_url) as backend:
        result = only_result(backend, chat("hello", max_tokens=2))
    assert isinstance(result, Generation), result
    assert [r.fault for r in fault_proxy.posts()] == ["cut", "cut", "ok"]


def test_persistently_cut_connections_fail_the_item_not_the_run(fault_proxy):
    fault_proxy.always(Fault.cut())
    with backend_for(fault_proxy.base_url, max_retries=1) as backend:
        result = only_result(backend, chat("hello", max_tokens=2))
    assert (result.kind, result.fatal) == ("connection", False)


def test_malformed_json_is_retried_then_read(fault_proxy):
    fault_proxy.script(Fault.malformed_json())
    with backend_for(fault_proxy.base_url) as backend:
        result = only_result(backend, chat("hello", max_tokens=2))
    assert isinstance(result, Generation), result
    assert [r.fault for r in fault_proxy.posts()] == ["body", "ok"]


@pytest.mark.parametrize("fault", [Fault.malformed_json(), Fault.wrong_shape()], ids=["not-json", "wrong-shape"])
def test_persistently_malformed_answers_fail_the_item(fault_proxy, fault):
    fault_proxy.always(fault)
    with backend_for(fault_proxy.base_url, malformed_retries=2) as backend:
        results = dict(backend.generate([chat("a", max_tokens=2), chat("b", max_tokens=2)]))
    for result in results.values():
        assert (result.kind, result.fatal) == ("malformed", False)
        assert "could not be read" in result.error
    assert len(fault_proxy.posts()) == 6  # 2 requests x 3 tries


# ---------------------------------------------------------------------------------------------- fatal
def test_a_refused_key_is_fatal_and_names_the_variable(fault_proxy, monkeypatch):
    monkeypatch.setenv(KEY_VAR, fake_key("test-REFUSED-0123456789abcdef"))
    fault_proxy.always(Fault.status_error(401, "Incorrect API key provided: " + fake_key("test-REFUSED-0123456789abcdef")))
    with backend_for(fault_proxy.base_url, api_key_env=KEY_VAR, concurrency=1) as backend:
        results = dict(backend.generate([chat(f"q{i}", max_tokens=2) for i in range(5)]))
    assert all(r.fatal and r.kind == "auth" for r in results.values())
    message = results[0].error
    assert "refused the API key" in message and KEY_VAR in message
    assert "REFUSED" not in "".join(r.error for r in results.values())
    assert len(fault_proxy.posts()) == 1  # 401 is not retried; the rest were never sent


def test_forbidden_is_fatal_too(fault_proxy, monkeypatch):
    monkeypatch.setenv(KEY_VAR, fake_key("test-forbidden-0123456789"))
    fault_proxy.always(Fault.status_error(403, "not allowed"))
    with backend_for(fault_proxy.base_url, api_key_env=KEY_VAR) as backend:
        result = only_result(backend, chat("hello"))
    assert result.fatal and "HTTP 403" in result.error and KEY_VAR in result.error


def test_the_key_is_sent_as_a_bearer_token(fault_proxy, monkeypatch):
    monkeypatch.setenv(KEY_VAR, fake_key("test-bearer-0123456789"))
    with backend_for(fault_proxy.base_url, api_key_env=KEY_VAR) as backend:
        assert isinstance(only_result(backend, chat("hello", max_tokens=2)), Generation)
    headers = {k.lower(): v for k, v in fault_proxy.posts()[0].headers.items()}
    assert headers["authorization"] == "Bearer " + fake_key("test-bearer-0123456789")


def test_an_unreachable_server_is_fatal_and_named():
    url = f"http://127.0.0.1:{free_port()}/v1"
    with backend_for(url, max_retries=1) as backend:
        results = dict(backend.generate([chat("a"), chat("b"), chat("c")]))
    assert all(r.fatal and r.kind == "connection" for r in results.values())
    assert url in results[0].error


def test_an_unknown_model_is_fatal(fault_proxy):
    fault_proxy.always(Fault.status_error(404, "The model 'tiny' does not exist"))
    with backend_for(fault_proxy.base_url) as backend:
        result = only_result(backend, chat("hello"))
    assert result.fatal and "'tiny'" in result.error and "/v1" in result.error


def test_an_empty_account_is_fatal(fault_proxy, monkeypatch):
    monkeypatch.setenv(KEY_VAR, fake_key("test-quota-0123456789"))
    fault_proxy.always(Fault.status_error(429, "You exceeded your current quota.", "insufficient_quota"))
    with backend_for(fault_proxy.base_url, api_key_env=KEY_VAR, max_retries=0) as backend:
        result = only_result(backend, chat("hello"))
    assert result.fatal and "no credit" in result.error and KEY_VAR in result.error


def test_a_too_long_prompt_fails_only_its_item(fault_proxy):
    fault_proxy.script(Fault.status_error(400, "This model's maximum context length is 512 tokens."))
    with backend_for(fault_proxy.base_url, concurrency=1) as backend:
        results = dict(backend.generate([chat("long", max_tokens=2), chat("short", max_tokens=2)]))
    assert (results[0].kind, results[0].fatal) == ("too_long", False)
    assert isinstance(results[1], Generation)


def test_a_missing_key_variable_is_explained():
    with pytest.raises(BackendError) as info:
        OpenAIBackend("gpt-4o-mini", api_key_env="PALIMPSEST_SURELY_UNSET_VARIABLE")
    message = str(info.value)
    assert "PALIMPSEST_SURELY_UNSET_VARIABLE" in message and "export" in message and "setx" in message


def test_server_models_are_listed(llama_server):
    with backend_for(llama_server.base_url) as backend:
        assert backend.list_models() == ["tiny"]


def test_the_run_note_says_how_failures_were_tried_only_of_failures_that_were_tried(fault_proxy):
    """A request the server refuses outright (HTTP 400) is never tried again: a note saying each failure was
    tried three times would contradict the failure listed beside it."""
    fault_proxy.always(Fault.status_error(400, "bad request"))
    with backend_for(fault_proxy.base_url, max_retries=2) as backend:
        result = only_result(backend, chat("hello"))
        assert isinstance(result, Failure) and "HTTP 400" in result.error
        assert len(fault_proxy.posts()) == 1
        assert backend.run_notes(failures=True) == [
            "The server refused the failed requests outright, so they were not tried again."]
    fault_proxy.reset()
    fault_proxy.always(Fault.server_error(500))
    with backend_for(fault_proxy.base_url, max_retries=2) as backend:
        assert isinstance(only_result(backend, chat("hello")), Failure)
        (note,) = backend.run_notes(failures=True)
        assert "tried up to 3 times" in note
