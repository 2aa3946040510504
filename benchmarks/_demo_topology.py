"""``make demo``'s topology (``examples/wordcount.py``) under a module name of its own.

The example's file name, ``wordcount``, is also the benchmark module's; executor processes
import components by module name, so the example's source runs here, in this module's
namespace, and its classes are ``_demo_topology.WordCount`` and so on.
"""

from __future__ import annotations

import os

EXAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                       "examples", "wordcount.py")

with open(EXAMPLE, encoding="utf-8") as _source:
    exec(compile(_source.read(), EXAMPLE, "exec"))  # the repository's own example
