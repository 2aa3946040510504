"""streamparse's ``run -a/--ackers``, ``-w/--workers`` and ``-d/--debug`` (no Spark).

They land in the topology's conf as the ``-o`` options they spell would, in command-line order.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sparkstorm.cli.main import build_parser
from sparkstorm.cli.target import resolve_target

ROOT = Path(__file__).resolve().parents[3]


def test_run_ackers_workers_and_debug_are_options_in_command_line_order() -> None:
    args = build_parser().parse_args(["run", "-a", "0", "-w", "3", "-d",
                                      str(ROOT / "examples/exclamation.py"),
                                      "-o", "topology.workers=2", "--ackers", "4"])
    assert args.config == ["topology.acker.executors=0", "topology.workers=3",
                           "topology.debug=true", "topology.workers=2",
                           "topology.acker.executors=4"]
    assert args.file.endswith("exclamation.py"), "-d takes no value: the file stays the file"
    conf = resolve_target(args, submitting=False).spec.config
    assert (conf["topology.acker.executors"], conf["topology.workers"],
            conf["topology.debug"]) == (4, 2, True), "the later one wins, as with -o"
    plain = build_parser().parse_args(["run", "x.py"])
    assert plain.config == [], "without the flags nothing is set"


@pytest.mark.parametrize("argv", [["-a", "-1"], ["-a", "x"], ["-w", "0"], ["--workers", "2.5"]])
def test_run_refuses_counts_out_of_range(argv: list[str],
                                         capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["run", *argv, "x.py"])
    assert exited.value.code == 2
    assert "expected a whole number" in capsys.readouterr().err
