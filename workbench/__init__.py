"""Palimpsest's headless core. Never imports Qt: usable from the CLI, notebooks and scripts."""

from workbench.version import __version__

__all__ = ["Project", "UserError", "__version__", "books_frame"]


def __getattr__(name: str):
    # Lazy so that ``import workbench`` stays cheap (no pandas, no SQLite work).
    if name == "Project":
        from workbench.project.project import Project

        return Project
    if name == "books_frame":  # the library as a table, for a notebook: books_frame(project)
        from workbench.corpus.library import books_frame

        return books_frame
    if name == "UserError":
        from workbench.errors import UserError

        return UserError
    raise AttributeError(name)
