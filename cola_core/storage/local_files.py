"""The local file system, for a Spark Connect client: it has no JVM, so no Hadoop
``FileSystem``, and publishes local paths itself, once a probe has shown that the server writes
the files this client reads (a local server, or a mount both share).
"""

from __future__ import annotations

import os
import shutil
import uuid
import weakref
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from cola_core.common.spark_errors import analyse_now, first_line
from cola_core.errors import ColaOutputError
from cola_core.storage.hadoop_files import HIDDEN_PREFIXES

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["LocalFileSystem"]

# The folders each Connect session was shown to share with this client (LocalFileSystem).
_SHARED_FOLDERS: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()


class LocalFileSystem:
    """:class:`~cola_core.storage.hadoop_files.FileSystem`'s calls on the local file system, for a
    Spark Connect client.

    Spark Connect gives the client no file system API, so the client moves the staged files
    itself. That is only right when Spark writes where the client reads: the server must run
    in local mode (its executors write on its own machine), and each folder used is probed
    once per session (a file written here must be visible to the server's reader, under the
    name as given, so a plain path that the server would resolve on HDFS fails). Anything
    else is refused before anything is written.

    Raises:
        ColaOutputError: a location that is not a local path, a server that is not in local
            mode, or a folder the server does not see as this client does.
    """

    def __init__(self, spark: SparkSession) -> None:
        self._spark = spark
        # Per session, not per instance: the split, the history store and its reads share it.
        self._shared = _SHARED_FOLDERS.setdefault(spark, set())

    def qualified(self, location: str) -> str:
        return f"file:{self._local(location)}"

    def same_file_system(self, first: str, second: str) -> bool:
        return os.stat(self._existing(self._local(first))).st_dev == os.stat(self._existing(self._local(second))).st_dev

    def exists(self, location: str) -> bool:
        return os.path.lexists(self._local(location))

    def is_directory(self, location: str) -> bool:
        return os.path.isdir(self._local(location))

    def parent(self, location: str) -> str:
        path = self._local(location)
        if path == "/":
            raise ColaOutputError(f"output {location!r} is the root of its file system; write to a folder below it")
        return self.qualified(os.path.dirname(path))

    def child(self, location: str, name: str) -> str:
        return self.qualified(os.path.join(self._local(location), name))

    def sibling(self, location: str, prefix: str) -> str:
        name = os.path.basename(self._local(location))
        return self.child(self.parent(location), f"{prefix}_{uuid.uuid4().hex}_{name}")

    def rename(self, source: str, target: str) -> None:
        source_path, target_path = self._local(source), self._local(target)
        if os.path.lexists(target_path):
            raise ColaOutputError(f"cannot move {source} to {target}: {target} already exists")
        try:
            os.rename(source_path, target_path)
        except OSError as error:
            raise ColaOutputError(f"cannot move {source} to {target}: {error}") from error

    def delete(self, location: str) -> None:
        path = self._local(location)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.unlink(path)

    def make_folders(self, location: str) -> list[str]:
        created: list[str] = []
        current = self._local(location)
        while not os.path.lexists(current):
            created.append(self.qualified(current))
            current = os.path.dirname(current)
        if not os.path.isdir(current):
            raise ColaOutputError(f"cannot create the folder {location}: file:{current} is a file, not a folder")
        try:
            os.makedirs(self._local(location), exist_ok=True)
        except OSError as error:
            raise ColaOutputError(f"cannot create the folder {location}: {error}") from error
        return created

    def data_files(self, location: str) -> list[str]:
        root = self._local(location)
        found: list[str] = []
        for folder, folders, files in os.walk(root):
            folders[:] = sorted(name for name in folders if not name.startswith(HIDDEN_PREFIXES))
            relative = os.path.relpath(folder, root)
            prefix = "" if relative == "." else f"{relative}/"
            found.extend(f"{prefix}{name}" for name in sorted(files) if not name.startswith(HIDDEN_PREFIXES))
        return found

    def touch(self, location: str) -> None:
        with open(self._local(location), "w"):
            pass

    def write_text(self, location: str, text: str) -> None:
        """As :meth:`FileSystem.write_text`: written beside, then renamed in."""
        path = self._local(location)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        written = f"{path}.{uuid.uuid4().hex}.writing"
        with open(written, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(written, path)

    def read_text(self, location: str) -> str:
        with open(self._local(location), encoding="utf-8") as handle:
            return handle.read()

    def _local(self, location: str) -> str:
        """The absolute local path of ``location``, in a folder the server shares."""
        parts = urlsplit(location)
        if parts.scheme not in ("", "file") or parts.netloc not in ("", "localhost"):
            raise ColaOutputError(
                f"over Spark Connect, Cola can only publish to local paths the server shares with this client, "
                f"not {location!r}: the client has no access to the server's file systems"
            )
        path = parts.path if parts.scheme == "file" else location
        if not os.path.isabs(path):
            raise ColaOutputError(
                f"over Spark Connect, a path output must be absolute, got {location!r}: the server resolves "
                "relative paths against its own working folder"
            )
        path = os.path.normpath(path)
        self._ensure_shared(self._existing(path), plain=parts.scheme == "")
        return path

    @staticmethod
    def _existing(path: str) -> str:
        """The deepest existing folder that is ``path`` or holds it."""
        while not os.path.isdir(path):
            path = os.path.dirname(path)
        return path

    def _ensure_shared(self, folder: str, *, plain: bool) -> None:
        # One analysis request, no job, per folder not below one already probed: Spark lists
        # a path when it resolves a read.
        key = f"{'' if plain else 'file:'}{folder.rstrip('/')}/"
        if any(key.startswith(shared) for shared in self._shared):
            return
        if not self._shared:
            master = str(self._spark.conf.get("spark.master", "unknown"))
            if not master.startswith("local"):
                raise ColaOutputError(
                    "over Spark Connect, Cola publishes path outputs and stages a split from this client, which "
                    f"needs a server in local mode on a file system this client shares; this server's master is "
                    f"{master}"
                )
        probe = os.path.join(folder, f"_cola_probe_{uuid.uuid4().hex}")
        try:
            try:
                os.mkdir(probe)
                with open(os.path.join(probe, "probe.txt"), "w") as handle:
                    handle.write("cola\n")
            except OSError as error:
                raise ColaOutputError(f"cannot write to {folder}: {error}") from error
            try:
                analyse_now(self._spark.read.format("text").load(probe if plain else f"file:{probe}"))
            except Exception as error:
                raise ColaOutputError(
                    f"over Spark Connect, Cola publishes path outputs from this client, but the server does not see "
                    f"{folder} as this client does ({first_line(error)}); use a local server or a shared mount"
                ) from error
        finally:
            shutil.rmtree(probe, ignore_errors=True)
        # A plain path the server finds locally names the same files with the file: scheme.
        self._shared.update({key, f"file:{folder.rstrip('/')}/"} if plain else {key})

