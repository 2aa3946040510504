"""Path rules shared by the backends: ZooKeeper's, plus a chroot applied by the store itself."""

from __future__ import annotations

from sparkstorm.cluster.store.errors import InvalidPathError

_FIX = "paths look like '/storms/wordcount-1-1700000000': absolute, '/'-separated, no empty part"


def _bad(path: object, why: str) -> InvalidPathError:
    msg = f"state store path {path!r} is invalid: {why}; {_FIX}"
    return InvalidPathError(msg, code=InvalidPathError.default_code)


def validate(path: str, *, sequence: bool = False) -> str:
    """Check a node path and return it unchanged.

    Args:
        path: the path, e.g. ``"/assignments/wc-1-17"``.
        sequence: the path is a sequence-node prefix, so it may end with ``/`` (ZooKeeper
            appends the 10-digit counter).

    Returns:
        ``path``.

    Raises:
        InvalidPathError: the path is not a string, not absolute, ends with ``/`` (except
            ``"/"`` and sequence prefixes), or has an empty, ``.`` or ``..`` part or a NUL.
    """
    if not isinstance(path, str) or not path.startswith("/"):
        raise _bad(path, "it must be a str starting with '/'")
    if "\x00" in path:
        raise _bad(path, "it contains a NUL character")
    if path == "/":
        return path
    body = path[1:-1] if sequence and path.endswith("/") else path[1:]
    for part in body.split("/"):
        if part in ("", ".", ".."):
            raise _bad(path, f"it has an empty, '.' or '..' part ({part!r})")
    return path


def parent_of(path: str) -> str:
    """Return the parent of a full path (``"/"`` for top-level nodes)."""
    head = path.rsplit("/", 1)[0]
    return head or "/"


def name_of(path: str) -> str:
    """Return the last part of a path (``""`` for ``"/"``)."""
    return path.rsplit("/", 1)[1]


def join(parent: str, name: str) -> str:
    """Join a parent path and a child name."""
    return parent + name if parent.endswith("/") else f"{parent}/{name}"


def ancestors(path: str) -> list[str]:
    """Return the proper ancestors of a full path, shortest first, without ``"/"``."""
    parts = path.strip("/").split("/")[:-1]
    return ["/" + "/".join(parts[: i + 1]) for i in range(len(parts))]


class Chroot:
    """Maps the store's paths into ``root`` (``storm.zookeeper.root``) and back.

    Both backends apply the chroot themselves, so ``root`` is created on open and behaves the
    same in SQLite and in ZooKeeper.

    Args:
        root: absolute path of the root node, e.g. ``"/storm"``; ``"/"`` for none.

    Raises:
        InvalidPathError: ``root`` is not a valid path.
    """

    def __init__(self, root: str) -> None:
        self.root = "/" if root == "/" else validate(root)

    def full(self, path: str) -> str:
        """Return the backend path of a store path."""
        if self.root == "/":
            return path
        return self.root if path == "/" else self.root + path

    def rel(self, full: str) -> str:
        """Return the store path of a backend path inside the root."""
        if self.root == "/":
            return full
        return full[len(self.root) :] or "/"
