"""Where a book stands in the reading probe (scenes, summaries, names, questions, answers), and one
question with a model's answer to it: what the Reading page shows."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from workbench.probes.reading.asking import numbered_options, parse_choice, parse_reconstruction
from workbench.probes.reading.questions import latest_question_sets, load_questions, question_count
from workbench.probes.reading.results import answer_runs
from workbench.probes.reading.summaries import level_summaries, summary_models

if TYPE_CHECKING:
    from workbench.project import Project


@dataclass
class BookStatus:
    book_id: int
    words: int = 0
    scenes: int = 0
    scene_words: int = 0
    summaries: dict[str, tuple[int, int]] = field(default_factory=dict)  # model -> (summaries, false summaries)
    name_words: int = 0
    questions: dict[str, int] = field(default_factory=dict)  # variant -> questions in the newest set
    answered_by: list[str] = field(default_factory=list)

    def describe(self) -> str:
        length = f"{self.words:,} words" if self.words else "No text"
        if not self.scenes:
            return f"{length}, not cut into scenes yet."
        lines = [f"{length}, in {self.scenes:,} scenes of about {self.scene_words:,} words."]
        if self.summaries:
            lines += [f"Summaries by {model}: {true:,} of {self.scenes:,} scenes, {false:,} false versions."
                      for model, (true, false) in self.summaries.items()]
        else:
            lines.append("No summaries yet.")
        lines.append(f"{self.name_words:,} name words substituted." if self.name_words else "Names not substituted.")
        lines += [f"{count:,} questions on the {variant} text." for variant, count in self.questions.items()]
        if self.answered_by:
            lines.append("Answered by: " + ", ".join(self.answered_by) + ".")
        return "\n".join(lines)


def book_status(project: "Project", book_id: int) -> BookStatus:
    words = project.db.execute("SELECT words FROM books WHERE id = ?", [book_id]).fetchone()
    status = BookStatus(book_id, words=int(words[0] or 0) if words else 0)
    row = project.db.execute("SELECT id, scenes, target_words FROM reading_scene_sets WHERE book_id = ?"
                             " ORDER BY id DESC LIMIT 1", [book_id]).fetchone()
    if row is None:
        return status
    set_id, status.scenes, status.scene_words = row
    for model in summary_models(project, set_id):
        pairs = level_summaries(project, set_id, model, 0)
        status.summaries[model] = (sum(1 for t, _ in pairs.values() if t), sum(1 for _, f in pairs.values() if f))
    status.name_words = project.db.execute("SELECT COUNT(*) FROM reading_names WHERE book_id = ?",
                                           [book_id]).fetchone()[0]
    for question_set in latest_question_sets(project, book_ids=[book_id]):
        status.questions[question_set.variant] = question_count(project, question_set.id)
    runs = answer_runs(project)
    status.answered_by = sorted(set(runs.loc[runs["book_id"] == book_id, "model"]))
    return status


def question_detail(project: "Project", run_id: int, question_id: int) -> str:
    """A question as the model saw it (options numbered), the right answer, and the model's raw reply."""
    row = project.db.execute("SELECT set_id FROM reading_questions WHERE id = ?", [question_id]).fetchone()
    if row is None:
        return "This question no longer exists."
    (question,) = load_questions(project, row[0], ids=[question_id])
    reply = project.db.execute("SELECT status, raw, error, prompt FROM responses WHERE run_id = ? AND item_id = ?",
                               [run_id, question_id]).fetchone()
    status, raw, error, prompt = reply if reply else ("not asked", None, None, None)
    lines = [f"Question {question.key} ({question.kind})"]
    if question.read_along:
        demand = ""
        if question.retention_words is not None and question.answer is None:
            demand = (f"; 'None of the above' is right, which asks for all that was read (retention demand "
                      f"{question.retention_words:,} words, from the end of the first scene)")
        elif question.retention_words is not None:
            demand = f"; the true scene ended {question.retention_words:,} words before"
        lines += [f"Asked after scene {question.checkpoint_scene}{demand}.", "", numbered_options(question), "",
                  f"Right answer: {question.correct_choice + 1}"]
        if status == "ok":
            choice = parse_choice(raw, question.choices)
            lines.append("Model's answer: " + (f"{choice + 1}" if choice is not None else "none it could be read as"))
    else:
        lines += ["", "False summary given:", question.body["false_summary"], "", "True summary:",
                  question.body["reference"]]
        if status == "ok":
            lines += ["", "Model's correction:", parse_reconstruction(raw, prompt)]
    lines += ["", f"Raw reply ({status}):", raw if raw is not None else (error or "—")]
    return "\n".join(lines)
