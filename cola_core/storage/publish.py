"""Publishing staged outputs: moving what was written to staging into place, all or nothing.

``split_write`` writes a split once, to a staging folder beside its destinations; this module
then moves the staged files into the destinations with Hadoop's ``FileSystem`` (directory and
file renames) and the catalog (``ALTER TABLE ... RENAME TO``, ``REFRESH TABLE``). Each step
done is recorded in a :class:`Publication` with the step that takes it back: when a later step
fails, the earlier ones are undone in reverse order, so that the destinations are left as
they were. Backups of overwritten outputs are deleted only once every step has succeeded.

What this makes atomic depends on the file system: a directory rename is one atomic
operation on HDFS, the local file system and ABFS with a hierarchical namespace, but S3 and
other object stores copy every file to rename a folder (see the README's "What is atomic").
The Hadoop API is reached through the JVM of a classic session. A Spark Connect client has no
JVM: it publishes local paths itself (:class:`LocalFileSystem`), once a probe has shown that
the server writes the same files (a local server, or a mount both share).
"""

from __future__ import annotations

import os
import shutil
import uuid
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from cola_core.common.columns import quote
from cola_core.common.spark_errors import analyse_now, first_line
from cola_core.errors import ColaOutputError
from cola_core.guards.sqlguard import tokenize

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["FileSystem", "Files", "LocalFileSystem", "Publication", "TableFacts", "file_system", "sibling_table",
           "table_facts"]

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
        self._conf = jsc.hadoopConfiguration()

    def _resolve(self, location: str) -> tuple[Any, Any]:
        path = self._jvm.org.apache.hadoop.fs.Path(location)
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
        return str(self._jvm.org.apache.hadoop.fs.Path(location, name).toString())

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
        """The files under ``location`` that readers see, as paths relative to it."""
        path, fs = self._resolve(location)
        found: list[str] = []

        def walk(folder: Any, prefix: str) -> None:
            for status in fs.listStatus(folder):
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
    if getattr(spark, "_jvm", None) is None:
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


@dataclass(frozen=True)
class TableFacts:
    """What publishing needs to know of an existing table.

    Attributes:
        name: the name as given.
        managed: whether Spark owns its files (``MANAGED``), rather than ``EXTERNAL``.
        provider: its data source (``parquet``, ``delta``, ``hive``...), lower case.
        location: its folder.
        columns: its columns, in order, with their types (``("id", "bigint")``).
        partition_columns: its partition columns, in order.
        bucketed: whether it has buckets, whose files a split cannot write.
    """

    name: str
    managed: bool
    provider: str
    location: str
    columns: tuple[tuple[str, str], ...]
    partition_columns: tuple[str, ...]
    bucketed: bool = False


def _described(spark: SparkSession, sql: str) -> list[tuple[str, str]]:
    """The detail rows of a ``DESCRIBE ... EXTENDED``: those after its first ``# Detailed``
    header, so that a column named ``Location`` or ``Provider`` is never read as one."""
    rows = [(str(row["col_name"] or "").strip(), str(row["data_type"] or "").strip())
            for row in spark.sql(sql).collect()]
    start = next((n for n, (name, _) in enumerate(rows) if name.startswith("# Detailed")), len(rows))
    return rows[start + 1:]


def table_facts(spark: SparkSession, name: str) -> TableFacts:
    """The facts of the existing table ``name`` (see ``spark.catalog.tableExists``).

    Raises:
        ColaOutputError: ``name`` is a view or a temporary view, which cannot be written.
    """
    table = spark.catalog.getTable(name)
    if table.isTemporary or str(table.tableType).upper() == "VIEW":
        raise ColaOutputError(f"output table {name} is a view; write to a table or a path")
    details = dict(reversed(_described(spark, f"DESCRIBE TABLE EXTENDED {name}")))
    listed = spark.catalog.listColumns(name)
    return TableFacts(
        name=name,
        managed=str(table.tableType).upper() == "MANAGED",
        provider=details.get("Provider", "").lower(),
        location=details.get("Location", ""),
        columns=tuple((column.name, column.dataType) for column in listed),
        partition_columns=tuple(column.name for column in listed if column.isPartition),
        bucketed="Num Buckets" in details or any(column.isBucket for column in listed),
    )


def table_parts(name: str) -> list[str]:
    """The parts of a (checked) table name, unquoted: ```a b`.t`` -> ``["a b", "t"]``."""
    return [token.text for token in tokenize(name, "table") if token.kind in ("word", "quoted")]


def _quoted(parts: list[str]) -> str:
    return ".".join(quote(part) for part in parts)


def sibling_table(name: str, prefix: str) -> str:
    """A fresh table name in ``name``'s database: ``db.`<prefix>_<hex>`` (the table's own name
    is left out: it may hold characters a new name may not)."""
    parts = table_parts(name)
    return _quoted([*parts[:-1], f"{prefix}_{uuid.uuid4().hex}"])


def rename_table(publication: Publication, spark: SparkSession, source: str, target: str, description: str) -> None:
    """``ALTER TABLE source RENAME TO target`` (a catalog operation; a managed table's folder
    moves too), recorded in ``publication`` as soon as it is done, then made readable: the
    partitions re-pointed (see :func:`_repoint_partitions`) and the table refreshed, so the
    session never reads ``target`` from a cached listing of the table that had the name."""
    old_location = _partitioned_location(spark, source)
    _alter_rename(spark, source, target)
    # Recorded before the clean-up below: if that fails, the rename is still undone.
    publication.done(description, partial(_rename, spark, target, source))
    _settle(spark, target, old_location)


def _rename(spark: SparkSession, source: str, target: str) -> None:
    old_location = _partitioned_location(spark, source)
    _alter_rename(spark, source, target)
    _settle(spark, target, old_location)


def _partitioned_location(spark: SparkSession, name: str) -> str | None:
    """The folder of a partitioned table (its partitions may need re-pointing after a rename)."""
    partitioned = any(column.isPartition for column in spark.catalog.listColumns(name))
    return _location(spark, name) if partitioned else None


def _alter_rename(spark: SparkSession, source: str, target: str) -> None:
    # RENAME TO takes the database and the table: a catalog part is refused there.
    try:
        spark.sql(f"ALTER TABLE {source} RENAME TO {_quoted(table_parts(target)[-2:])}")
    except Exception as error:  # pyspark's analysis or JVM errors, all reported the same way
        raise ColaOutputError(f"cannot rename table {source} to {target}: {first_line(error)}") from error


def _settle(spark: SparkSession, name: str, old_location: str | None) -> None:
    if old_location is not None:
        _repoint_partitions(spark, name, old_location)
    _refresh(spark, name)


def _location(spark: SparkSession, name: str, partition: str | None = None) -> str:
    """The table's (or the partition's) folder, as a URI (percent-encoded)."""
    where = f" PARTITION ({_partition_clause(partition)})" if partition else ""
    # With a partition, its own Location comes first, then the table's.
    return next(value for key, value in _described(spark, f"DESCRIBE TABLE EXTENDED {name}{where}")
                if key == "Location")


def _repoint_partitions(spark: SparkSession, name: str, old_location: str) -> None:
    """Point the partitions of a renamed managed table at its new folder.

    Spark's in-memory catalog moves the folder but leaves each partition's location at the
    old one, so the renamed table reads empty; a Hive metastore moves them itself, and then
    nothing is changed here.
    """
    from urllib.parse import unquote

    # DESCRIBE shows a location sometimes as a URI (percent-encoded), sometimes decoded;
    # compared decoded, and set as a path, which Spark encodes itself.
    old, new = unquote(old_location).rstrip("/"), unquote(_location(spark, name)).rstrip("/")
    for row in spark.sql(f"SHOW PARTITIONS {name}").collect():
        spec = str(row[0])
        stale = unquote(_location(spark, name, spec))
        # A partition in the table's own folder is set to its folder there, by name (SHOW
        # PARTITIONS gives the folder's escaped name): a catalog may have moved it, even
        # wrongly (encoded twice). A partition elsewhere was placed by hand, and is left.
        if stale.startswith((old + "/", new + "/")):
            moved = f"{new}/{spec}"
            spark.sql(f"ALTER TABLE {name} PARTITION ({_partition_clause(spec)}) SET LOCATION '{_literal(moved)}'")


def drop_table(spark: SparkSession, name: str) -> None:
    spark.sql(f"DROP TABLE IF EXISTS {name}")


def publish_new_table(publication: Publication, spark: SparkSession, staged: str, target: str) -> None:
    """Rename the staged table ``staged`` to ``target``, which must not exist."""
    if spark.catalog.tableExists(target):
        raise ColaOutputError(f"output table {target} appeared while the split was written; nothing was published")
    rename_table(publication, spark, staged, target, f"created table {target}")


def publish_table_swap(publication: Publication, spark: SparkSession, staged: str, target: str) -> None:
    """Overwrite ``target`` with the staged table: the old one is renamed aside, then dropped at commit."""
    backup = sibling_table(target, "_cola_previous")
    rename_table(publication, spark, target, backup, f"moved table {target} aside")
    rename_table(publication, spark, staged, target, f"published table {target}")
    publication.after_commit(lambda: drop_table(spark, backup))


def publish_table_files(
    publication: Publication, spark: SparkSession, fs: Files, staged: str, facts: TableFacts
) -> None:
    """Append to a file-based table: its staged files are moved into its folder, then the
    table is refreshed (and, when partitioned, its new partitions registered)."""
    before = _partitions(spark, facts)
    added: list[str] = []
    # Recorded before the files move, so undone after they are back: a managed table drops a
    # partition's folder with it, and Spark's cached listing of the table must forget them.
    publication.done(f"refreshed {facts.name}", partial(_refresh, spark, facts.name))
    publication.done(f"registered the new partitions of {facts.name}", partial(_drop_partitions, spark, facts, added))
    publish_folder(publication, fs, staged, facts.location, "append")
    if facts.partition_columns:
        spark.sql(f"ALTER TABLE {facts.name} RECOVER PARTITIONS")
        added.extend(spec for spec in _partitions(spark, facts) if spec not in before)
    _refresh(spark, facts.name)


def _refresh(spark: SparkSession, name: str) -> None:
    spark.sql(f"REFRESH TABLE {name}")


def _partitions(spark: SparkSession, facts: TableFacts) -> list[str]:
    if not facts.partition_columns:
        return []
    return [str(row[0]) for row in spark.sql(f"SHOW PARTITIONS {facts.name}").collect()]


def _drop_partitions(spark: SparkSession, facts: TableFacts, specs: list[str]) -> None:
    for spec in specs:
        spark.sql(f"ALTER TABLE {facts.name} DROP IF EXISTS PARTITION ({_partition_clause(spec)})")


def _partition_clause(spec: str) -> str:
    """``a=1/b=x y`` (as SHOW PARTITIONS gives it, values escaped as in a folder name) as the
    SQL ``a = '1', b = 'x y'``; the values come from the data, so they are quoted as literals."""
    from urllib.parse import unquote

    pairs = [part.split("=", 1) for part in spec.split("/")]
    return ", ".join(f"{quote(unquote(name))} = '{_literal(unquote(value))}'" for name, value in pairs)


def _literal(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "\\'")
