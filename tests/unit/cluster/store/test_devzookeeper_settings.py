"""The dev ZooKeeper server's settings: loopback unless ``dev.zookeeper.bind.address`` says."""

from __future__ import annotations

from pathlib import Path

from sparkstorm.cluster.store.devzookeeper import dev_settings


def test_loopback_by_default(tmp_path: Path) -> None:
    cfg = dev_settings({"storm.local.dir": str(tmp_path)}).zoo_cfg()
    assert "clientPortAddress=127.0.0.1\n" in cfg


def test_bind_address_reaches_the_config_file(tmp_path: Path) -> None:
    settings = dev_settings({"storm.local.dir": str(tmp_path), "storm.zookeeper.port": 2191,
                             "dev.zookeeper.bind.address": "10.79.0.1"})
    cfg = settings.zoo_cfg()
    assert "clientPortAddress=10.79.0.1\n" in cfg and "clientPort=2191\n" in cfg
    assert settings.data_dir == tmp_path.resolve() / "dev-zookeeper"
