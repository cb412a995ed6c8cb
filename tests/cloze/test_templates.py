"""The prompt-template store: shipped files, versions, hashes, placeholders, validation."""

from __future__ import annotations

import pytest

from workbench.errors import UserError
from workbench.probes.cloze.prompting import cloze_prompt, expected_answer
from workbench.prompt_templates import (
    get_template,
    install_shipped,
    load_shipped,
    parse_template_file,
    save_template,
    template_hash,
    templates_frame,
    validate,
)


def test_the_shipped_cloze_template_is_installed_on_first_use(project):
    assert project.db.execute("SELECT COUNT(*) FROM prompt_templates").fetchone()[0] == 0
    template = get_template(project, "name-cloze", kind="cloze")
    assert template.version == 1 and template.origin == "shipped" and template.kind == "cloze"
    assert template.hash == template_hash(template.body)
    assert template.placeholders == ["passage"]
    assert "<name>" in template.body and not template.body.startswith("---")
    install_shipped(project)  # again: nothing new
    assert project.db.execute("SELECT COUNT(*) FROM prompt_templates WHERE name = 'name-cloze'").fetchone()[0] == 1


def test_editing_makes_a_new_version_and_keeps_the_old(project):
    first = get_template(project, "name-cloze")
    edited = save_template(project, "name-cloze", first.body.replace("Excerpt", "Passage"), "cloze")
    assert edited.version == 2 and edited.origin == "user" and edited.hash != first.hash
    assert get_template(project, "name-cloze").id == edited.id
    assert get_template(project, "name-cloze", version=1).body == first.body
    # saving the same text again changes nothing; the shipped file does not come back as version 3
    assert save_template(project, "name-cloze", edited.body, "cloze").id == edited.id
    install_shipped(project)
    assert get_template(project, "name-cloze").version == 2
    frame = templates_frame(project, kind="cloze")
    assert frame.loc[frame["name"] == "name-cloze", "versions"].item() == 2


def test_a_cloze_template_must_hold_the_passage(project):
    with pytest.raises(UserError, match=r"must contain \{passage\}"):
        save_template(project, "short", "Who is [MASK]? Answer in <name> tags.", "cloze")
    with pytest.raises(UserError, match=r"\{book\}"):
        save_template(project, "short", "In {book}: {passage}", "cloze")
    with pytest.raises(UserError, match="empty"):
        validate("summary", "   ")
    with pytest.raises(UserError, match="template name"):
        save_template(project, "", "{passage}", "cloze")
    validate("kind-without-rules", "{anything} goes for kinds without rules")


def test_rendering_fills_placeholders_and_leaves_other_braces(project):
    template = save_template(project, "braces", 'Reply as JSON {"name": ...}.\n{passage}', "cloze")
    assert template.render(passage="X") == 'Reply as JSON {"name": ...}.\nX'
    with pytest.raises(UserError, match="passage"):
        template.render()


def test_the_cloze_prompt_collapses_line_breaks_and_ends_at_the_answer(project):
    template = get_template(project, "name-cloze")
    prompt = cloze_prompt(template, "He looked at\r\n[MASK]   and  smiled.")
    assert prompt.endswith("Excerpt: He looked at [MASK] and smiled.\nAnswer:")
    assert expected_answer("Jane", chat=False) == " <name>Jane</name>"
    assert expected_answer("Jane", chat=True) == "<name>Jane</name>"


def test_template_files_with_and_without_header(tmp_path, project):
    with_header = tmp_path / "judge.txt"
    with_header.write_text("---\nname: my-judge\nkind: rep-judge\n---\nLabel this: {response}\n", encoding="utf-8")
    parsed = parse_template_file(with_header)
    assert (parsed.name, parsed.kind, parsed.body) == ("my-judge", "rep-judge", "Label this: {response}\n")
    plain = tmp_path / "plain.txt"
    plain.write_text("Summarise {scene}\n", encoding="utf-8")
    stored = load_shipped(project, "plain", kind="summary", directory=tmp_path)
    assert (stored.name, stored.kind, stored.body) == ("plain", "summary", "Summarise {scene}\n")
    broken = tmp_path / "broken.txt"
    broken.write_text("---\nname: x\nno colon here\n---\nbody", encoding="utf-8")
    with pytest.raises(UserError, match="line 3"):
        parse_template_file(broken)


def test_a_name_cannot_change_purpose(project):
    save_template(project, "mine", "{passage}", "cloze")
    with pytest.raises(UserError, match="another purpose"):
        save_template(project, "mine", "Judge {response}", "kind-without-rules")
