"""A topology's virtualenv on a worker host: which one, built once, reused, failures (no Spark).

The build's commands run through a fake, except in the last test, which builds a real
virtualenv from a wheel made on the spot (offline, a few seconds).
"""

from __future__ import annotations

import fcntl
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from sparkstorm.cluster.worker.errors import VirtualenvError
from sparkstorm.cluster.worker.virtualenv import (
    MARKER,
    TIMED_OUT,
    VirtualenvSpec,
    ensure_virtualenv,
    run_logged,
    running_in_virtualenv,
    worker_virtualenv,
)
from tests.wheels import TINY_PACKAGE, tiny_wheel


class FakeBuild:
    """Runs nothing: records each command, makes ``python -m venv``'s folder, fails on asks.

    Args:
        fail: a word of the command that fails (exit 1), with pip-like output.
        code: the exit code of the failing command.
    """

    def __init__(self, fail: str | None = None, code: int = 1) -> None:
        self.fail = fail
        self.code = code
        self.commands: list[list[str]] = []
        self.cwds: list[Path | None] = []

    def __call__(self, command: list[str], cwd: Path | None, log: Path,
                 timeout: float) -> int:
        self.commands.append(command)
        self.cwds.append(cwd)
        if self.fail is not None and self.fail in command:
            with log.open("a") as out:
                out.write("Processing ./thing\nERROR: No matching distribution found for "
                          "nothing-here\nHint: check the name\n")
            return self.code
        if "venv" in command:
            (Path(command[-1]) / "bin").mkdir(parents=True)
        return 0

    def ran(self, word: str) -> bool:
        return any(word in command for command in self.commands)


def spec(tmp_path: Path, requirements: str = "tinydep\n", **kwargs: object) -> VirtualenvSpec:
    return VirtualenvSpec("numbers", requirements, tmp_path / "venvs", **kwargs)  # type: ignore[arg-type]


def test_no_requirements_no_virtualenv(tmp_path: Path) -> None:
    assert VirtualenvSpec.from_conf({}, "numbers", tmp_path) is None
    assert worker_virtualenv({"conf": {}, "topology_name": "numbers"}, tmp_path,
                             tmp_path) is None


def test_the_conf_names_the_virtualenv(tmp_path: Path) -> None:
    found = VirtualenvSpec.from_conf({"topology.virtualenv.requirements": "x\n"}, "numbers",
                                     tmp_path)
    assert found == VirtualenvSpec("numbers", "x\n", tmp_path, (), True, 900.0)
    named = VirtualenvSpec.from_conf({
        "topology.virtualenv.requirements": "x\n", "topology.virtualenv.name": "../a b",
        "topology.virtualenv.root": "/srv/venvs",
        "topology.virtualenv.flags": "--copies --prompt 'my env'"}, "numbers", tmp_path)
    assert named is not None and named.name == "_a_b" and named.root == Path("/srv/venvs")
    assert named.flags == ("--copies", "--prompt", "my env")
    relative = VirtualenvSpec.from_conf({"topology.virtualenv.requirements": "x\n",
                                         "topology.virtualenv.root": "venvs"}, "t", tmp_path)
    assert relative is not None and relative.root == tmp_path / "venvs"
    given = VirtualenvSpec.from_conf({"topology.virtualenv.install": False}, "numbers",
                                     tmp_path)
    assert given is not None and given.folder == tmp_path / "numbers", "no digest"


def test_flags_that_do_not_split_are_refused(tmp_path: Path) -> None:
    with pytest.raises(VirtualenvError) as error:
        VirtualenvSpec.from_conf({"topology.virtualenv.requirements": "x",
                                  "topology.virtualenv.flags": "--prompt 'open"}, "t", tmp_path)
    assert error.value.code == "VIRTUALENV_INSTALL_FAILED"


def test_the_digest_follows_requirements_and_flags_only(tmp_path: Path) -> None:
    one = spec(tmp_path)
    assert one.digest() == spec(tmp_path).digest() and len(one.digest()) == 12
    assert one.folder == tmp_path / "venvs" / f"numbers-{one.digest()}"
    assert spec(tmp_path, "tinydep==2\n").digest() != one.digest()
    assert spec(tmp_path, flags=("--copies",)).digest() != one.digest()


def test_built_once_then_reused_while_unchanged(tmp_path: Path) -> None:
    build = FakeBuild()
    code = tmp_path / "code"
    python = ensure_virtualenv(spec(tmp_path), code, build)
    folder = spec(tmp_path).folder
    assert python == folder / "bin" / "python" and (folder / MARKER).is_file()
    assert build.ran("venv") and build.ran("install")
    assert (folder / "requirements.txt").read_text() == "tinydep\n"
    assert code in build.cwds, "pip runs in the code: relative requirement paths"
    assert "site.addsitedir" in next(folder.rglob("_sparkstorm_host.pth")).read_text()

    again = FakeBuild()
    assert ensure_virtualenv(spec(tmp_path), code, again) == python
    assert again.commands == [], "reused, nothing run"
    changed = FakeBuild()
    assert ensure_virtualenv(spec(tmp_path, "tinydep==2\n"), code, changed) != python
    assert changed.ran("install"), "new requirements, new virtualenv"


def test_a_failed_install_says_why_and_is_tried_again_at_the_next_start(
        tmp_path: Path) -> None:
    with pytest.raises(VirtualenvError) as error:
        ensure_virtualenv(spec(tmp_path), None, FakeBuild(fail="install"))
    assert error.value.code == "VIRTUALENV_INSTALL_FAILED"
    first, *rest = str(error.value.args[0]).splitlines()
    assert "pip install failed (exit code 1): ERROR: No matching distribution" in first
    assert "virtualenvs/<topology name>.txt" in rest[0], "how to fix it"
    assert any("Hint: check the name" in line for line in rest), "pip's last lines"
    folder = spec(tmp_path).folder
    assert not (folder / MARKER).exists()
    assert folder.with_name(folder.name + ".failed").is_file()

    retry = FakeBuild()  # the supervisor's back-off decides when: the worker just builds
    ensure_virtualenv(spec(tmp_path), None, retry)
    assert retry.ran("install") and (folder / MARKER).is_file()
    assert not folder.with_name(folder.name + ".failed").exists()


def test_a_build_that_times_out_names_the_key(tmp_path: Path) -> None:
    with pytest.raises(VirtualenvError) as error:
        ensure_virtualenv(spec(tmp_path, timeout_secs=5.0), None,
                          FakeBuild(fail="install", code=TIMED_OUT))
    assert "timed out after 5 s (topology.virtualenv.install.timeout.secs)" in str(error.value)


def test_a_waiting_worker_reports_the_build_it_waited_for(tmp_path: Path) -> None:
    one = spec(tmp_path)
    one.root.mkdir(parents=True)
    lock = one.folder.with_name(one.folder.name + ".lock")
    raised: list[BaseException] = []
    waiter_build = FakeBuild()

    def wait() -> None:
        try:
            ensure_virtualenv(one, None, waiter_build)
        except VirtualenvError as exc:
            raised.append(exc)

    with lock.open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # another worker builds
        thread = threading.Thread(target=wait)
        thread.start()
        thread.join(0.7)
        assert thread.is_alive(), "it waits for the lock"
        one.folder.with_name(one.folder.name + ".failed").write_text("pip said no")
        fcntl.flock(held, fcntl.LOCK_UN)
    thread.join(10)
    assert [str(e) for e in raised] == ["[VIRTUALENV_INSTALL_FAILED] pip said no"]
    assert waiter_build.commands == [], "not built again"


def test_a_virtualenv_not_to_be_built_must_be_there(tmp_path: Path) -> None:
    given = spec(tmp_path, "", install=False)
    with pytest.raises(VirtualenvError) as error:
        ensure_virtualenv(given, None, FakeBuild())
    assert error.value.code == "VIRTUALENV_NOT_FOUND"
    (given.folder / "bin").mkdir(parents=True)
    (given.folder / "bin" / "python").touch()
    with pytest.raises(VirtualenvError) as error:
        ensure_virtualenv(given, None, FakeBuild(fail="-c"))
    assert error.value.code == "VIRTUALENV_UNUSABLE"
    assert ensure_virtualenv(given, None, FakeBuild()) == given.folder / "bin" / "python"


def test_run_logged_appends_the_output_and_bounds_the_time(tmp_path: Path) -> None:
    log = tmp_path / "build.log"
    assert run_logged([sys.executable, "-c", "print('hello')"], None, log, 30) == 0
    assert run_logged([sys.executable, "-c", "import time; time.sleep(5)"], None, log,
                      0.2) == TIMED_OUT
    assert run_logged([str(tmp_path / "nothing")], None, log, 5) == 127
    text = log.read_text()
    assert "hello" in text and "timed out" in text and "cannot run it" in text


def test_a_real_virtualenv_has_the_requirements_and_this_hosts_packages(
        tmp_path: Path) -> None:
    wheel = tiny_wheel(tmp_path / "wheels")
    real = spec(tmp_path, f"sparkstorm\n{wheel}\n")
    python = ensure_virtualenv(real, tmp_path)
    check = subprocess.run(
        [str(python), "-c", f"import {TINY_PACKAGE}, sparkstorm, msgpack, sys; "
                            f"print({TINY_PACKAGE}.VALUE, sys.prefix)"],
        capture_output=True, text=True, timeout=60, check=False)
    assert check.returncode == 0, check.stderr
    assert check.stdout.split() == ["42", str(real.folder)]
    mine = subprocess.run([sys.executable, "-c", f"import {TINY_PACKAGE}"],
                          capture_output=True, timeout=60, check=False)
    assert mine.returncode != 0, "this environment lacks the package"
    assert not running_in_virtualenv()
