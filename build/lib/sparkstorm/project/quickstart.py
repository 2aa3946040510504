"""``sparkstorm quickstart NAME``: streamparse's quickstart project (word count).

With sparkstorm's imports, runnable at once with ``cd NAME && sparkstorm run``.

streamparse's ``project.clj`` and ``fabfile.py`` are left out: there is no JVM project to
build and no fabric task to run.
"""

from __future__ import annotations

import json
from pathlib import Path

from sparkstorm.errors import TopologyError

_CONFIG = {
    "serializer": "json",
    "topology_specs": "topologies/",
    "virtualenv_specs": "virtualenvs/",
    "envs": {
        "prod": {
            "user": "",
            "nimbus": "",
            "workers": [],
            "log": {"path": ""},
            "virtualenv_root": "",
            "options": {},
        },
    },
}

_WORDS_SPOUT = '''\
from itertools import cycle

from sparkstorm import Spout


class WordSpout(Spout):
    outputs = ["word"]

    def initialize(self, stormconf, context):
        self.words = cycle(["dog", "cat", "zebra", "elephant"])

    def next_tuple(self):
        word = next(self.words)
        self.emit([word])
'''

_WORDCOUNT_BOLT = '''\
import os
from collections import Counter

from sparkstorm import Bolt


class WordCountBolt(Bolt):
    outputs = ["word", "count"]

    def initialize(self, conf, ctx):
        self.counter = Counter()
        self.pid = os.getpid()
        self.total = 0

    def _increment(self, word, inc_by):
        self.counter[word] += inc_by
        self.total += inc_by

    def process(self, tup):
        word = tup.values[0]
        self._increment(word, 10 if word == "dog" else 1)
        if self.total % 1000 == 0:
            self.logger.info(
                "counted [{:,}] words [pid={}]".format(self.total, self.pid)
            )
        self.emit([word, self.counter[word]])
'''

_TOPOLOGY = '''\
"""
Word count topology
"""

from sparkstorm import Grouping, Topology

from bolts.wordcount import WordCountBolt
from spouts.words import WordSpout


class WordCount(Topology):
    word_spout = WordSpout.spec()
    count_bolt = WordCountBolt.spec(inputs={word_spout: Grouping.fields("word")}, par=2)
'''

_README = '''\
# {name}

A sparkstorm project in streamparse's layout. Run the word count locally (Ctrl-C stops it):

    sparkstorm run

Submit it to a cluster (`sparkstorm cluster` starts one):

    sparkstorm submit
'''

_GITIGNORE = ".DS_Store\n*.pyc\n__pycache__/\n_build/\n_resources/\nlogs/\nstorm-local/\n"


def project_files(name: str) -> dict[str, str]:
    """The quickstart project's files, by path relative to its folder."""
    return {
        ".gitignore": _GITIGNORE,
        "config.json": json.dumps(_CONFIG, indent=4) + "\n",
        "README.md": _README.format(name=name),
        "src/bolts/__init__.py": "",
        "src/bolts/wordcount.py": _WORDCOUNT_BOLT,
        "src/spouts/__init__.py": "",
        "src/spouts/words.py": _WORDS_SPOUT,
        "topologies/wordcount.py": _TOPOLOGY,
        "virtualenvs/wordcount.txt": "sparkstorm\n",
    }


def quickstart(folder: Path) -> list[Path]:
    """Write the quickstart project into the new folder ``folder``; returns the files.

    Raises:
        TopologyError: ``QUICKSTART_FOLDER_EXISTS`` when ``folder`` exists.
    """
    if folder.exists():
        msg = f'folder "{folder}" already exists; pick a new project name or remove it'
        raise TopologyError(msg, code="QUICKSTART_FOLDER_EXISTS")
    written = []
    for relative, text in project_files(folder.name).items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
