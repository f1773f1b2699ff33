"""Shipping ``cola_core`` to a Spark cluster: a ``--py-files`` zip and the entry script.

The cluster needs nothing installed but Spark: the operators submit

    spark-submit --py-files <py_files_zip()> <job_entry_path()> check --rules ...

The zip is built from the installed package and cached under a name made of the hash of its
content, so it is rebuilt exactly when the package's files change.

The entry script is written outside the package, alone in a folder of its own: Python puts a
script's folder first on ``sys.path``, so a script inside ``cola_core/`` made its modules
(``checks``, ``common``, ``errors``...) shadow any package of that name the job imports, such
as a user's ``--checks checks``. Its name has a hyphen, so that it is no module either.
"""

from __future__ import annotations

import contextlib
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

__all__ = ["ENTRY_SCRIPT", "job_entry_path", "package_files", "py_files_zip"]

PACKAGE = "cola_core"
# Fixed entry metadata: the same files always give the same zip, byte for byte.
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)
_SKIPPED_DIRECTORIES = {"__pycache__"}
_SKIPPED_SUFFIXES = (".pyc", ".pyo")
# The application spark-submit runs. A script, not a module: absolute imports only.
ENTRY_SCRIPT = """\
\"\"\"The Cola job that spark-submit runs (written by cola_core.shipping.job_entry_path).\"\"\"
import sys

from cola_core.cli.main import main

sys.exit(main())
"""
_ENTRY_NAME = "cola-job.py"


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


def job_entry_path(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The script spark-submit runs (:data:`ENTRY_SCRIPT`), written once per content.

    It is ``cola-job.py``, alone in a folder of the cache named after its hash, outside the
    ``cola_core`` package: the folder Python puts first on the driver's ``sys.path`` holds no
    module, so the job imports ``cola_core`` from the ``--py-files`` zip and every other
    package (a user's ``checks``, ``common``...) as it would anywhere else.

    Args:
        cache_dir: as for :func:`py_files_zip`.

    Raises:
        ColaError: the script cannot be written.
    """
    content = ENTRY_SCRIPT.encode("utf-8")
    folder = (Path(cache_dir) if cache_dir is not None else _default_cache_dir()) / (
        f"entry-{hashlib.sha256(content).hexdigest()[:16]}"
    )
    target = folder / _ENTRY_NAME
    with contextlib.suppress(OSError):
        if target.read_bytes() == content:
            return target
    # Written beside the target and renamed into place, as the zip is; the partial name has dots
    # and a leading one, so it is no module either.
    partial = folder / f".{_ENTRY_NAME}.{uuid.uuid4().hex}.partial"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        partial.write_bytes(content)
        os.replace(partial, target)
    except OSError as error:
        partial.unlink(missing_ok=True)
        raise ColaError(f"cannot write the cola_core entry script in {str(folder)!r}: {error}") from error
    return target


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
