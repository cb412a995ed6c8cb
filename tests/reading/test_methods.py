import os

from tests.fixtures.reading_books import store_answers
from workbench.export.methods import methods_record, methods_text
from workbench.probes.reading.questions import QuestionSettings, build_questions


def test_the_methods_text_describes_scenes_summaries_questions_and_statistics(project, summarized_book):
    question_set = build_questions(project, summarized_book.book_id,
                                   QuestionSettings(every=3, options=5, seed=2, reconstruction=2))
    store_answers(project, question_set, "judge", lambda q: "1")
    text = methods_text(project)
    assert "## Reading questions (NarrativeXL)" in text or "Reading questions (NarrativeXL)" in text
    scenes = len(summarized_book.scene_set.scenes)
    assert f"cut into {scenes} scenes of about 60 words" in text
    assert "a checkpoint after every 3 scenes, 5 choices per question" in text
    assert "retention demand median" in text and "lookahead:" in text
    assert "imported from summaries-" in text  # the summaries came from a file
    assert "at the demand of the whole book read so far" in text  # 'None of the above' questions
    assert "Where this differs from NarrativeXL's code" in text and "one from each" in text
    assert "what guessing earns on the questions each point counts" in text
    # one book: no other book to draw wrong options from, and the text says what they need
    assert "No other-book questions: each needs 4 other books with summaries by the same model" in text
    if os.environ.get("PALIMPSEST_SHOW_METHODS"):
        print(text)
    for name in ("Wilson score interval", "Logistic regression", "ROUGE-1, ROUGE-2 and ROUGE-L",
                 "percentile bootstrap"):
        assert name in text
    record = methods_record(project)
    answer_runs = [r for r in record["runs"] if r["kind"] == "reading-answer"]
    (run,) = answer_runs
    assert run["probe"] == "reading" and run["counts"]["items"] == sum(
        q["questions"] for q in run["reading"]["questions"])
