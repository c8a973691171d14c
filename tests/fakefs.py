"""A dict-backed file system for discovery's table tests (Linux and Windows layouts alike)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from pytest_cudnn.probe.discovery import note_unreadable


class FakeFileSystem:
    """``files`` are full paths; ``links`` map a path to the path it points at; ``errors`` map a folder to the
    OSError listing it raises (a PermissionError for a folder root cannot be denied, say)."""

    def __init__(
        self,
        files: Iterable[str],
        links: Mapping[str, str] | None = None,
        windows: bool = False,
        errors: Mapping[str, OSError] | None = None,
    ) -> None:
        self.windows = windows
        self.unreadable: dict[str, str] = {}
        self.errors = {self._key(k): v for k, v in (errors or {}).items()}
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
        error = self.errors.get(self._key(folder))
        if error is not None:
            note_unreadable(self.unreadable, folder, error)
            return None
        return self.folders.get(self._key(folder))

    def realpath(self, path: str) -> str:
        seen = 0
        while self._key(path) in self.links and seen < 40:
            path = self.links[self._key(path)]
            seen += 1
        return path
