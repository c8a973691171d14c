"""A dict-backed file system for discovery's table tests (Linux and Windows layouts alike)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence


class FakeFileSystem:
    """``files`` are full paths; ``links`` map a path to the path it points at."""

    def __init__(self, files: Iterable[str], links: Mapping[str, str] | None = None, windows: bool = False) -> None:
        self.windows = windows
        self.links = {self._key(k): v for k, v in (links or {}).items()}
        self.folders: dict[str, list[str]] = {}
        for path in [*files, *(links or {})]:
            self._add(path)

    def _add(self, path: str) -> None:
        separator = "\\" if self.windows else "/"
        folder, _, name = path.replace("/", "\\").rpartition("\\") if self.windows else path.rpartition("/")
        known = self._key(folder) in self.folders
        names = self.folders.setdefault(self._key(folder), [])
        if name not in names:
            names.append(name)
        if not known and separator in folder:
            self._add(folder)

    def _key(self, folder: str) -> str:
        return folder.replace("/", "\\").rstrip("\\").lower() if self.windows else folder.rstrip("/")

    def listdir(self, folder: str) -> Sequence[str] | None:
        return self.folders.get(self._key(folder))

    def realpath(self, path: str) -> str:
        seen = 0
        while self._key(path) in self.links and seen < 40:
            path = self.links[self._key(path)]
            seen += 1
        return path
