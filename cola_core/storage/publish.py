"""Publishing staged outputs: moving what was written to staging into place, all or nothing.

``split_write`` writes a split once, to a staging folder beside its destinations; this module
then moves the staged files into the destinations with directory and file renames. Each step
done is recorded in a :class:`Publication` with the step that takes it back: when a later step
fails, the earlier ones are undone in reverse order, so that the destinations are left as they
were. Backups of overwritten outputs are deleted only once every step has succeeded. A table
output is published through the catalog by :mod:`cola_core.storage.catalog`, which records its
renames in the same publication.

What this makes atomic depends on the file system: a directory rename is one atomic
operation on HDFS, the local file system and ABFS with a hierarchical namespace, but S3 and
other object stores copy every file to rename a folder (see "What is atomic" in docs/quarantine.md).
The renames go through Hadoop's ``FileSystem`` in a classic session
(:mod:`cola_core.storage.hadoop_files`); a Spark Connect client has no JVM and moves local
paths itself (:mod:`cola_core.storage.local_files`). :func:`file_system` makes that choice, once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

from cola_core.common.sessions import is_classic
from cola_core.common.spark_errors import first_line
from cola_core.errors import ColaOutputError
from cola_core.storage.hadoop_files import FileSystem
from cola_core.storage.local_files import LocalFileSystem

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["Files", "Publication", "file_system", "publish_folder"]


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
