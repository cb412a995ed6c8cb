"""The SQLite project file: schema, migrations, connections, save-as, integrity."""

from workbench.registry import Part


from workbench.project.project import SUFFIX, Project, now

__all__ = ["Project", "SUFFIX", "now"]

PART = Part("project", commands=("workbench.project.commands",))
