"""streamparse's ``JavaBolt`` and ``JavaSpout``: declared so imports work, refused in use.

sparkstorm runs no JVM components; a Java spout or bolt that speaks Storm's multilang
protocol through a wrapper, or any other program, runs as a shell component instead.

Example:
    >>> JavaBolt.spec(full_class_name="org.example.Bolt", args_list=[])
    Traceback (most recent call last):
    ...
    sparkstorm.errors.TopologyError: [JAVA_COMPONENT_UNSUPPORTED] ...
"""

from __future__ import annotations

from typing import Any, NoReturn

from sparkstorm.errors import TopologyError


def _refuse(kind: str, name: Any, full_class_name: Any) -> NoReturn:
    what = f" {full_class_name!r}" if full_class_name else ""
    who = f" {name!r}" if name else ""
    msg = (
        f"Java{kind.title()}{who}{what}: sparkstorm cannot run JVM components; port it to "
        f"Python (subclass sparkstorm.{kind.title()}) or run a program as a shell component: "
        f"Shell{kind.title()}.spec(command=..., script=..., outputs=[...])"
    )
    raise TopologyError(msg, code="JAVA_COMPONENT_UNSUPPORTED")


class JavaBolt:
    """Refused: see the module docstring."""

    @classmethod
    def spec(cls, name: str | None = None, serialized_java: Any = None,
             full_class_name: str | None = None, *args: Any, **kwargs: Any) -> NoReturn:
        """Raises ``TopologyError`` ``JAVA_COMPONENT_UNSUPPORTED``."""
        _refuse("bolt", name, full_class_name)


class JavaSpout:
    """Refused: see the module docstring."""

    @classmethod
    def spec(cls, name: str | None = None, serialized_java: Any = None,
             full_class_name: str | None = None, *args: Any, **kwargs: Any) -> NoReturn:
        """Raises ``TopologyError`` ``JAVA_COMPONENT_UNSUPPORTED``."""
        _refuse("spout", name, full_class_name)
