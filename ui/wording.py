"""How the window names things: the words live in the core (``workbench.wording``), so the tables the core
builds for a page and the CLI read the same as the rest of the window."""

from workbench.wording import (
    LEXICAL,
    PARAMETERS,
    STATUSES,
    classifier,
    missing,
    number,
    parameters,
    role_key,
    run_about,
    run_kind,
    status,
    when,
)

__all__ = ["LEXICAL", "PARAMETERS", "STATUSES", "classifier", "missing", "number", "parameters", "role_key",
           "run_about", "run_kind", "status", "when"]
