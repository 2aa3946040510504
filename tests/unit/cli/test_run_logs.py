"""``sparkstorm run``'s executor logs: the kept folder and the follower that prints them."""

from __future__ import annotations

from pathlib import Path

from sparkstorm.cli.logs import LOG_DIR_KEY, LogFollower, run_log_dir


def test_run_log_dir_is_kept_under_storm_local_dir_unless_configured(tmp_path: Path) -> None:
    folder = run_log_dir({"storm.local.dir": str(tmp_path / "local")}, "wc")
    assert folder.is_dir() and folder.parent == tmp_path / "local" / "logs"
    assert folder.name.startswith("wc-")
    chosen = run_log_dir({LOG_DIR_KEY: str(tmp_path / "mine")}, "wc")
    assert chosen == tmp_path / "mine" and chosen.is_dir()


def test_follower_returns_complete_new_lines_once(tmp_path: Path) -> None:
    follower = LogFollower(tmp_path)
    log = tmp_path / "executor-0.log"
    log.write_bytes(b"one\ntw")
    assert follower.new_lines() == ["one"]
    with log.open("ab") as out:
        out.write("o\nthr\u00e9e\n".encode())
    (tmp_path / "executor-1.log").write_text("other\n")
    assert follower.new_lines() == ["two", "thr\u00e9e", "other"]
    assert follower.new_lines() == []
