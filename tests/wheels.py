"""A tiny wheel made on the spot: a package the test environment lacks, installed offline.

pip installs a wheel file named in a requirements file without an index or a build backend,
so virtualenv tests need neither the network nor setuptools' ``bdist_wheel``.
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

TINY_PACKAGE = "sparkstorm_test_tinydep"
"""The import name of :func:`tiny_wheel`'s package (no environment has it installed)."""


def make_wheel(folder: Path, name: str, version: str, files: dict[str, str]) -> Path:
    """Write a pure-Python wheel of ``files`` (path in the wheel -> text); return its path."""
    dist = name.replace("-", "_")
    info = f"{dist}-{version}.dist-info"
    contents = {**files,
                f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
                f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: sparkstorm-tests\n"
                                 "Root-Is-Purelib: true\nTag: py3-none-any\n"}
    record = [f"{path},sha256={_digest(text)},{len(text.encode())}"
              for path, text in contents.items()]
    contents[f"{info}/RECORD"] = "\n".join([*record, f"{info}/RECORD,,"]) + "\n"
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"{dist}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in contents.items():
            archive.writestr(path, text)
    return wheel


def tiny_wheel(folder: Path, value: int = 42) -> Path:
    """A wheel of :data:`TINY_PACKAGE`, whose ``VALUE`` is ``value``."""
    return make_wheel(folder, TINY_PACKAGE.replace("_", "-"), "0.1",
                      {f"{TINY_PACKAGE}/__init__.py": f"VALUE = {value}\n"})


def _digest(text: str) -> str:
    raw = hashlib.sha256(text.encode()).digest()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
