"""Error codes, path rules, layout encoding and record (de)serialization."""

from __future__ import annotations

import pytest

from sparkstorm.cluster.store import errors, layout
from sparkstorm.cluster.store._paths import Chroot, ancestors, parent_of, validate
from sparkstorm.cluster.store.cluster_state import decode
from sparkstorm.cluster.store.records import (
    Assignment,
    ErrorInfo,
    RecordError,
    StormBase,
    SupervisorInfo,
    TaskInfo,
    TopologyStatus,
    WorkerHeartbeat,
    WorkerSlot,
)


def test_error_codes_are_sorted_unique_and_match_their_classes() -> None:
    codes = list(errors.ERROR_CODES)
    assert codes == sorted(set(codes))
    classes = [c for c in vars(errors).values()
               if isinstance(c, type) and issubclass(c, errors.StateStoreError)]
    for cls in classes:
        assert errors.ERROR_CODES[cls.default_code] is cls
        assert cls(f"{cls.__name__} message").code == cls.default_code


def test_errors_keep_builtin_bases() -> None:
    assert issubclass(errors.NoNodeError, LookupError)
    assert issubclass(errors.StoreUnavailableError, ConnectionError)
    assert str(errors.BadVersionError("x")) == "[STATE_BAD_VERSION] x"


@pytest.mark.parametrize(("path", "parent"), [("/a", "/"), ("/a/b", "/a"), ("/a/b/c", "/a/b")])
def test_parent_of(path: str, parent: str) -> None:
    assert parent_of(path) == parent


def test_sequence_prefix_may_end_with_a_slash() -> None:
    assert validate("/q/", sequence=True) == "/q/"
    with pytest.raises(errors.InvalidPathError):
        validate("/q/")


def test_ancestors_and_chroot() -> None:
    assert ancestors("/a/b/c") == ["/a", "/a/b"]
    chroot = Chroot("/storm")
    assert chroot.full("/") == "/storm" and chroot.full("/x") == "/storm/x"
    assert chroot.rel("/storm") == "/" and chroot.rel("/storm/x") == "/x"
    assert Chroot("/").full("/x") == "/x"


@pytest.mark.parametrize("identifier", ["a/b", "50%", "sp ace", "ünï", "a.b-c_d~e"])
def test_layout_ids_round_trip_in_one_segment(identifier: str) -> None:
    segment = layout.encode(identifier)
    assert "/" not in segment and layout.decode(segment) == identifier


def test_task_paths_are_storm_s() -> None:
    assert layout.task_path("wc-1-17", 12) == "/tasks/wc-1-17/12"
    assert layout.tasks_dir("a/b-1-2") == "/tasks/a%2Fb-1-2"
    assert layout.TASKS in layout.ROOTS and list(layout.ROOTS) == sorted(layout.ROOTS)


@pytest.mark.parametrize("identifier", ["", ".", ".."])
def test_layout_refuses_unusable_ids(identifier: str) -> None:
    with pytest.raises(errors.InvalidPathError):
        layout.storm_path(identifier)


RECORDS = [
    StormBase("wc", TopologyStatus.REBALANCING, 17, 3, {"a": 2}, "bob",
              TopologyStatus.ACTIVE, {"num_workers": 3}),
    Assignment("wc-1-17", {(1, 2): WorkerSlot("n", 6700)}, {(1, 2): 5},
               {WorkerSlot("n", 6700): "w"}, {"n": "host"}),
    SupervisorInfo("s", "h", (6700, 6701), (6700,), 1.5, "0.1.0", 2.5),
    WorkerHeartbeat("wc-1-17", "w", 3.5, {"[1-2]": {"window": 4}}, 9.0, "n", 6700),
    ErrorInfo("split", "Traceback ...", 4.0, "h", 6701),
    TaskInfo("split/words"),
]


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: type(r).__name__)
def test_records_round_trip(record: object) -> None:
    cls = type(record)
    assert cls.from_json(record.to_json()) == record  # type: ignore[attr-defined]


def test_records_ignore_unknown_fields_and_default_optional_ones() -> None:
    minimal = {"name": "wc", "status": "ACTIVE", "launch_time_secs": 1, "num_workers": 1,
               "added_by_a_newer_version": True}
    assert StormBase.from_json(minimal) == StormBase("wc", TopologyStatus.ACTIVE, 1, 1)


@pytest.mark.parametrize(("obj", "fragment"), [
    ([], "must be a JSON object"),
    ({"status": "ACTIVE", "launch_time_secs": 1, "num_workers": 1}, "no field 'name'"),
    ({"name": "x", "status": "DANCING", "launch_time_secs": 1, "num_workers": 1},
     "not a topology status"),
    ({"name": "x", "status": "ACTIVE", "launch_time_secs": True, "num_workers": 1},
     "'launch_time_secs'"),
])
def test_bad_records_name_the_field(obj: object, fragment: str) -> None:
    with pytest.raises(RecordError, match=fragment):
        StormBase.from_json(obj)


def test_decode_names_the_path_and_shows_the_bytes() -> None:
    with pytest.raises(errors.CorruptStateError) as caught:
        decode("/assignments/x", b'{"executors": 3}', Assignment.from_json, "Assignment")
    message = str(caught.value)
    assert caught.value.code == "STATE_CORRUPT_NODE"
    assert "'/assignments/x'" in message and "Assignment" in message and "executors" in message
