"""The index page of a history store, for the plugin's ``/cola/``: read here, or built by Spark in the background.

A store on this machine's disk (a parquet or ORC folder on a local path) is read without
Spark (``_light_index``, pyarrow). A table store, or a folder on other storage, only Spark
reads: its index is built by a Spark query (``cola_core.history.summaries.index_rows``) in a background
thread, which starts a local session (``local[1]``) for it once; meanwhile the last index
built is served, or :class:`IndexBeingBuilt` says that it is being built.
"""

from __future__ import annotations

import logging
import threading
import time
from argparse import Namespace
from typing import TYPE_CHECKING

from airflow_provider_cola._light_index import local_store_folder, read_local_index

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from cola_core.storage.specs import OutputSpec

__all__ = ["BEING_BUILT", "INDEX_RUNS", "IndexBeingBuilt", "StoreUnreadable", "index_spark", "store_index"]

# The plugin's own logger: this module is part of it, and its log is where an operator of the
# API server looks for the plugin's failures.
log = logging.getLogger("airflow_provider_cola.plugin")

_spark_lock = threading.Lock()
# The rendered index per store setting: (when it was rendered, time.monotonic(); the page).
# One lock, so that concurrent first views read the store once, not once each.
_index_lock = threading.Lock()
_index_pages: dict[str, tuple[float, str]] = {}
# A table (or remote) store's index is built by Spark in the background: the build under way per
# store setting, and the reason the last one failed (shown until a build succeeds).
_index_builds: dict[str, threading.Thread] = {}
_index_failures: dict[str, str] = {}
# How many data intervals each rule's trend shows in the index.
INDEX_RUNS = 20
BEING_BUILT = (
    "The index of this history store is being built by Spark in the background (a table store, or a "
    "folder on other storage, is read with Spark); it is served as soon as it is ready: reload in a minute"
)


class StoreUnreadable(Exception):
    """The configured history store cannot be parsed or read: the index is a 503 saying why."""


class IndexBeingBuilt(Exception):
    """No index of the store has been built yet; a background build is under way."""


def index_spark() -> SparkSession:
    """This process's local Spark session for the index of a table store, started on first use
    (each API server worker process has its own).

    Asked for again on each query rather than kept: ``getOrCreate`` gives the running session,
    and a new one if something else in the process stopped it.
    """
    from cola_core.storage.session import spark_session

    with _spark_lock:
        session, _ = spark_session("local[1]", [("spark.ui.enabled", "false")], app_name="cola-plugin")
        return session


def _store_spec(store: str) -> OutputSpec:
    """``[cola] history_store``, read as ``cola history --history`` reads its argument.

    Raises:
        StoreUnreadable: it is not a history store spec.
    """
    from cola_core.cli.history import checked_history_arguments
    from cola_core.errors import ColaError

    try:
        return checked_history_arguments(Namespace(history=store, action=None))
    except ColaError as error:
        reason = str(error).splitlines()[0]
        if reason.startswith("--history"):
            reason = "[cola] history_store" + reason.removeprefix("--history")
        raise StoreUnreadable(reason) from error


def store_index(store: str, cache_seconds: int) -> str:
    """The index page of the history store ``[cola] history_store`` names, from the cache when
    it was rendered less than ``cache_seconds`` ago. A local folder is read here, without a
    JVM; any other store is read by Spark in the background (:func:`_built_in_background`).

    Raises:
        StoreUnreadable: the setting is not a history store spec, or the store cannot be read
            (its last background build failed: the traceback is in the log).
        IndexBeingBuilt: no index of a table store is ready yet.
    """
    from cola_core.report.index_page import render_index

    spec = _store_spec(store)
    folder = local_store_folder(spec)
    with _index_lock:
        cached = _index_pages.get(store)
        if cached is not None and time.monotonic() - cached[0] < cache_seconds:
            return cached[1]
        if folder is None:
            return _built_in_background(store, spec, cached)
        try:
            page = render_index(read_local_index(folder, spec.format or "parquet", INDEX_RUNS))
        except ValueError as error:
            raise StoreUnreadable(f"cannot read the history store {spec.path}: {error}") from error
        _index_pages[store] = (time.monotonic(), page)
        return page


def _built_in_background(store: str, spec: OutputSpec, cached: tuple[float, str] | None) -> str:
    """The last index of a store only Spark reads, while a fresh one is built in the background.

    Called with ``_index_lock`` held.

    Raises:
        StoreUnreadable: the last build failed, and none succeeded since.
        IndexBeingBuilt: no build has finished yet.
    """
    building = _index_builds.get(store)
    if building is None or not building.is_alive():
        thread = threading.Thread(
            target=_build_index, args=(store, spec), name=f"cola-index-{len(_index_builds)}", daemon=True
        )
        _index_builds[store] = thread
        thread.start()
    if cached is not None:
        return cached[1]
    failure = _index_failures.get(store)
    if failure is not None:
        raise StoreUnreadable(failure)
    raise IndexBeingBuilt()


def _build_index(store: str, spec: OutputSpec) -> None:
    """Build the index of ``spec`` with Spark and keep it (or why it failed) for the next views."""
    from cola_core.errors import ColaError
    from cola_core.history.summaries import index_rows
    from cola_core.report.index_page import render_index

    try:
        page = render_index(index_rows(index_spark(), spec, runs=INDEX_RUNS))
    except ColaError as error:
        failure = str(error).splitlines()[0]
    except Exception as error:
        # Not one of Cola's own errors (Spark cannot start, the JVM went away): the page gives
        # its first line, the API server's log the whole of it.
        log.exception("The Cola index of the history store %s cannot be built", store)
        first = (str(error).strip().splitlines() or [""])[0]
        reason = f"{type(error).__name__}: {first}" if first else type(error).__name__
        failure = f"the index of the history store cannot be built: {reason}"
    else:
        with _index_lock:
            _index_pages[store] = (time.monotonic(), page)
            _index_failures.pop(store, None)
        return
    with _index_lock:
        _index_failures[store] = failure
