"""Books: import (plain text, Project Gutenberg, EPUB, metadata CSV, download), the library, text statistics."""

from workbench.parts import PageSpec, Part

PART = Part(
    "library",
    commands=("workbench.corpus.commands",),
    pages=(PageSpec("library", "Library", "ui.library.page:LibraryPage"),),
)
