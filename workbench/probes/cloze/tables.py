"""The paper's per-book table of several models and the most-frequent-name baseline, as registered tables."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from workbench.export.registry import TableSpec, register_table

if TYPE_CHECKING:
    from workbench.project import Project


def _models(value: Any) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    return [v.strip() for v in str(value).split(",") if v.strip()]


def _number(value: Any) -> int | None:
    return None if value in (None, "") else int(value)


def _flag(value: Any) -> bool:
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def _models_table(project: "Project", models: Any = None, model: Any = None, top: Any = None, year_from: Any = None,
                  year_to: Any = None, humans: Any = False, annotator: Any = None, task: Any = None,
                  sort_by: Any = None, **_: Any) -> pd.DataFrame:
    from workbench.probes.cloze.models_table import models_table

    chosen = _models(models) or _models(model)
    if not chosen:
        from workbench.probes.cloze.analysis import model_labels

        chosen = model_labels(project)
    return models_table(project, chosen, top=_number(top), year_from=_number(year_from), year_to=_number(year_to),
                        humans=_flag(humans), annotator=annotator or None, task=task or None, sort_by=sort_by or None)


def _frequent_name(project: "Project", construction: str = "leave-book-out", **_: Any) -> pd.DataFrame:
    from workbench.probes.cloze.baselines import frequent_name_baseline

    return frequent_name_baseline(project, construction=construction)


register_table(TableSpec("cloze-models-table", "Name cloze: models side by side", _models_table,
                         "per book: title, author, year and each model's accuracy (models=A,B; top=N; "
                         "year_from=Y; year_to=Y; humans=yes adds the people's name cloze with its interval), sorted "
                         "by the first model (or sort_by=book, year or a column)"))
register_table(TableSpec("cloze-frequent-name", "Name cloze: most-frequent-name baseline", _frequent_name,
                         "accuracy of always answering the commonest name (chosen from the other books' passages, "
                         "or construction=pooled as in the paper), overall and per book"))
