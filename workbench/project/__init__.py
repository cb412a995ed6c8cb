"""The SQLite project file: schema, migrations, connections, save-as, integrity."""

from workbench.parts import Part
from workbench.project.project import SUFFIX, Project, now, with_project_suffix

__all__ = ["Project", "SUFFIX", "now", "with_project_suffix"]

PART = Part("project", commands=("workbench.project.commands",))
