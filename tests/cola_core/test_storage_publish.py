"""``cola_core.storage.publish`` and ``hadoop_files``: Hadoop file system steps and their undo, on the real local file system."""

from __future__ import annotations

import pytest

from cola_core.errors import ColaOutputError
from cola_core.storage.hadoop_files import FileSystem
from cola_core.storage.publish import Publication, publish_folder

pytestmark = pytest.mark.spark


@pytest.fixture
def fs(spark):
    return FileSystem(spark)


def tree(root) -> list[str]:
    return sorted(str(path.relative_to(root)) for path in root.rglob("*") if not path.name.startswith("."))


def test_a_rollback_undoes_newest_first_and_reports_what_it_could_not_undo():
    undone: list[str] = []
    publication = Publication()
    publication.done("first", lambda: undone.append("first"))
    publication.done("second", lambda: (_ for _ in ()).throw(RuntimeError("cannot")))
    publication.done("third", lambda: undone.append("third"))
    publication.after_commit(lambda: undone.append("never: rolled back"))
    assert publication.rollback() == ["second: cannot"]
    assert undone == ["third", "first"]
    assert publication.commit() == []  # nothing left to do after a rollback
    assert undone == ["third", "first"]


def test_commit_runs_the_after_commit_actions_and_reports_failures():
    done: list[str] = []
    publication = Publication()
    publication.done("step", lambda: done.append("undone"))
    publication.after_commit(lambda: done.append("backup deleted"))
    publication.after_commit(lambda: (_ for _ in ()).throw(OSError("busy")))
    assert publication.commit() == ["busy"]
    assert done == ["backup deleted"]
    assert publication.rollback() == []  # a committed publication has nothing to undo


def test_rename_refuses_an_existing_target_instead_of_moving_inside_it(fs, tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with pytest.raises(ColaOutputError) as raised:
        fs.rename(str(tmp_path / "a"), str(tmp_path / "b"))
    assert str(raised.value) == f"cannot move {tmp_path}/a to {tmp_path}/b: {tmp_path}/b already exists"
    assert tree(tmp_path) == ["a", "b"]


def test_make_folders_returns_what_it_created_deepest_first_and_refuses_a_file_in_the_way(fs, tmp_path):
    assert fs.make_folders(str(tmp_path / "x" / "y")) == [f"file:{tmp_path}/x/y", f"file:{tmp_path}/x"]
    assert fs.make_folders(str(tmp_path / "x")) == []
    (tmp_path / "file").write_text("x")
    with pytest.raises(ColaOutputError) as raised:
        fs.make_folders(str(tmp_path / "file" / "z"))
    assert str(raised.value) == f"cannot create the folder {tmp_path}/file/z: file:{tmp_path}/file is a file, not a folder"


def test_data_files_are_what_readers_see(fs, tmp_path):
    for name in ["part-0.parquet", "_SUCCESS", ".part-0.parquet.crc", "k=1/part-1.parquet", "_tmp/part-2.parquet"]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    assert sorted(fs.data_files(str(tmp_path))) == ["k=1/part-1.parquet", "part-0.parquet"]


def staged(tmp_path, name: str, files: dict[str, str]):
    folder = tmp_path / name
    for relative, text in files.items():
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_text(text)
    return folder


@pytest.mark.parametrize("mode", ["append", "overwrite", "errorifexists"])
def test_publishing_into_an_absent_target_renames_the_staged_folder_and_undo_renames_it_back(fs, tmp_path, mode):
    source = staged(tmp_path, "stage", {"part-0": "new"})
    publication = Publication()
    publish_folder(publication, fs, str(source), str(tmp_path / "deep" / "out"), mode)
    assert (tmp_path / "deep" / "out" / "part-0").read_text() == "new"
    assert publication.rollback() == []
    assert tree(tmp_path) == ["stage", "stage/part-0"]  # the created parent folder went too


def test_overwrite_keeps_the_old_folder_aside_until_the_commit(fs, tmp_path):
    source = staged(tmp_path, "stage", {"part-new": "new"})
    target = staged(tmp_path, "out", {"part-old": "old"})
    publication = Publication()
    publish_folder(publication, fs, str(source), str(target), "overwrite")
    [backup] = [name for name in tree(tmp_path) if name.startswith("_cola_previous_") and "/" not in name]
    assert backup.endswith("_out") and tree(target) == ["part-new"]
    assert publication.commit() == []
    assert tree(tmp_path) == ["out", "out/_SUCCESS", "out/part-new"]


def test_a_rolled_back_overwrite_restores_the_old_folder(fs, tmp_path):
    source = staged(tmp_path, "stage", {"part-new": "new"})
    target = staged(tmp_path, "out", {"part-old": "old"})
    publication = Publication()
    publish_folder(publication, fs, str(source), str(target), "overwrite")
    assert publication.rollback() == []
    assert tree(tmp_path) == ["out", "out/part-old", "stage", "stage/part-new"]


def test_append_moves_each_file_in_and_undo_moves_them_back(fs, tmp_path):
    source = staged(tmp_path, "stage", {"k=1/part-a": "a", "k=2/part-b": "b", "_SUCCESS": ""})
    target = staged(tmp_path, "out", {"k=1/part-old": "old"})
    publication = Publication()
    publish_folder(publication, fs, str(source), str(target), "append")
    assert tree(target) == ["k=1", "k=1/part-a", "k=1/part-old", "k=2", "k=2/part-b"]
    assert publication.rollback() == []
    assert tree(target) == ["k=1", "k=1/part-old"]
    assert sorted(fs.data_files(str(source))) == ["k=1/part-a", "k=2/part-b"]


def test_an_existing_target_in_errorifexists_mode_is_refused(fs, tmp_path):
    source = staged(tmp_path, "stage", {"part-0": "new"})
    target = staged(tmp_path, "out", {"part-old": "old"})
    publication = Publication()
    with pytest.raises(ColaOutputError) as raised:
        publish_folder(publication, fs, str(source), str(target), "errorifexists")
    assert str(raised.value) == (
        f"output {target} already exists and its mode is 'errorifexists'; "
        "set \"mode\" to \"overwrite\" or \"append\", or choose another target"
    )


@pytest.mark.parametrize(
    ("location", "name"),
    [
        ("file:/tmp/out", "valid"),
        ("file:/tmp/out", "country=XX/part-00000-1f.c000.snappy.parquet"),
        ("file:/tmp/out", "when=2024-01-01 10%3A00/part-0"),
        ("/tmp/out", "_cola"),
        ("out/sub", "0.json"),
        ("s3a://bucket", "key"),
        ("s3a://bucket/a/b", "c+d"),
        ("hdfs://nn:8020/data", "x"),
        # Names and locations Hadoop normalises: joined by Hadoop itself.
        ("file:/tmp/out/", "valid"),
        ("file:/tmp//out", "valid"),
        ("/tmp/out/./x", "valid"),
        ("/tmp/out", "../valid"),
        ("/tmp/out", "./valid"),
        ("/tmp/out", "a//b"),
        ("/tmp/out", "/abs"),
        ("/tmp/out", "a b"),
    ],
)
def test_child_is_what_hadoop_s_path_joins(fs, location, name):
    hadoop = str(fs._jvm.org.apache.hadoop.fs.Path(location, name).toString())
    assert fs.child(location, name) == hadoop
