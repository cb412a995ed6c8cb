"""An import whose run config does not list its passages (a config is no place for a list that grows with the
study: every answer row names its passage) is still described by its passages in the methods text."""

from __future__ import annotations

from tests.fixtures.leakage import add_cloze_book
from workbench.export.methods import methods_text
from workbench.jobs import create_run
from workbench.models.catalog import external_model
from workbench.project import now


def test_the_methods_text_counts_an_imports_passages_from_its_answers(project):
    _, ids = add_cloze_book(project, "Harbour", "Ada came in. Bram left. Cora stayed.", ["Ada", "Bram", "Cora"])
    run_id = create_run(project, "cloze", model_id=external_model(project, "gpt4"),
                        config={"format": "gpt4books", "imported_from": "harbour.tsv"})
    with project.db.transaction():
        project.db.conn.executemany("INSERT INTO responses (run_id, item_id, sample, status, raw, created_at)"
                                    " VALUES (?, ?, 0, 'ok', ?, ?)", [(run_id, i, "Ada", now()) for i in ids[:2]])
    assert "- **Passages:** 2 from 1 book" in methods_text(project)
