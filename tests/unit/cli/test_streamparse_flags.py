"""streamparse's flags on ``kill``, ``list`` and the other cluster commands (no Spark).

``-e ENV`` finds Nimbus in the project's ``config.json``; ``kill`` takes ``-n NAME`` or the
project's only topology; an unreachable Nimbus is named by the key that gave its address.
"""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import pytest

from sparkstorm.cli import errors as cli_errors
from sparkstorm.cli.cluster_args import nimbus_target, topology_name
from sparkstorm.cli.errors import CliError
from sparkstorm.cli.main import build_parser, main
from sparkstorm.errors import TopologyError
from sparkstorm.project import quickstart
from sparkstorm.topology.spec_args import ENVIRONMENT_VAR

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "wordcount"
    quickstart(root)
    monkeypatch.chdir(root)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delenv(ENVIRONMENT_VAR, raising=False)
    for module in [m for m in sys.modules if m.split(".")[0] in ("bolts", "spouts",
                                                                   "wordcount")]:
        monkeypatch.delitem(sys.modules, module)
    return root


def _envs(project: Path, **envs: dict[str, object]) -> None:
    config = json.loads((project / "config.json").read_text())
    config["envs"] = envs
    (project / "config.json").write_text(json.dumps(config))


def _free_port() -> int:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_kill_takes_a_positional_name_n_or_the_project_s_only_topology(
        project: Path) -> None:
    parse = build_parser().parse_args
    assert topology_name(parse(["kill", "excl"]), None, "kill") == "excl"
    args = parse(["kill", "-n", "other", "--wait", "5", "-e", "prod", "--timeout", "700"])
    assert (topology_name(args, None, "kill"), args.wait, args.environment,
            args.timeout) == ("other", 5, "prod", 700)
    target = nimbus_target(parse(["kill"]))
    assert topology_name(parse(["kill"]), target.project, "kill") == "wordcount"
    (project / "topologies" / "second.py").write_text("")
    with pytest.raises(TopologyError) as ambiguous:
        topology_name(parse(["kill"]), target.project, "kill")
    assert ambiguous.value.code == "PROJECT_TOPOLOGY_AMBIGUOUS"


def test_without_a_project_a_name_is_required(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for command in ("kill", "tail", "remove_logs"):
        with pytest.raises(CliError) as missing:
            topology_name(build_parser().parse_args([command]), None, command)
        assert missing.value.code == "TOPOLOGY_NAME_REQUIRED"
        assert f"sparkstorm {command} -n NAME" in str(missing.value)


@pytest.mark.parametrize("command", [["list"], ["kill", "x"], ["activate", "x"],
                                     ["deactivate", "x"], ["monitor", "x"], ["stats"],
                                     ["tail"], ["remove_logs"], ["slot_usage"],
                                     ["worker_uptime"], ["rebalance", "x", "--environment"]])
def test_every_cluster_command_finds_nimbus_in_config_json_with_e(
        project: Path, command: list[str]) -> None:
    _envs(project, prod={"nimbus": "nimbus.example.com:7000"}, beta={"nimbus": "beta"})
    flag = [] if command[-1] == "--environment" else ["-e"]
    args = build_parser().parse_args([*command, *flag, "prod"])
    target = nimbus_target(args)
    assert (target.conf["nimbus.host"], target.conf["nimbus.port"]) == (
        "nimbus.example.com", 7000)
    assert target.origin == "config.json envs.prod.nimbus = 'nimbus.example.com:7000'"


def test_nimbus_precedence_and_refusals(project: Path, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    parse = build_parser().parse_args
    _envs(project, prod={"nimbus": "prod-host:7000"}, beta={"nimbus": "beta-host"},
          dev={}, bad={"nimbus": "host:port"})
    target = nimbus_target(parse(["list", "-e", "prod", "-c", "nimbus.host=other"]))
    assert (target.conf["nimbus.host"], target.conf["nimbus.port"], target.origin) == (
        "other", 7000, None), "-c wins over config.json; the address is then the user's"
    assert nimbus_target(parse(["list", "-e", "beta"])).conf["nimbus.host"] == "beta-host"
    several = nimbus_target(parse(["list"]))
    assert (several.conf["nimbus.host"], several.origin) == ("127.0.0.1", None), (
        "several environments and no -e: the configuration's Nimbus")
    for env, code, text in (("dev", "ENVIRONMENT_NIMBUS_UNSET", "envs.dev has no nimbus"),
                            ("bad", "ENVIRONMENT_NIMBUS_INVALID",
                             "config.json envs.bad.nimbus = 'host:port'")):
        with pytest.raises(CliError) as refused:
            nimbus_target(parse(["list", "-e", env]))
        assert refused.value.code == code and text in str(refused.value), refused.value
    with pytest.raises(TopologyError) as unknown:
        nimbus_target(parse(["list", "-e", "nope"]))
    assert unknown.value.code == "PROJECT_ENVIRONMENT_UNKNOWN"
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CliError) as outside:
        nimbus_target(parse(["list", "-e", "prod"]))
    assert outside.value.code == "ENVIRONMENT_WITHOUT_PROJECT"


@pytest.mark.parametrize("command", [["list"], ["kill"], ["stats"], ["slot_usage"],
                                     ["worker_uptime"], ["tail"]])
def test_an_unreachable_nimbus_names_the_environment_and_key(
        project: Path, command: list[str], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # a plain Nimbus: without TLS material the CLI would stop at TLS_MATERIAL_MISSING first
    monkeypatch.setenv("SPARKSTORM_STORM_TLS_ENABLED", "false")
    port = _free_port()
    _envs(project, prod={"nimbus": f"127.0.0.1:{port}"})
    assert main([*command, "-e", "prod", "--timeout", "2000"]) == 2
    err = capsys.readouterr().err
    assert "[NIMBUS_UNAVAILABLE]" in err
    assert f"config.json envs.prod.nimbus = '127.0.0.1:{port}'" in err, err


def test_cli_error_codes_are_sorted_unique_and_all_declared() -> None:
    codes = cli_errors.CODES
    assert list(codes) == sorted(set(codes))
    sources = "\n".join(p.read_text() for p in (ROOT / "src/sparkstorm/cli").glob("*.py"))
    for code in codes:
        assert f'code="{code}"' in sources, f"{code} is declared but never raised"
