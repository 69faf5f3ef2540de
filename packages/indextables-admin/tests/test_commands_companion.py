"""indextables companion build|status over a Parquet directory (no Spark)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq


def write_source(root: Path, part: str, first: int) -> None:
    folder = root / f"day={part}"
    folder.mkdir(parents=True, exist_ok=True)
    ids = list(range(first, first + 4))
    data = pa.table(
        {"id": ids, "message": [f"request {i} {'timeout' if i % 2 else 'ok'}" for i in ids]}
    )
    pq.write_table(data, folder / f"part-{first}.parquet")


def test_build_then_status_then_sync(tmp_path: Path, cli_run: Any) -> None:
    run_cli = cli_run
    source, index = tmp_path / "logs", str(tmp_path / "index")
    write_source(source, "a", 0)
    write_source(source, "b", 10)
    args = ["companion", "build", str(source), index, "--format", "parquet"]
    built = run_cli(*args, "--indexing-mode", "message=text", "--output", "json")
    assert built.exit_code == 0, built.stderr
    row = built.json()
    assert (row["status"], row["parquet_files_indexed"], row["splits_created"]) == ("success", 2, 2)
    found = run_cli("search", index, "message:timeout", "--columns", "id", "--output", "json")
    assert found.exit_code == 0, found.stderr
    assert sorted(r["id"] for r in found.json()["rows"]) == [1, 3, 11, 13]
    status = run_cli("companion", "status", index, "--output", "json")
    assert status.exit_code == 0, status.stderr
    assert status.json()["up_to_date"] is True
    assert status.json()["source_format"] == "parquet"
    write_source(source, "c", 20)
    pending = run_cli("companion", "status", index, "--output", "json").json()
    assert (pending["files_to_index"], pending["up_to_date"]) == (1, False)
    synced = run_cli(*args, "--output", "json").json()
    assert (synced["status"], synced["parquet_files_indexed"]) == ("success", 1)


def test_errors_name_the_option(tmp_path: Path, cli_run: Any) -> None:
    run_cli = cli_run
    source = tmp_path / "logs"
    write_source(source, "a", 0)
    index = str(tmp_path / "index")
    bad = run_cli(
        "companion",
        "build",
        str(source),
        index,
        "--format",
        "parquet",
        "--indexing-mode",
        "message",
    )
    assert bad.exit_code == 1
    assert "--indexing-mode" in bad.stderr + bad.stdout
    bad = run_cli(
        "companion", "build", str(source), index, "--format", "parquet",
        "--indexing-mode", "message=exact_only",
    )  # fmt: skip
    assert bad.exit_code == 1
    assert "exact_only" in bad.stderr + bad.stdout
    missing = run_cli("companion", "status", str(tmp_path / "nothing"))
    assert missing.exit_code == 2


def json_documents(text: str) -> list[dict[str, Any]]:
    """The JSON documents printed one after the other."""
    import json

    decoder, found, position = json.JSONDecoder(), [], 0
    while text[position:].strip():
        position += len(text[position:]) - len(text[position:].lstrip())
        value, position = decoder.raw_decode(text, position)
        found.append(value)
    return found


def test_poll_syncs_once_then_skips_an_unchanged_source(tmp_path: Path, cli_run: Any) -> None:
    source, index = tmp_path / "logs", str(tmp_path / "index")
    write_source(source, "a", 0)
    args = ["companion", "build", str(source), index, "--format", "parquet", "--output", "json"]
    polled = cli_run(*args, "--poll", "0.01", "--max-cycles", "3")
    assert polled.exit_code == 0, polled.stderr
    (only,) = json_documents(polled.stdout)  # cycles 2 and 3 saw the same listing
    assert (only["status"], only["parquet_files_indexed"]) == ("success", 1)
    bad = cli_run(*args, "--max-cycles", "3")
    assert bad.exit_code == 1
    assert "--poll" in bad.stderr + bad.stdout
    bad = cli_run(*args, "--poll", "0")
    assert bad.exit_code != 0
    assert "--poll" in bad.stderr + bad.stdout


def test_layout_keys_reach_the_build_as_settings(tmp_path: Path, cli_run: Any) -> None:
    """-S indexrecordoption / fastonlyfields: a smaller layout, its limits named."""
    run_cli = cli_run
    source, index = tmp_path / "logs", str(tmp_path / "index")
    write_source(source, "a", 0)
    built = run_cli(
        "companion", "build", str(source), index, "--format", "parquet",
        "--indexing-mode", "message=text",
        "-S", "spark.indextables.indexing.fastonlyfields=id",
        "-S", "spark.indextables.indexing.indexrecordoption.message=basic",
        "--output", "json",
    )  # fmt: skip
    assert built.exit_code == 0, built.stderr
    found = run_cli("search", index, "message:timeout", "--columns", "id", "--output", "json")
    assert sorted(r["id"] for r in found.json()["rows"]) == [1, 3]
    phrase = run_cli("search", index, 'message:"1 timeout"', "--output", "json")
    assert phrase.exit_code != 0
    assert "indexrecordoption.message" in phrase.stderr
    term = run_cli("search", index, "id:1", "--output", "json")
    assert term.exit_code != 0
    assert "fastonlyfields" in term.stderr
