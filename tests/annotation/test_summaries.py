import json

import pytest

from tests.fixtures.annotation_data import add_book, invented_novel
from tests.fixtures.fault_proxy import Fault
from workbench.annotation.items import list_items
from workbench.annotation.session import open_session
from workbench.annotation.tasks import create_task
from workbench.errors import UserError
from workbench.jobs import responses_frame
from workbench.models.base import GenerationParams
from workbench.summaries.runs import MARKER, FormatError, parse_distorted, parse_marked, summarize_task

SMALL = dict(chars=200, context_chars=40, summary_params=GenerationParams(max_tokens=16),
             distort_params=GenerationParams(temperature=0.7, max_tokens=16))


# ---------------------------------------------------------------------------------------------- parser
@pytest.mark.parametrize(
    "raw, expected",
    [
        ("<summary>\nAgnes waits at the station.", "Agnes waits at the station."),
        ("Sure! Here it is.\n<summary> Agnes waits.\nShe goes home. ", "Agnes waits. She goes home."),
        ("<SUMMARY>Agnes waits.</SUMMARY> Anything else?", "Agnes waits."),
        ("< summary >  \"Agnes waits.\"  ", "Agnes waits."),
        ("**<summary>**\nAgnes waits.", "Agnes waits."),
        ("I will write it after <summary> as asked.\n<summary>\nAgnes waits.", "Agnes waits."),
        ("<summary>\nAgnes waits.\n<summary>\n", "Agnes waits."),  # a trailing empty marker is ignored
    ],
)
def test_the_text_after_the_begin_marker_is_the_summary(raw, expected):
    assert parse_marked(raw) == expected


@pytest.mark.parametrize(
    "raw, problem",
    [
        (None, "empty"),
        ("   ", "empty"),
        ("Agnes waits at the station.", "no <summary> line"),
        ("Agnes waits. <summary>   ", "nothing follows"),
        ("<summary></summary>", "nothing follows"),
        ("<sumary> Agnes waits.", "no <summary> line"),
    ],
)
def test_answers_without_usable_text_after_the_marker_are_format_errors(raw, problem):
    with pytest.raises(FormatError, match=problem):
        parse_marked(raw)


def test_a_prompt_that_ends_with_the_marker_primes_the_answer():
    assert parse_marked(" Agnes waits.", prompt=f"Passage ...\n{MARKER}\n") == "Agnes waits."
    with pytest.raises(FormatError):
        parse_marked("Agnes waits.", prompt="Passage ... Put the line <summary> first, then your sentences.")


def test_a_distorted_summary_must_differ_from_the_original():
    assert parse_distorted("<summary> Agnes meets her cousin.", None, "Agnes waits.") == "Agnes meets her cousin."
    with pytest.raises(FormatError, match="repeats"):
        parse_distorted("<summary> agnes WAITS!", None, "Agnes waits.")


# ---------------------------------------------------------------------------------------------- with models
@pytest.fixture
def scene_book(project):
    return add_book(project, "Scenes", "An Author", invented_novel(21, chapters=2, paragraphs=8))


def _hf_backend(folder):
    from workbench.models.hf_backend import TransformersBackend

    return TransformersBackend(str(folder))


def test_a_base_model_primed_with_the_marker_yields_ready_items_and_a_rerun_continues(project, scene_book, tiny_causal_dir):
    task = create_task(project, "sv", "summary-validity", blinded=True, seed=2)
    with _hf_backend(tiny_causal_dir) as backend:
        assert not backend.is_chat
        report = summarize_task(project, task, backend, model_label="tiny-base", book_ids=[scene_book], per_book=3, **SMALL)
        assert (report.items, report.summaries_ok, report.summaries_failed) == (3, 3, 0)
        assert (report.distorted_ok, report.ready) == (3, 3)
        summaries = responses_frame(project, report.summary_run)
        assert len(summaries) == 3 and (summaries["status"] == "ok").all()
        assert all(prompt.rstrip().endswith(MARKER) for prompt in summaries["prompt"])
        assert all(json.loads(extra)["attempts"] == 1 for extra in summaries["extra"])
        for item in list_items(project, task):
            assert item.choices["true"] == parse_marked(
                summaries.set_index("item_id").loc[item.id, "raw"], summaries.set_index("item_id").loc[item.id, "prompt"])
            assert item.choices["distorted"] and item.meta["model"] == "tiny-base"
        again = summarize_task(project, task, backend, model_label="tiny-base", book_ids=[scene_book], per_book=3, **SMALL)
    assert (again.summary_run, again.distort_run) == (report.summary_run, report.distort_run)
    assert len(responses_frame(project, report.summary_run)) == 3  # nothing asked twice
    assert len(list_items(project, task)) == 3
    assert open_session(project, task, "Ann").progress.total == 3


def test_a_chat_model_that_forgets_the_marker_is_retried_then_recorded_as_failed(project, scene_book, tiny_chat_dir):
    task = create_task(project, "sv", "summary-validity", seed=2)
    with _hf_backend(tiny_chat_dir) as backend:
        assert backend.is_chat
        report = summarize_task(project, task, backend, model_label="tiny-chat", book_ids=[scene_book], per_book=2,
                                max_attempts=3, **SMALL)
    failed = responses_frame(project, report.summary_run)
    # random weights almost never write the marker; whatever happened is recorded, unit by unit
    assert report.summaries_ok + report.summaries_failed == 2 == len(failed)
    for row in failed[failed["status"] == "failed"].itertuples():
        extra = json.loads(row.extra)
        assert extra["attempts"] == 3 and len(extra["problems"]) == 3
        assert "attempt 1:" in extra["problems"][0] and "after 3 attempt(s)" in row.error
        assert row.raw is not None  # the last raw answer is kept
    assert report.ready == len(list_items(project, task, ready_only=True))
    if report.ready == 0:
        with pytest.raises(UserError, match="no items ready"):
            open_session(project, task, "Ann")


def test_prompts_too_long_for_the_model_fail_once_without_pointless_retries(project, scene_book, tiny_causal_dir):
    task = create_task(project, "sv", "summary-validity")
    with _hf_backend(tiny_causal_dir) as backend:
        report = summarize_task(project, task, backend, model_label="tiny", book_ids=[scene_book], per_book=1,
                                chars=3000, summary_params=GenerationParams(max_tokens=16))
    row = responses_frame(project, report.summary_run).iloc[0]
    assert row["status"] == "failed" and "512 tokens" in row["error"]
    assert json.loads(row["extra"])["attempts"] == 1
    assert report.ready == 0


def test_server_errors_are_retried_like_format_errors(project, scene_book, fault_proxy):
    from workbench.models.openai_backend import OpenAIBackend

    task = create_task(project, "sv", "summary-validity")
    fault_proxy.script(Fault.server_error(500), Fault.server_error(503))
    with OpenAIBackend("tiny", base_url=fault_proxy.base_url, chat=False, max_retries=0, concurrency=1) as backend:
        report = summarize_task(project, task, backend, model_label="tiny-server", book_ids=[scene_book], per_book=1,
                                **SMALL)
    row = responses_frame(project, report.summary_run).iloc[0]
    extra = json.loads(row["extra"])
    assert row["status"] == "ok" and extra["attempts"] == 3
    assert len(extra["problems"]) == 2 and all("attempt" in p for p in extra["problems"])
    assert report.ready == 1


def test_a_cancelled_generation_is_continued_through_the_shared_resume(project, scene_book, tiny_causal_dir):
    from workbench.jobs import get_run, resume_run
    from workbench.models.catalog import ModelSpec, add_model, open_backend
    from workbench.progress import TaskState

    spec = add_model(project, ModelSpec(label="tiny-base", backend="hf", ref=str(tiny_causal_dir)))
    task = create_task(project, "sv", "summary-validity", seed=4)
    state = TaskState(on_partial=lambda _: state.cancel())  # stop right after the first saved answer
    with open_backend(spec, project) as backend:
        report = summarize_task(project, task, backend, model_label=spec.label, model_id=spec.id,
                                book_ids=[scene_book], per_book=3, state=state, **SMALL)
    assert (report.summaries_ok, report.ready) == (1, 0)
    assert get_run(project, report.summary_run)["status"] == "cancelled"
    assert resume_run(project, report.summary_run).done == 3
    # continuing the summaries also makes the distorted versions the new summaries need
    assert len(list_items(project, task, ready_only=True)) == 3
    assert resume_run(project, report.distort_run).done == 3  # nothing left to do there
    assert len(responses_frame(project, report.distort_run)) == 3
    assert len(responses_frame(project, report.summary_run)) == 3


def test_a_deleted_task_takes_its_runs_along_so_a_new_task_starts_afresh(project, scene_book, tiny_causal_dir):
    from workbench.annotation.tasks import delete_task

    with _hf_backend(tiny_causal_dir) as backend:
        old = create_task(project, "sv", "summary-validity")
        first = summarize_task(project, old, backend, model_label="m", book_ids=[scene_book], per_book=1, **SMALL)
        delete_task(project, old)
        assert project.db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0
        new = create_task(project, "sv again", "summary-validity")
        assert new.id == old.id  # SQLite reuses the id ...
        second = summarize_task(project, new, backend, model_label="m", book_ids=[scene_book], per_book=1, **SMALL)
    assert len(responses_frame(project, second.summary_run)) == 1  # ... but asks the model afresh
    assert second.summaries_ok == 1 and second.ready == 1 and first.ready == 1


def test_an_edited_template_version_is_used_and_recorded(project, scene_book, tiny_causal_dir):
    from workbench.jobs import get_run
    from workbench.prompt_templates import get_template, save_template

    shipped = get_template(project, "summary", kind="summary")
    assert "{scene}" in shipped.body and MARKER in shipped.body
    with pytest.raises(UserError, match="must contain \\{scene\\}"):
        save_template(project, "summary", "Summarize this.", "summary")
    edited = save_template(project, "summary", "In a few plain sentences, what happens here?\n\n{scene}\n", "summary")
    task = create_task(project, "sv", "summary-validity")
    with _hf_backend(tiny_causal_dir) as backend:
        report = summarize_task(project, task, backend, model_label="m", book_ids=[scene_book], per_book=1, **SMALL)
    assert get_run(project, report.summary_run)["template_id"] == edited.id
    prompt = responses_frame(project, report.summary_run)["prompt"].iloc[0]
    assert prompt.startswith("In a few plain sentences") and prompt.rstrip().endswith(MARKER)
