"""The text and JSON outputs show the same documents; JSON is exact and parseable."""

import io
import json
from collections.abc import Sequence

import pytest

from indextables.admin.output import (
    JsonObject,
    JsonOutput,
    RedactingOutput,
    TextOutput,
    make_output,
)

RECORD: JsonObject = {
    "format": "avro-state",
    "version": 5,
    "tombstone_ratio": 0.25,
    "needs_compaction": True,
    "partition_columns": ["date", "region"],
    "protocol": {"minReaderVersion": 4, "minWriterVersion": 4},
    "schema": [
        {"name": "id", "type": "integer", "nullable": False},
        {"name": "text", "type": "string", "nullable": True},
    ],
    "missing": None,
}
ROWS: Sequence[JsonObject] = [
    {"path": "a.split", "size": 10, "partitionValues": {"date": "2024-01-01"}},
    {"path": "b.split", "size": 20, "partitionValues": {"date": "2024-01-02"}},
]


def streams() -> tuple[io.StringIO, io.StringIO]:
    return io.StringIO(), io.StringIO()


def test_json_output_round_trips_the_document() -> None:
    out, err = streams()
    JsonOutput(out, err).document(RECORD, title="ignored")
    assert json.loads(out.getvalue()) == RECORD
    assert err.getvalue() == ""


def test_json_output_keeps_key_order_and_unicode() -> None:
    out, err = streams()
    JsonOutput(out, err).document({"z": "é", "a": 1}, title="t")
    assert out.getvalue() == '{\n  "z": "é",\n  "a": 1\n}\n'


def test_json_error_goes_to_stderr_as_json() -> None:
    out, err = streams()
    JsonOutput(out, err).error("no table at /t", kind="TableNotFoundError", exit_code=2)
    assert out.getvalue() == ""
    assert json.loads(err.getvalue()) == {
        "error": {"type": "TableNotFoundError", "message": "no table at /t", "exit_code": 2}
    }


def test_text_record_shows_every_property_and_nested_rows() -> None:
    out, err = streams()
    TextOutput(out, err).document(RECORD, title="state")
    text = out.getvalue()
    for expected in (
        "state",
        "avro-state",
        "0.25",
        "true",
        "date, region",
        "minReaderVersion=4",
        "schema (2)",
        "nullable",
        "integer",
    ):
        assert expected in text, expected
    assert "\x1b[" not in text  # no colour codes when not a terminal


def test_text_rows_respect_columns() -> None:
    out, err = streams()
    TextOutput(out, err).document(ROWS, title="files", columns={"": ["path", "size"]})
    text = out.getvalue()
    assert "files (2)" in text
    assert "a.split" in text
    assert "20" in text
    assert "partitionValues" not in text


def test_text_nested_rows_respect_columns_by_key() -> None:
    out, err = streams()
    TextOutput(out, err).document({"files": ROWS}, title="t", columns={"files": ["path"]})
    text = out.getvalue()
    assert "files (2)" in text
    assert "b.split" in text
    assert "size" not in text


def test_text_string_lists_get_one_row_each_never_cut() -> None:
    paths = [f"dir/{'p' * 150}-{i}.split" for i in range(3)]
    out, err = streams()
    TextOutput(out, err).document({"orphaned_files": paths}, title="purge")
    text = out.getvalue()
    assert "orphaned_files (3)" in text
    for path in paths:
        assert path.split("/")[1][:100] in text.replace("\n", "")


def test_text_cells_are_not_markup() -> None:
    out, err = streams()
    TextOutput(out, err).document([{"path": "[bold]x[/bold]"}], title="t")
    assert "[bold]x[/bold]" in out.getvalue()


def test_text_long_cells_are_cut_json_keeps_them() -> None:
    long_value = "x" * 500
    out, err = streams()
    TextOutput(out, err).document({"doc": long_value}, title="t")
    assert long_value not in out.getvalue()
    assert "…" in out.getvalue()
    out, err = streams()
    JsonOutput(out, err).document({"doc": long_value}, title="t")
    assert json.loads(out.getvalue()) == {"doc": long_value}


def test_text_error_goes_to_stderr() -> None:
    out, err = streams()
    TextOutput(out, err).error("boom", kind="X", exit_code=1)
    assert out.getvalue() == ""
    assert "error: boom" in err.getvalue()


@pytest.mark.parametrize(("kind", "cls"), [("json", JsonOutput), ("text", TextOutput)])
def test_make_output(kind: str, cls: type) -> None:
    out, err = streams()
    assert isinstance(make_output(kind, stdout=out, stderr=err), cls)  # type: ignore[arg-type]


def test_redacting_output_scrubs_documents_titles_and_errors() -> None:
    out, err = streams()
    inner = JsonOutput(out, err)
    output = RedactingOutput(inner, lambda text: text.replace("hunter2", "***"))
    output.document(
        {"table_path": "s3://u:hunter2@b/t", "nested": [{"x": ["a", "hunter2"]}], "n": 1},
        title="t hunter2",
    )
    output.error("bad key hunter2", kind="X", exit_code=1)
    assert "hunter2" not in out.getvalue() + err.getvalue()
    assert json.loads(out.getvalue()) == {
        "table_path": "s3://u:***@b/t",
        "nested": [{"x": ["a", "***"]}],
        "n": 1,
    }
