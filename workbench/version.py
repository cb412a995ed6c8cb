"""Palimpsest's version, in a module of its own so that any part of the core can name it without
importing the ``workbench`` package (whose lazy ``Project`` would make a cycle with the project file)."""

__version__ = "0.1.0"
