"""REP sets in the project: shipped sets installed once, edits become versions, import/export."""

import pytest

from workbench.errors import UserError
from workbench.probes.rep.setfile import SetFileError
from workbench.probes.rep.sets import (
    current_sets,
    export_set_file,
    get_set,
    import_set_file,
    install_shipped,
    reset_to_shipped,
    save_set,
    sets_frame,
    versions_frame,
)


def test_shipped_sets_are_installed_once(project):
    added = install_shipped(project)
    assert set(added) == {"gender", "sexual_orientation", "race", "religion", "eep"}
    assert install_shipped(project) == []
    assert [s.name for s in current_sets(project)] == ["gender", "race", "religion", "sexual_orientation"]
    assert [s.name for s in current_sets(project, "eep")] == ["eep"]
    gender = get_set(project, "gender")
    assert gender.version == 1 and gender.origin == "shipped"
    assert sorted(gender.prompt_ids) == sorted(r.key for r in gender.parsed.roles)


def test_edit_adds_a_version_and_old_version_stays(project):
    first = get_set(project, "gender")
    edited = first.parsed.body.replace("the nurse who looked after me was", "the nurse on the night shift was")
    second = save_set(project, edited)
    assert second.version == 2 and second.hash != first.hash
    assert get_set(project, "gender").id == second.id
    assert get_set(project, "gender", version=1).parsed.role("nurse").stem.endswith("looked after me was")
    assert second.prompt_ids["nurse"] != first.prompt_ids["nurse"]  # runs keep pointing at the old stems
    assert save_set(project, edited).id == second.id  # unchanged text: no new version
    assert list(versions_frame(project, "gender")["version"]) == [1, 2]
    assert reset_to_shipped(project, "gender").version == 3


def test_invalid_edit_is_refused_and_nothing_is_stored(project):
    body = get_set(project, "race").parsed.body.replace('key = "surgeon"', 'key = "Surgeon!"')
    with pytest.raises(SetFileError, match="line"):
        save_set(project, body)
    assert list(versions_frame(project, "race")["version"]) == [1]


def test_export_then_import_round_trip(project, tmp_path):
    path = export_set_file(project, "religion", tmp_path / "religion.toml")
    text = path.read_text(encoding="utf-8").replace('demographic = "religion"', 'demographic = "belief"')
    path.write_text(text, encoding="utf-8")
    imported = import_set_file(project, path)
    assert imported.name == "belief" and imported.origin == "imported"
    assert "belief" in set(sets_frame(project)["demographic"])


def test_import_of_a_broken_file_names_the_line(project, tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text('demographic = "x"\n[labels]\na = [\n', encoding="utf-8")
    with pytest.raises(SetFileError, match=r"broken\.toml, line \d+"):
        import_set_file(project, path)
    with pytest.raises(UserError, match="no file"):
        import_set_file(project, tmp_path / "missing.toml")


def test_sets_frame_lists_roles_and_categories(project):
    frame = sets_frame(project)
    nurse = frame[(frame["demographic"] == "gender") & (frame["role"] == "nurse")].iloc[0]
    assert "nurse" in nurse["stem"]
    assert nurse["categories"] == "woman; man; non-binary; unclear/none"
    assert len(frame) == 5 + 6 + 5 + 5
