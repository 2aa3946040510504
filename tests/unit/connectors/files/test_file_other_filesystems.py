"""The file connectors on a filesystem other than the local disk: fsspec's ``memory://``.

It has no file descriptors (no fsync) and keeps files in this process, as an object store
keeps them elsewhere: the sink's pending files, renames and moves and the spout's locks go
through fsspec alone.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import fsspec
import pytest

from sparkstorm.connectors.files import FileBolt, FileSpout
from sparkstorm.testing import BoltHarness, SpoutHarness


@pytest.fixture
def root() -> Iterator[str]:
    folder = f"/files-test-{uuid.uuid4().hex}"
    yield folder
    fs = fsspec.filesystem("memory")
    if fs.exists(folder):
        fs.rm(folder, recursive=True)


def test_sink_and_spout_work_through_fsspec_alone(root: str) -> None:
    fs = fsspec.filesystem("memory")
    sink = BoltHarness(FileBolt.spec(name="sink", path=f"memory://{root}/out",
                                     move_to=f"memory://{root}/moved", rotate_size_bytes=40),
                       conf={"topology.checkpoint.windows": 2},
                       inputs={"numbers": ["n", "word"]}, name="sink")
    for n in range(5):
        sink.process([n, "w"])
    assert all(name.rsplit("/", 1)[1].startswith(".")
               for name in fs.ls(f"{root}/out", detail=False)), "pending until the commit"
    sink.instance.pre_prepare(2)
    sink.instance.pre_commit(2)
    moved = sorted(fs.ls(f"{root}/moved", detail=False))
    assert fs.ls(f"{root}/out", detail=False) == [] and len(moved) >= 2
    assert sorted(json.loads(line)["n"] for path in moved
                  for line in fs.cat(path).decode().splitlines()) == list(range(5))

    fs.pipe(f"{root}/in/a.txt", b"x1\nx2\n")
    spout = SpoutHarness(FileSpout.spec(name="lines", source_dir=f"memory://{root}/in",
                                        done_dir=f"memory://{root}/done",
                                        bad_dir=f"memory://{root}/bad"), name="lines")
    lines = [e.values[0] for _ in range(4) for e in spout.next_tuple().emits]
    assert lines == ["x1", "x2"]
    assert fs.exists(f"{root}/in/.lock/a.txt.lock")
    spout.ack(("a.txt", 0))
    spout.ack(("a.txt", 3))
    spout.next_tuple()
    assert fs.exists(f"{root}/done/a.txt") and not fs.exists(f"{root}/in/a.txt")
    assert not fs.exists(f"{root}/in/.lock/a.txt.lock")
