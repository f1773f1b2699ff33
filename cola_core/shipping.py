"""Shipping ``cola_core`` to a Spark cluster: a ``--py-files`` zip and the entry script.

The cluster needs nothing installed but Spark: the operators submit

    spark-submit --py-files <py_files_zip()> <job_entry_path()> check --rules ...

The zip is built from the installed package and cached under a name made of the hash of its
content, so it is rebuilt exactly when the package's files change.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import uuid
import zipfile
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from cola_core._version import __version__
from cola_core.errors import ColaError

if TYPE_CHECKING:
    # importlib.resources.abc is new in 3.11, and importlib.abc's alias of it goes in 3.14.
    if sys.version_info >= (3, 11):
        from importlib.resources.abc import Traversable
    else:
        from importlib.abc import Traversable

__all__ = ["job_entry_path", "package_files", "py_files_zip"]

PACKAGE = "cola_core"
# Fixed entry metadata: the same files always give the same zip, byte for byte.
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)
_SKIPPED_DIRECTORIES = {"__pycache__"}
_SKIPPED_SUFFIXES = (".pyc", ".pyo")


def package_files() -> dict[str, bytes]:
    """Every file of the installed ``cola_core`` (no bytecode), by its path inside the zip."""
    root = resources.files(PACKAGE)
    files = dict(_walk(root, PACKAGE))
    if f"{PACKAGE}/__init__.py" not in files:
        raise ColaError(f"cannot find the files of the installed {PACKAGE} package (looked in {root})")
    return dict(sorted(files.items()))


def _walk(folder: Traversable, prefix: str) -> Iterator[tuple[str, bytes]]:
    for entry in folder.iterdir():
        name = f"{prefix}/{entry.name}"
        if entry.is_dir():
            if entry.name not in _SKIPPED_DIRECTORIES:
                yield from _walk(entry, name)
        elif not entry.name.endswith(_SKIPPED_SUFFIXES):
            yield name, entry.read_bytes()


def py_files_zip(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The ``--py-files`` zip of the installed ``cola_core``, built once per content.

    Args:
        cache_dir: where zips are kept; by default ``$COLA_CACHE_DIR``, else
            ``$XDG_CACHE_HOME/airflow-provider-cola`` (``~/.cache/...``), else a folder in the
            system temporary directory when the home folder is not writable.

    Returns:
        The path of ``cola_core-<version>-<hash>.zip``, where ``<hash>`` is the first 16 hex
        digits of the SHA-256 of the package's file names and contents.
    """
    files = package_files()
    digest = hashlib.sha256()
    for name, content in files.items():
        digest.update(name.encode("utf-8") + b"\0" + hashlib.sha256(content).digest())
    folder = Path(cache_dir) if cache_dir is not None else _default_cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ColaError(f"cannot create the cache folder {str(folder)!r} for the cola_core zip: {error}") from error
    target = folder / f"{PACKAGE}-{__version__}-{digest.hexdigest()[:16]}.zip"
    if target.is_file():
        return target
    # Built beside the target and renamed into place: concurrent workers never see half a zip.
    partial = folder / f".{target.name}.{uuid.uuid4().hex}.partial"
    try:
        with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for name, content in files.items():
                info = zipfile.ZipInfo(name, date_time=_ZIP_DATE)
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o644 << 16
                archive.writestr(info, content)
        os.replace(partial, target)
    except OSError as error:
        partial.unlink(missing_ok=True)
        raise ColaError(f"cannot write the cola_core zip in {str(folder)!r}: {error}") from error
    return target


def job_entry_path() -> Path:
    """The script spark-submit runs: ``_job_entry.py`` of the installed ``cola_core``.

    Raises:
        ColaError: when ``cola_core`` itself is imported from a zip (there is no file to submit).
    """
    path = Path(__file__).resolve().with_name("_job_entry.py")
    if not path.is_file():
        raise ColaError(
            f"the cola_core entry script {str(path)!r} is not a file; install airflow-provider-cola "
            "where spark-submit is started (not only as a zip)"
        )
    return path


def _default_cache_dir() -> Path:
    configured = os.environ.get("COLA_CACHE_DIR")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    preferred = Path(base, "airflow-provider-cola")
    try:
        preferred.mkdir(parents=True, exist_ok=True)
        if os.access(preferred, os.W_OK):
            return preferred
    except OSError:
        pass
    # Airflow workers sometimes run with a read-only or missing home folder.
    return Path(tempfile.gettempdir(), f"airflow-provider-cola-{os.getuid() if hasattr(os, 'getuid') else 'user'}")
