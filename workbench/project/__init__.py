"""The SQLite project file: schema, migrations, connections, save-as, integrity."""

from workbench.project.project import SUFFIX, Project, now
from workbench.registry import Part

__all__ = ["Project", "SUFFIX", "now"]

PART = Part("project", commands=("workbench.project.commands",))
