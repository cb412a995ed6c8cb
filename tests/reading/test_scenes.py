import pytest

from tests.fixtures.annotation_data import add_book, invented_novel
from tests.fixtures.reading_books import counted_text, named_story
from workbench.errors import UserError
from workbench.probes.reading.questions import QuestionSettings, build, checkpoints, retention
from workbench.probes.reading.scenes import cut_scenes, latest_scene_set, make_scenes, scenes_frame


def _covers_exactly_once(text, scenes):
    assert scenes[0].start_char == 0
    assert scenes[-1].end_char == len(text)
    for before, after in zip(scenes, scenes[1:]):
        assert before.end_char == after.start_char
    assert "".join(text[s.start_char : s.end_char] for s in scenes) == text


@pytest.mark.parametrize("text", [named_story(3), invented_novel(5, chapters=3, paragraphs=9),
                                  "  \n\nLeading blank lines. Then words.\n\n\nAnd a last paragraph without end"])
@pytest.mark.parametrize("words", [50, 120, 800])
def test_scenes_cover_the_book_exactly_once_and_count_every_word(text, words):
    scenes = cut_scenes(text, words)
    _covers_exactly_once(text, scenes)
    assert [s.scene for s in scenes] == list(range(len(scenes)))
    assert sum(s.words for s in scenes) == len(text.split())
    for scene in scenes:
        assert scene.words == len(text[scene.start_char : scene.end_char].split())
    position = 0
    for scene in scenes:
        assert scene.word_start == position
        position += scene.words


def test_scenes_end_between_paragraphs_or_sentences_near_the_target():
    text = named_story(1, paragraphs=40)
    scenes = cut_scenes(text, 120)
    for scene in scenes[1:]:
        assert text[scene.start_char - 1].isspace() and not text[scene.start_char].isspace()
        assert text[: scene.start_char].rstrip()[-1] in ".!?\u201d\"" or text[: scene.start_char].endswith("\n\n")
    middle = [s.words for s in scenes[1:-1]]
    assert min(middle) >= 60 and max(middle) <= 240


def test_a_paragraph_longer_than_a_scene_is_cut_between_sentences():
    long_paragraph = " ".join(f"Sentence {i} has exactly six words." for i in range(60))  # 360 words
    scenes = cut_scenes(long_paragraph + "\n", 100)
    assert len(scenes) >= 3
    for scene in scenes[1:]:
        assert long_paragraph[scene.start_char :].startswith("Sentence")
    _covers_exactly_once(long_paragraph + "\n", scenes)


def test_a_heading_opens_a_new_scene():
    text = counted_text([40, 40]) + "\nCHAPTER II.\n\n" + counted_text([40, 40])
    scenes = cut_scenes(text, 100)
    assert len(scenes) == 2
    assert text[scenes[1].start_char :].startswith("CHAPTER II.")


def test_retention_demands_match_the_hand_computed_values():
    # ten paragraphs of 100 words each; scenes of 200 words take two paragraphs each
    text = counted_text([100] * 10)
    scenes = cut_scenes(text, 200)
    assert [(s.words, s.word_start) for s in scenes] == [(200, 0), (200, 200), (200, 400), (200, 600), (200, 800)]
    # asked after scene 3 (words 0..800 read) about scene 1 (ends at word 400): 400 words in between
    assert retention(scenes, 1, 3) == 400
    assert retention(scenes, 3, 3) == 0
    assert retention(scenes, 0, 4) == 800
    assert checkpoints(len(scenes), 2) == [1, 3]
    summaries = {i: (f"true account {i}", f"false account {i}") for i in range(5)}
    questions = build(7, scenes, summaries, QuestionSettings(every=2, options=4, seed=4, reconstruction=0,
                                                             kinds=("lookahead",), none_share=0.0))
    by_checkpoint = {q.checkpoint_scene: q for q in questions}
    assert set(by_checkpoint) == {1}  # after scene 3 only scene 4 is left to look ahead to: too few
    question = by_checkpoint[1]
    assert question.checkpoint_word == 400 and question.checkpoint_char == scenes[1].end_char
    expected = {0: 200, 1: 0}[question.scene]
    assert question.retention_words == expected


def test_scenes_are_stored_once_per_book_and_length(project):
    book = add_book(project, "Counted", "Someone", counted_text([100] * 10))
    first = make_scenes(project, book, 200)
    again = make_scenes(project, book, 200)
    other = make_scenes(project, book, 300)
    assert first.id == again.id != other.id
    assert latest_scene_set(project, book).id == other.id
    assert latest_scene_set(project, book, 200).scenes == first.scenes
    frame = scenes_frame(project, first)
    assert list(frame.columns) == ["scene", "start_char", "end_char", "words", "text"]
    assert frame["text"].iloc[0].startswith("w0x0 w0x1")


def test_plain_errors_for_tiny_scenes_empty_books_and_books_not_cut(project):
    with pytest.raises(UserError, match="at least 50 words"):
        cut_scenes("Some words here.", 10)
    with pytest.raises(UserError, match="no words"):
        cut_scenes("   \n\n  ", 100)
    book = add_book(project, "Uncut", "Someone", counted_text([100]))
    with pytest.raises(UserError, match="palimpsest reading scenes"):
        latest_scene_set(project, book)
