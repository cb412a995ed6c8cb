"""Exports: CSV tables, publication figures (matplotlib), methods text."""

from workbench.registry import Part

PART = Part("exports", commands=("workbench.export.commands",))
