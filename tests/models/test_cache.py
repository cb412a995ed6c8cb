"""The response cache: identical requests are answered from the project; calls counted at the server."""

from __future__ import annotations

import threading

from tests.fixtures.fault_proxy import Fault
from workbench import jobs
from workbench.models.base import Failure, Generation, GenerationParams, Message, Request
from workbench.models.cache import CachedBackend, cache_size, cache_stats, clear_cache, describe_size
from workbench.models.calls import generation_process
from workbench.models.openai_backend import OpenAIBackend


def chat(text: str, sample: int = 0, **params) -> Request:
    params.setdefault("max_tokens", 4)
    return Request(messages=(Message("user", text),), params=GenerationParams(**params), sample=sample)


def cached(project, url: str, **kw) -> CachedBackend:
    return CachedBackend(OpenAIBackend("tiny", base_url=url, max_retries=0, **kw), project)


def test_identical_requests_are_answered_from_the_cache(project, fault_proxy):
    requests = [chat(f"book {i}") for i in range(3)]
    with cached(project, fault_proxy.base_url) as backend:
        first = dict(backend.generate(requests))
        second = dict(backend.generate(requests))
    assert len(fault_proxy.posts()) == 3
    assert all(not r.cached for r in first.values()) and all(r.cached for r in second.values())
    assert {i: r.text for i, r in first.items()} == {i: r.text for i, r in second.items()}
    assert second[0].completion_tokens == first[0].completion_tokens  # usage kept with the answer


def test_the_cache_outlives_the_backend_and_the_session(project, fault_proxy):
    from workbench.project import Project

    with cached(project, fault_proxy.base_url) as backend:
        list(backend.generate([chat("keep me")]))
    path = project.path
    project.close()
    reopened = Project.open(path)
    try:
        with cached(reopened, fault_proxy.base_url) as backend:
            (_, result), = backend.generate([chat("keep me")])
        assert result.cached
    finally:
        reopened.close()
    assert len(fault_proxy.posts()) == 1


def test_anything_that_changes_the_answer_misses(project, fault_proxy):
    with cached(project, fault_proxy.base_url) as backend:
        list(backend.generate([chat("same")]))
        list(backend.generate([chat("same", sample=1)]))  # another draw
        list(backend.generate([chat("same", temperature=0.7)]))  # other parameters
        list(backend.generate([Request(prompt="same", params=GenerationParams(max_tokens=4))]))  # not a chat
    with cached(project, fault_proxy.base_url, chat=False) as backend:
        list(backend.generate([Request(prompt="same", params=GenerationParams(max_tokens=4))]))  # now a hit
    assert len(fault_proxy.posts()) == 4


def test_another_server_with_the_same_model_name_is_another_model(project, fault_proxy, llama_server):
    with cached(project, fault_proxy.base_url) as backend:
        list(backend.generate([chat("same")]))
    with cached(project, llama_server.base_url) as backend:
        (_, result), = backend.generate([chat("same")])
    assert not result.cached


def test_failures_are_not_cached(project, fault_proxy):
    fault_proxy.script(Fault.server_error(500))
    with cached(project, fault_proxy.base_url) as backend:
        (_, failed), = backend.generate([chat("retry me")])
        (_, answered), = backend.generate([chat("retry me")])
        (_, again), = backend.generate([chat("retry me")])
    assert isinstance(failed, Failure)
    assert isinstance(answered, Generation) and not answered.cached
    assert again.cached
    assert len(fault_proxy.posts()) == 2


def test_identical_requests_in_one_batch_are_sent_once(project, fault_proxy):
    with cached(project, fault_proxy.base_url) as backend:
        results = dict(backend.generate([chat("twice"), chat("twice"), chat("other")]))
    assert len(fault_proxy.posts()) == 2
    assert results[0].text == results[1].text
    assert sorted(r.cached for r in results.values()) == [False, False, True]


def test_size_is_reported_and_clearing_forgets(project, fault_proxy):
    assert cache_size(project) == (0, 0)
    with cached(project, fault_proxy.base_url) as backend:
        list(backend.generate([chat(f"q{i}") for i in range(4)]))
    answers, size = cache_size(project)
    assert answers == 4 and size > 4 * 64  # at least the sha256 keys
    stats = cache_stats(project)
    assert list(stats[["backend", "model", "answers"]].itertuples(index=False, name=None)) == [("openai", "tiny", 4)]
    assert describe_size(answers, size).startswith("4 cached answers, ")
    assert clear_cache(project, model="another") == 0
    assert clear_cache(project, model="tiny") == 4
    assert cache_size(project) == (0, 0)


def test_a_worker_thread_uses_its_own_connection(project, fault_proxy):
    errors: list[BaseException] = []

    def work():
        try:
            with cached(project, fault_proxy.base_url) as backend:
                list(backend.generate([chat("from a thread")]))
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            project.release_thread_connection()

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert errors == []
    with cached(project, fault_proxy.base_url) as backend:
        (_, result), = backend.generate([chat("from a thread")])
    assert result.cached


def test_rerunning_a_finished_run_through_the_job_runner_calls_nothing(project, fault_proxy):
    units = [jobs.Unit(i, s) for i in range(3) for s in range(2)]

    def build(unit):
        return chat(f"item {unit.item_id}", sample=unit.sample, seed=1)

    for _attempt in range(2):
        run_id = jobs.create_run(project, "test")
        with cached(project, fault_proxy.base_url) as backend:
            report = jobs.run_job(project, run_id, units, generation_process(backend, build))
        assert report.processed == 6
    usage = jobs.get_run(project, run_id)["usage"]
    assert usage["calls"] == 0 and usage["cached"] == 6
    assert len(fault_proxy.posts()) == 6  # only the first run reached the server


def test_unseeded_samples_above_temperature_zero_are_always_drawn_afresh(project, fault_proxy):
    with cached(project, fault_proxy.base_url) as backend:
        list(backend.generate([chat("draw", temperature=1.0)]))
        (_, again), = backend.generate([chat("draw", temperature=1.0)])
        list(backend.generate([chat("draw", temperature=1.0, seed=7)]))
        (_, seeded), = backend.generate([chat("draw", temperature=1.0, seed=7)])
    assert not again.cached
    assert seeded.cached  # the same seed is meant to give the same draw
    assert len(fault_proxy.posts()) == 3
