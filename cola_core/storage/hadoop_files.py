"""Hadoop's ``FileSystem``, reached through the JVM of a classic session: the file system a
split is published on, on any location Spark can write (HDFS, object stores, the local disk).

:mod:`cola_core.storage.local_files` holds the same calls for a Spark Connect client, which has
no JVM; :func:`cola_core.storage.publish.file_system` chooses between the two.
"""

from __future__ import annotations

import re
import uuid
from typing import TYPE_CHECKING, Any

from cola_core.errors import ColaOutputError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["HIDDEN_PREFIXES", "FileSystem"]

# A relative name Hadoop's Path takes as it is: plain segments (no ".", "..", ":" or "\\").
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_\-=%+][A-Za-z0-9_.\-=%+]*(?:/[A-Za-z0-9_\-=%+][A-Za-z0-9_.\-=%+]*)*")


def _joins_plainly(location: str, name: str) -> bool:
    """Whether ``location/name`` is what Hadoop's ``Path(location, name)`` gives: a plain name
    under a location Hadoop would not normalise (no doubled or trailing slash, no "." or ".."
    segment)."""
    if not _PLAIN_NAME.fullmatch(name) or not location or location.endswith("/"):
        return False
    path = location.split("://", 1)[-1]
    return "//" not in path and not any(part in (".", "..") for part in path.split("/"))


# Spark's file listing skips names starting with these, so readers never see staging folders
# and backups named so, nor Hadoop's checksum and marker files.
HIDDEN_PREFIXES = ("_", ".")


class FileSystem:
    """The few Hadoop ``FileSystem`` calls publishing needs, on any location Spark can write.

    Raises:
        ColaOutputError: at creation, for a session without a JVM (Spark Connect; use
            :func:`cola_core.storage.publish.file_system`).
    """

    def __init__(self, spark: SparkSession) -> None:
        jvm, jsc = getattr(spark, "_jvm", None), getattr(spark, "_jsc", None)
        if jvm is None or jsc is None:
            raise ColaOutputError(
                "writing a split in one pass needs a classic Spark session (it publishes with Hadoop's file "
                "system API); over Spark Connect, use Cola().split and write the two DataFrames"
            )
        self._jvm = jvm
        # Looked up once: each lookup through the JVM view costs a round trip per package name.
        self._path = jvm.org.apache.hadoop.fs.Path
        self._conf = jsc.hadoopConfiguration()

    def _resolve(self, location: str) -> tuple[Any, Any]:
        path = self._path(location)
        return path, path.getFileSystem(self._conf)

    def qualified(self, location: str) -> str:
        """``location`` as a full URI (``file:/tmp/out``), as Spark's writers resolve it."""
        path, fs = self._resolve(location)
        return str(fs.makeQualified(path).toString())

    def same_file_system(self, first: str, second: str) -> bool:
        """Whether a rename can move ``first`` to ``second`` (one scheme and authority)."""
        return bool(self._resolve(first)[1].getUri().equals(self._resolve(second)[1].getUri()))

    def exists(self, location: str) -> bool:
        path, fs = self._resolve(location)
        return bool(fs.exists(path))

    def is_directory(self, location: str) -> bool:
        path, fs = self._resolve(location)
        return bool(fs.exists(path) and fs.getFileStatus(path).isDirectory())

    def parent(self, location: str) -> str:
        path, fs = self._resolve(location)
        parent = fs.makeQualified(path).getParent()
        if parent is None:
            raise ColaOutputError(f"output {location!r} is the root of its file system; write to a folder below it")
        return str(parent.toString())

    def child(self, location: str, name: str) -> str:
        if _joins_plainly(location, name):
            # What Hadoop's Path(location, name) gives, without a round trip to the JVM: a
            # streaming batch's publication joins dozens of names.
            return f"{location}/{name}"
        return str(self._path(location, name).toString())

    def sibling(self, location: str, prefix: str) -> str:
        """A fresh hidden name beside ``location``: ``<parent>/<prefix>_<hex>_<name>``."""
        path, _ = self._resolve(location)
        return self.child(self.parent(location), f"{prefix}_{uuid.uuid4().hex}_{path.getName()}")

    def rename(self, source: str, target: str) -> None:
        """Move ``source`` to ``target``, which must not exist (Hadoop would move it inside)."""
        (source_path, fs), (target_path, _) = self._resolve(source), self._resolve(target)
        if fs.exists(target_path):
            raise ColaOutputError(f"cannot move {source} to {target}: {target} already exists")
        if not fs.rename(source_path, target_path):
            raise ColaOutputError(f"cannot move {source} to {target}: the file system refused the rename")

    def delete(self, location: str) -> None:
        path, fs = self._resolve(location)
        fs.delete(path, True)

    def make_folders(self, location: str) -> list[str]:
        """Create ``location`` and its missing parents; returns those created, deepest first."""
        created: list[str] = []
        current = self.qualified(location)
        while not self.exists(current):
            created.append(current)
            current = self.parent(current)
        if not self.is_directory(current):
            raise ColaOutputError(f"cannot create the folder {location}: {current} is a file, not a folder")
        path, fs = self._resolve(location)
        if created and not fs.mkdirs(path):
            raise ColaOutputError(f"cannot create the folder {location}")
        return created

    def data_files(self, location: str) -> list[str]:
        """The files under ``location`` that readers see, as paths relative to it, in name
        order (a file system lists in its own order, which differs between runs)."""
        path, fs = self._resolve(location)
        found: list[str] = []

        def walk(folder: Any, prefix: str) -> None:
            for status in sorted(fs.listStatus(folder), key=lambda status: str(status.getPath().getName())):
                name = str(status.getPath().getName())
                if name.startswith(HIDDEN_PREFIXES):
                    continue
                if status.isDirectory():
                    walk(status.getPath(), f"{prefix}{name}/")
                else:
                    found.append(f"{prefix}{name}")

        walk(path, "")
        return found

    def touch(self, location: str) -> None:
        path, fs = self._resolve(location)
        fs.create(path, True).close()

    def write_text(self, location: str, text: str) -> None:
        """Write ``text`` (UTF-8) to ``location``, replacing it: a file written then renamed in,
        so a reader finds the old text or the new one, never a part. Missing folders above it
        are made (Hadoop's ``create`` makes them)."""
        written = self.sibling(location, "_cola_writing")
        path, fs = self._resolve(written)
        stream = fs.create(path, True)
        try:
            stream.write(bytearray(text.encode("utf-8")))
        finally:
            stream.close()
        if self.exists(location):
            self.delete(location)
        self.rename(written, location)

    def read_text(self, location: str) -> str:
        path, fs = self._resolve(location)
        stream = fs.open(path)
        try:
            return bytes(self._jvm.org.apache.commons.io.IOUtils.toByteArray(stream)).decode("utf-8")
        finally:
            stream.close()

