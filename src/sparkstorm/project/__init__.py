"""streamparse projects: the layout ``sparkstorm run``/``submit`` understand, and
``sparkstorm quickstart``.
"""

from sparkstorm.project.layout import Project, find_project
from sparkstorm.project.quickstart import quickstart

__all__ = ["Project", "find_project", "quickstart"]
