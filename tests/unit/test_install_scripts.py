"""scripts/apt-install.sh, the apt-get steps every scripts/install-*.sh shares.

apt-get itself is replaced by a recording stand-in on the PATH: the real one would change
this machine's packages. Each install script's "already installed" path runs for real
wherever its program is there (``make services`` runs them on every test run).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def _fake_apt(folder: Path, *, known: bool, fails_first: bool) -> Path:
    """apt-get, apt-cache and dpkg-query stand-ins that log their arguments to ``calls``."""
    log = folder / "calls"
    folder.mkdir()
    failed_once = folder / "failed-once"
    tools = {
        "apt-cache": f'echo "apt-cache $*" >> {log}; exit {0 if known else 100}',
        "apt-get": (f'echo "apt-get $*" >> {log}\n'
                    f'if [[ $1 == install && {int(fails_first)} == 1 && ! -e {failed_once} ]]; '
                    f'then touch {failed_once}; exit 100; fi'),
        "dpkg-query": 'echo "fakepkg 1.0"',
    }
    for name, body in tools.items():
        tool = folder / name
        tool.write_text(f"#!/usr/bin/env bash\n{body}\n")
        tool.chmod(0o755)
    return log


def _apt_install(tmp_path: Path, path: str) -> subprocess.CompletedProcess[str]:
    script = f'set -euo pipefail; source {SCRIPTS}/apt-install.sh; apt_install who fakepkg "x"'
    bash = shutil.which("bash") or "/bin/bash"
    return subprocess.run([bash, "-c", script], capture_output=True, text=True, timeout=30,
                          env={"PATH": path, "HOME": str(tmp_path)}, check=False)


@pytest.mark.parametrize(("known", "fails_first", "calls"), [
    (True, False, ["apt-cache show fakepkg",
                   "apt-get install -y -qq --no-install-recommends fakepkg"]),
    (False, False, ["apt-cache show fakepkg", "apt-get update -qq",
                    "apt-get install -y -qq --no-install-recommends fakepkg"]),
    (True, True, ["apt-cache show fakepkg",
                  "apt-get install -y -qq --no-install-recommends fakepkg",
                  "apt-get update -qq",
                  "apt-get install -y -qq --no-install-recommends fakepkg"]),
])
def test_apt_install_updates_only_when_needed_and_retries_once(
        tmp_path: Path, known: bool, fails_first: bool, calls: list[str]) -> None:
    if subprocess.run(["id", "-u"], capture_output=True, text=True,
                      check=True).stdout.strip() != "0":
        pytest.skip("as root only: the sudo path would need a real sudo")
    log = _fake_apt(tmp_path / "bin", known=known, fails_first=fails_first)
    done = _apt_install(tmp_path, f"{tmp_path / 'bin'}:/usr/bin:/bin")
    assert done.returncode == 0, done.stderr
    assert log.read_text().splitlines() == calls
    assert done.stdout.splitlines()[-1] == "who: installed fakepkg 1.0"


def test_without_apt_get_it_says_what_to_install_by_hand(tmp_path: Path) -> None:
    bare = tmp_path / "bare"
    bare.mkdir()
    for tool in ("id", "sudo"):  # everything apt_install uses before apt-get
        found = shutil.which(tool)
        if found:
            (bare / tool).symlink_to(found)
    done = _apt_install(tmp_path, str(bare))
    assert done.returncode == 1
    assert "install fakepkg yourself" in done.stderr or "apt-get install fakepkg" in done.stderr


@pytest.mark.parametrize("script", sorted(p.name for p in SCRIPTS.glob("install-*.sh")))
def test_every_install_script_uses_the_shared_steps(script: str) -> None:
    text = (SCRIPTS / script).read_text()
    assert 'source "$(dirname "$0")/apt-install.sh"' in text
    assert "apt-get install" not in text, "apt-get steps belong in apt-install.sh"
