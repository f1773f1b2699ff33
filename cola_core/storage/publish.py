"""Publishing staged outputs: moving what was written to staging into place, all or nothing.

``split_write`` writes a split once, to a staging folder beside its destinations; this module
then moves the staged files into the destinations with Hadoop's ``FileSystem`` (directory and
file renames). Each step done is recorded in a :class:`Publication` with the step that takes
it back: when a later step fails, the earlier ones are undone in reverse order, so that the
destinations are left as they were. Backups of overwritten outputs are deleted only once
every step has succeeded. A table output is published through the catalog by
:mod:`cola_core.storage.catalog`, which records its renames in the same publication.

What this makes atomic depends on the file system: a directory rename is one atomic
operation on HDFS, the local file system and ABFS with a hierarchical namespace, but S3 and
other object stores copy every file to rename a folder (see "What is atomic" in docs/quarantine.md).
The Hadoop API is reached through the JVM of a classic session. A Spark Connect client has no
JVM: it publishes local paths itself (:class:`LocalFileSystem`), once a probe has shown that
the server writes the same files (a local server, or a mount both share).
"""

from __future__ import annotations

import os
import re
import shutil
import uuid
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from cola_core.common.sessions import is_classic
from cola_core.common.spark_errors import analyse_now, first_line
from cola_core.errors import ColaOutputError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["FileSystem", "Files", "LocalFileSystem", "Publication", "file_system", "publish_folder"]

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
_HIDDEN = ("_", ".")


class FileSystem:
    """The few Hadoop ``FileSystem`` calls publishing needs, on any location Spark can write.

    Raises:
        ColaOutputError: at creation, for a session without a JVM (Spark Connect; use
            :func:`file_system`).
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
                if name.startswith(_HIDDEN):
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


class LocalFileSystem:
    """:class:`FileSystem`'s calls on the local file system, for a Spark Connect client.

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
            folders[:] = sorted(name for name in folders if not name.startswith(_HIDDEN))
            relative = os.path.relpath(folder, root)
            prefix = "" if relative == "." else f"{relative}/"
            found.extend(f"{prefix}{name}" for name in sorted(files) if not name.startswith(_HIDDEN))
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


# The folders each Connect session was shown to share with this client (LocalFileSystem).
_SHARED_FOLDERS: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()


# What publishing works with: Hadoop's file system through the JVM, or the client's own.
Files = FileSystem | LocalFileSystem


def file_system(spark: SparkSession) -> Files:
    """The file system to publish with: Hadoop's in a classic session, the local one over Connect."""
    if not is_classic(spark):
        return LocalFileSystem(spark)
    return FileSystem(spark)


@dataclass
class Publication:
    """The steps of a publication done so far, each with what undoes it.

    ``done(undo)`` records a step that has succeeded; ``rollback`` undoes them all, newest
    first; ``after_commit`` actions (deleting a backup) run only in ``commit``, once nothing
    can fail any more.
    """

    _undo: list[tuple[str, Callable[[], None]]] = field(default_factory=list)
    _after_commit: list[Callable[[], None]] = field(default_factory=list)

    def done(self, description: str, undo: Callable[[], None]) -> None:
        self._undo.append((description, undo))

    def after_commit(self, action: Callable[[], None]) -> None:
        self._after_commit.append(action)

    def rollback(self) -> list[str]:
        """Undo every step, newest first; returns what could not be undone (usually nothing)."""
        problems = []
        for description, undo in reversed(self._undo):
            try:
                undo()
            except Exception as error:  # keep undoing the rest; the caller reports these
                problems.append(f"{description}: {first_line(error)}")
        self._undo.clear()
        self._after_commit.clear()
        return problems

    def commit(self) -> list[str]:
        """Run the after-commit actions; returns those that failed (the outputs are published)."""
        problems = []
        for action in self._after_commit:
            try:
                action()
            except Exception as error:  # a leftover backup is untidy, not a lost row
                problems.append(first_line(error))
        self._undo.clear()
        self._after_commit.clear()
        return problems


def publish_folder(publication: Publication, fs: Files, staged: str, target: str, mode: str) -> None:
    """Move the staged folder ``staged`` into ``target`` as ``mode`` says, recording the undo.

    - absent target (any mode): ``staged`` is renamed to ``target``;
    - ``overwrite`` of an existing target: the target is renamed aside, then ``staged`` in;
      the old one is deleted after the commit;
    - ``append`` to an existing target: each staged file is renamed into it (their names,
      chosen by Spark's writers, hold the job's unique id).

    Raises:
        ColaOutputError: a step failed; the steps of this call already done are recorded.
    """
    if not fs.exists(target):
        created = fs.make_folders(fs.parent(target))
        publication.done(f"created {fs.parent(target)}", lambda: _remove_empty(fs, created))
        fs.rename(staged, target)
        publication.done(f"published {target}", lambda: fs.rename(target, staged))
    elif mode == "overwrite":
        backup = fs.sibling(target, "_cola_previous")
        fs.rename(target, backup)
        publication.done(f"moved {target} aside", lambda: fs.rename(backup, target))
        fs.rename(staged, target)
        publication.done(f"published {target}", lambda: fs.rename(target, staged))
        publication.after_commit(lambda: fs.delete(backup))
    elif mode == "append":
        for relative in fs.data_files(staged):
            source, destination = fs.child(staged, relative), fs.child(target, relative)
            created = fs.make_folders(fs.parent(destination))
            publication.done(f"created {fs.parent(destination)}", partial(_remove_empty, fs, created))
            fs.rename(source, destination)
            publication.done(f"appended {destination}", partial(fs.rename, destination, source))
    else:
        raise ColaOutputError(
            f"output {target} already exists and its mode is {mode!r}; "
            "set \"mode\" to \"overwrite\" or \"append\", or choose another target"
        )
    publication.after_commit(lambda: fs.touch(fs.child(target, "_SUCCESS")))


def _remove_empty(fs: Files, folders: list[str]) -> None:
    # Deepest first; a folder someone else has filled meanwhile is left alone.
    for folder in folders:
        if fs.exists(folder) and not fs.data_files(folder):
            fs.delete(folder)
