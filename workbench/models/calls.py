"""Glue between the job runner and a backend: turn units into requests, results into outcomes."""

from __future__ import annotations

from typing import Callable, Iterable, Sequence

from workbench.jobs import Outcome, Process, Unit
from workbench.models.base import Backend, Failure, Generation, Request
from workbench.progress import TaskState


def outcome_from(request: Request, result: Generation | Failure) -> Outcome:
    if isinstance(result, Failure):
        return Outcome.failure(
            result.error,
            prompt=request.text_for_record(),
            seed=request.seed,
            fatal=result.fatal,
            extra={"failure_kind": result.kind},
        )
    extra = {"finish_reason": result.finish_reason} if result.finish_reason else None
    logprob = sum(lp for _, lp in result.token_logprobs) if result.token_logprobs else None
    return Outcome(
        raw=result.text,
        prompt=request.text_for_record(),
        seed=request.seed,
        logprob=logprob,
        prompt_tokens=result.prompt_tokens,
        completion_tokens=result.completion_tokens,
        latency_ms=result.latency_ms,
        cached=result.cached,
        extra=extra,
    )


def noting(process: Process, backend: Backend) -> Process:
    """``process``, carrying the notes ``backend`` gives a run (``jobs.run_job`` writes them into the run)."""
    process.run_notes = backend.run_notes  # type: ignore[attr-defined]
    return process


def generation_process(backend: Backend, build_request: Callable[[Unit], Request]) -> Process:
    """A job ``Process`` that sends one request per unit through ``backend``."""

    def process(units: Sequence[Unit], state: TaskState) -> Iterable[tuple[Unit, Outcome]]:
        requests = [build_request(u) for u in units]
        generate_until = getattr(backend, "generate_until", None)
        if generate_until is not None:  # a Cancel is seen even while every request is still waiting
            results = generate_until(requests, lambda: state.cancelled)
        else:
            results = backend.generate(requests)
        try:
            for index, result in results:
                yield units[index], outcome_from(requests[index], result)
                state.check()
            state.check()  # the backend stopped early because of a Cancel: say so
        finally:
            close = getattr(results, "close", None)
            if close is not None:
                close()  # a backend stops its requests still in flight

    return noting(process, backend)
