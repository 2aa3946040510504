"""streamparse projects: their layout and ``sparkstorm quickstart``.

The layout is the one ``sparkstorm run``/``submit`` understand.
"""

from sparkstorm.project.layout import Project, find_project
from sparkstorm.project.quickstart import quickstart

__all__ = ["Project", "find_project", "quickstart"]
