"""JSON and YAML documents read within bounds (``language/documents.py``): whatever a document
holds is returned, and the bounds hold for it as for a rules file (``test_language_files.py``
covers each way a file can be broken, through ``read_rules_file``)."""

from __future__ import annotations

import pytest

from cola_core.errors import ColaError
from cola_core.language.documents import MAX_RULES_FILE_BYTES, read_document


def test_a_document_is_returned_whatever_it_holds(tmp_path):
    pytest.importorskip("yaml")
    (tmp_path / "contract.yaml").write_text("kind: DataContract\nschema:\n  - name: orders\n")
    (tmp_path / "number.json").write_text("12")
    assert read_document(str(tmp_path / "contract.yaml")) == {"kind": "DataContract", "schema": [{"name": "orders"}]}
    assert read_document(str(tmp_path / "number.json")) == 12


def test_a_document_is_bounded_and_names_the_file(tmp_path):
    path = tmp_path / "big.json"
    path.write_bytes(b" " * (MAX_RULES_FILE_BYTES + 1))
    with pytest.raises(ColaError) as raised:
        read_document(str(path))
    assert str(raised.value) == (
        f"rules file {str(path)!r} is larger than 8 MiB; a rules file holds rules, not data (split a very large "
        "block into several files)"
    )
    (tmp_path / "twice.json").write_text('{"kind": 1, "kind": 2}')
    with pytest.raises(ColaError, match=r"repeats the key 'kind' twice in one object"):
        read_document(str(tmp_path / "twice.json"))
