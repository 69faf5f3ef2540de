"""First contact: errors, messages and the public namespace a newcomer meets."""

from __future__ import annotations

import types
import warnings
from pathlib import Path
from typing import Any

import pytest

import indextables.pyspark as itp
from indextables.protocol import errors as protocol_errors
from indextables.pyspark.errors import IndexTablesSparkError, SqlCommandError, from_spark_error
from indextables.pyspark.sqlcommands.commands import _purge, parse
from indextables.search.table.tableaccess import load_head, load_view, table_handle


def test_dir_of_itp_lists_only_public_names() -> None:
    extra = [
        name
        for name in dir(itp)
        if not name.startswith("_")
        and name not in itp.__all__
        and not isinstance(getattr(itp, name), types.ModuleType)
    ]
    assert extra == []


@pytest.mark.parametrize("name", ["VersionNotFoundError", "RetentionTooShortError"])
def test_every_error_derives_from_ours_and_is_rebuilt_from_spark(name: str) -> None:
    kind = getattr(itp, name)
    assert issubclass(kind, IndexTablesSparkError)
    assert issubclass(kind, getattr(protocol_errors, name))  # callers of the engine still catch it
    wrapped = RuntimeError(
        "[PYTHON_DATA_SOURCE_ERROR] Failed to plan: Traceback ...\n"
        f"indextables.pyspark.errors.{name}: /t: something\n"
    )
    rebuilt = from_spark_error(wrapped)
    assert type(rebuilt) is kind
    assert str(rebuilt) == "/t: something"


@pytest.mark.parametrize("load", [load_view, load_head])
def test_a_version_not_reachable_is_our_error(load: Any, golden_copy: Any) -> None:
    path = str(golden_copy("02_five_appends"))
    with pytest.raises(itp.VersionNotFoundError):
        load(path, {"versionAsOf": "999"}, version=999)


def test_a_timestamp_not_reachable_names_the_time_as_given(golden_copy: Any) -> None:
    path = str(golden_copy("02_five_appends"))
    given = "2001-02-03T04:05:06"
    millis = 981173106000
    with pytest.raises(itp.VersionNotFoundError) as caught:
        load_view(path, {"timestampAsOf": given}, timestamp=millis)
    assert given in str(caught.value)
    assert str(millis) not in str(caught.value)
    with pytest.raises(itp.VersionNotFoundError, match=r"2001-02-03T04:05:06\.000\+00:00"):
        load_view(path, {"timestampAsOf": str(millis)}, timestamp=millis)


def test_a_purge_dry_run_under_the_floor_reports_and_a_real_run_is_ours(
    golden_copy: Any,
) -> None:
    path = str(golden_copy("02_five_appends"))
    table = table_handle(path, {})
    args = {"path": path, "n": "1", "unit": "HOURS"}
    (row,) = _purge(table, {**args, "dry": " DRY RUN"})
    assert row["metrics"]["dry_run"] is True
    assert "a real run would be refused" in row["metrics"]["message"]
    with pytest.raises(itp.RetentionTooShortError, match="retentionCheckEnabled"):
        _purge(table, args)


def test_optimize_and_vacuum_are_not_our_commands() -> None:
    assert parse("OPTIMIZE '/t'") is None  # Spark (with Delta) may still run them


@pytest.mark.spark
@pytest.mark.parametrize(
    ("text", "instead"),
    [("OPTIMIZE '/tmp/t'", "MERGE SPLITS"), ("VACUUM '/tmp/t' RETAIN 1 HOURS", "PURGE INDEXTABLE")],
)
def test_optimize_and_vacuum_through_itp_sql_point_to_ours(
    spark: Any, text: str, instead: str, tmp_path: Path
) -> None:
    with pytest.raises(SqlCommandError, match=instead):
        itp.sql(spark, text)


def _level_index() -> Any:
    import tantivy

    builder = tantivy.SchemaBuilder()
    builder.add_text_field("level", stored=True, tokenizer_name="raw")
    builder.add_text_field("message", stored=True)
    index = tantivy.Index(builder.build())
    writer = index.writer(15_000_000, 1)
    for level in ["ERROR", "ERROR", "INFO"]:
        writer.add_document(tantivy.Document(level=level, message="disk full"))
    writer.commit()
    index.reload()
    return index.searcher()


def test_a_string_term_in_another_case_is_noticed_once(caplog: pytest.LogCaptureFixture) -> None:
    from indextables.search.query import casenotice
    from indextables.search.schema.mapping import FieldKind, FieldSpec

    fields = {
        "level": FieldSpec("level", FieldKind.STRING, "raw", True, True, True),
        "message": FieldSpec("message", FieldKind.TEXT, "default", True, True, False),
    }
    searcher = _level_index()
    query = "level:error AND message:disk"
    with pytest.warns(casenotice.CaseMismatchWarning, match=r"level:error .*'ERROR'"):
        casenotice.notice_case_mismatch(searcher, query, fields)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        casenotice.notice_case_mismatch(searcher, query, fields)  # once per query
        casenotice.notice_case_mismatch(searcher, "level:ERROR", fields)  # matches: silent
        casenotice.notice_case_mismatch(searcher, "level:debug", fields)  # no other case
        casenotice.notice_case_mismatch(searcher, "message:DISK", fields)  # tokenized: silent


@pytest.mark.spark
def test_search_and_count_notice_a_term_in_another_case(spark: Any, tmp_path: Path) -> None:
    from indextables.search.query.casenotice import CaseMismatchWarning

    path = str(tmp_path / "logs")
    rows = [("ERROR", "disk full"), ("ERROR", "disk gone"), ("INFO", "ok")]
    df = spark.createDataFrame(rows, "level string, message string").coalesce(1)
    df.write.format("indextables").mode("append").save(path)
    with pytest.warns(CaseMismatchWarning, match=r"level:error.*'ERROR'"):
        assert itp.search(spark, path, "level:error").count() == 0
    assert itp.count(spark, path, query="level:warn OR level:INFO") == 1  # matched: silent
    with pytest.warns(CaseMismatchWarning, match=r"level:info.*'INFO'"):
        assert itp.count(spark, path, query="level:info") == 0


def test_pyspark_docs_have_one_arrow_paragraph_whole_table_rows_and_the_reference_ip_facts() -> (
    None
):
    text = (Path(__file__).resolve().parents[3] / "docs" / "pyspark.md").read_text()
    assert text.count("each split carries `indextables-rows.arrow`") == 1
    assert text.count("zstd-compressed Arrow IPC copy") == 1
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("|"):
            assert line.rstrip().endswith("|"), f"docs/pyspark.md:{number}: {line[-60:]}"
    assert "has no CIDR syntax" not in text
    assert "case-sensitive" in text


def _random_ips(rng: Any, count: int) -> list[str]:
    import ipaddress

    edges = [
        "0.0.0.0",
        "255.255.255.255",
        "10.0.0.0",
        "10.255.255.255",
        "192.168.1.1",
        "::",
        "::1",
        "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
        "2001:db8::",
        "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff",
    ]
    out = list(edges)
    for _ in range(count):
        if rng.random() < 0.5:
            out.append(str(ipaddress.IPv4Address(rng.getrandbits(32))))
        else:
            address = ipaddress.IPv6Address(rng.getrandbits(128))
            if address.ipv4_mapped is None:
                out.append(str(address))
    return out


def _random_forms(rng: Any, ips: list[str], count: int) -> list[str]:
    import ipaddress

    forms = ["10.*.*.*", "192.168.*.*", "0.0.0.0/0", "::/0", "255.255.255.255/32", "::1/128"]
    for _ in range(count):
        base = ipaddress.ip_address(rng.choice(ips))
        if base.version == 4:
            octets = str(base).split(".")
            if rng.random() < 0.3:
                keep = rng.randint(1, 3)
                forms.append(".".join(octets[:keep] + ["*"] * (4 - keep)))
            else:
                forms.append(f"{base}/{rng.randint(0, 32)}")
        else:
            forms.append(f"{base}/{rng.randint(0, 128)}")
    return forms


def _oracle(ips: list[str], form: str) -> set[int]:
    import ipaddress

    if "*" in form:
        fixed = [p for p in form.split(".") if p != "*"]
        form = ".".join(fixed + ["0"] * (4 - len(fixed))) + f"/{8 * len(fixed)}"
    network = ipaddress.ip_network(form, strict=False)
    return {i for i, ip in enumerate(ips) if ipaddress.ip_address(ip) in network}


@pytest.mark.spark
@pytest.mark.parametrize("seed", [1, 2])
def test_ip_cidr_and_wildcard_query_terms_match_an_independent_oracle(
    spark: Any, tmp_path: Path, seed: int
) -> None:
    """Differential: the rows Spark reads back from Parquet, filtered by Python's
    ipaddress, against the same rows searched in IndexTables with the CIDR/wildcard form."""
    import random

    rng = random.Random(seed)
    ips = _random_ips(rng, 150)
    df = spark.createDataFrame(list(enumerate(ips)), "id long, ip string").coalesce(1)
    parquet, table = str(tmp_path / "p"), str(tmp_path / "t")
    df.write.parquet(parquet)
    typemap = {"spark.indextables.indexing.typemap.ip": "ip"}
    df.write.format("indextables").options(**typemap).mode("append").save(table)
    rows = {r.id: r.ip for r in spark.read.parquet(parquet).collect()}
    assert len(rows) == len(ips)
    ordered = [rows[i] for i in range(len(ips))]
    for form in _random_forms(rng, ips, 30):
        got = {
            r.id
            for r in spark.read.format("indextables")
            .option("query", f"ip:{form}")
            .load(table)
            .select("id")
            .collect()
        }
        expected = _oracle(ordered, form)
        assert got == expected, form
        if len(form) % 3 == 0:  # a share of the forms through the driver-side helpers too
            assert itp.count(spark, table, query=f"ip:{form}") == len(expected), form
            found = itp.search(spark, table, f"ip:{form}").select("id").collect()
            assert {r.id for r in found} == expected, form


@pytest.mark.parametrize(
    ("value", "bounds"),
    [
        ("10.0.0.0/8", ("10.0.0.0", "10.255.255.255")),
        ("10.1.*.*", ("10.1.0.0", "10.1.255.255")),
        ("2001:db8::/32", ("2001:db8::", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff")),
        ("10.0.0.1", None),
    ],
)
def test_ip_forms_become_exact_ranges(value: str, bounds: Any) -> None:
    from indextables.search.query.ipforms import ip_range

    assert ip_range(value) == bounds


@pytest.mark.parametrize("value", ["10.*.0.*", "10.0.0.0/33", "*.*", "10.*.*.*/8"])
def test_bad_ip_forms_are_query_errors(value: str) -> None:
    from indextables.search.query.ipforms import ip_range

    with pytest.raises(itp.QuerySyntaxError):
        ip_range(value)


@pytest.mark.spark
def test_ip_fieldmatch_takes_cidr_wildcard_and_addresses_like_an_independent_oracle(
    spark: Any, tmp_path: Path
) -> None:
    """Differential: the rows Spark reads back from Parquet, matched by Python's ipaddress,
    against ``fieldmatch`` on the ip column through every entry point that takes it."""
    import random

    rng = random.Random(7)
    ips = _random_ips(rng, 120)
    df = spark.createDataFrame(list(enumerate(ips)), "id long, ip string").coalesce(1)
    parquet, table = str(tmp_path / "p"), str(tmp_path / "t")
    df.write.parquet(parquet)
    typemap = {"spark.indextables.indexing.typemap.ip": "ip"}
    df.write.format("indextables").options(**typemap).mode("append").save(table)
    rows = {r.id: r.ip for r in spark.read.parquet(parquet).collect()}
    ordered = [rows[i] for i in range(len(ips))]
    forms = ["::ffff:0:0/96", "10.*.*.*", rng.choice(ips), "::1", *_random_forms(rng, ips, 12)]
    for number, form in enumerate(forms):
        expected = _oracle(ordered, form)  # an address alone is its one-address network
        way = number % 4
        if way == 0:
            frame = itp.fieldmatch(spark, table, "ip", form)
        elif way == 1:
            frame = itp.search(spark, table, fieldmatch={"ip": form})
        elif way == 2:
            frame = spark.read.format("indextables").option("fieldmatch.ip", form).load(table)
        else:
            assert itp.count(spark, table, fieldmatch={"IP": form}) == len(expected), form
            continue
        assert {r.id for r in frame.select("id").collect()} == expected, form
    with pytest.raises(itp.QuerySyntaxError, match=r"fieldmatch\.ip"):
        itp.fieldmatch(spark, table, "ip", "10.*.0.*")


@pytest.mark.spark
def test_ip_cidr_and_wildcard_literals_in_where_filters_give_sparks_answer_over_parquet(
    spark: Any, tmp_path: Path
) -> None:
    """Spark compares an ip column as a string: `ip = '10.0.0.0/8'` keeps no address row
    over Parquet, and a pushed filter may not change that (docs/pyspark.md, IP row)."""
    rows = [(1, "10.0.0.1"), (2, "10.1.2.3"), (3, "192.168.1.1"), (4, None), (5, "::1")]
    df = spark.createDataFrame(rows, "id long, ip string").coalesce(1)
    parquet, table = str(tmp_path / "p"), str(tmp_path / "t")
    df.write.parquet(parquet)
    typemap = {"spark.indextables.indexing.typemap.ip": "ip"}
    df.write.format("indextables").options(**typemap).mode("append").save(table)
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")  # filters are pushed
    for where in (
        "ip = '10.0.0.0/8'",
        "ip IN ('10.1.*.*', '192.168.1.1')",
        "ip IN ('10.0.0.1', '::/0')",
        "ip <=> '10.0.0.0/8'",
        "ip = '10.0.0.1'",
    ):
        want = sorted(r.id for r in spark.read.parquet(parquet).where(where).collect())
        got = sorted(
            r.id for r in spark.read.format("indextables").load(table).where(where).collect()
        )
        assert got == want, where
        assert itp.count(spark, table, where=where) == len(want), where


@pytest.mark.spark
def test_search_helpers_name_a_missing_column_at_the_call(spark: Any, logs: str) -> None:
    """No action: the error comes from the call itself, ours, naming the closest column."""
    with pytest.raises(itp.FieldKindError, match=r"'mesage'.*did you mean 'message'"):
        itp.textsearch(spark, logs, "mesage", "timed")
    with pytest.raises(itp.FieldKindError, match=r"'levl'.*did you mean 'level'"):
        itp.fieldmatch(spark, logs, "levl", "ERROR")
    with pytest.raises(itp.FieldKindError, match=r"'message'.*textsearch\.message"):
        itp.fieldmatch(spark, logs, "message", "ok")  # a wrong kind, at the call too
    with pytest.raises(itp.FieldKindError, match=r"'mesage'.*did you mean 'message'"):
        itp.search(spark, logs, textsearch={"mesage": "timed"})
    with pytest.raises(itp.FieldKindError, match=r"'levl'.*did you mean 'level'"):
        itp.count(spark, logs, fieldmatch={"levl": "ERROR"})
    assert itp.fieldmatch(spark, logs, "LEVEL", "ERROR").count() == 20


def test_no_hypothesis_test_depends_on_the_machine_speed() -> None:
    """Every package whose tests use Hypothesis loads a profile with no
    deadline and no "too slow" health check, and no test's own settings bring them back."""
    import re

    from hypothesis import HealthCheck, settings

    assert settings.default.deadline is None  # this package's own conftest
    assert HealthCheck.too_slow in settings.default.suppress_health_check
    root = Path(__file__).resolve().parents[3]
    for tests in sorted(root.glob("packages/*/tests")):
        files = sorted(tests.rglob("*.py"))
        users = [
            f for f in files if re.search(r"^\s*(from|import) hypothesis", f.read_text(), re.M)
        ]
        if not users:
            continue
        conftest = (tests / "conftest.py").read_text()
        assert 'settings.load_profile("machine-independent")' in conftest, tests
        assert "deadline=None" in conftest, tests
        assert "HealthCheck.too_slow" in conftest, tests
        for path in users:
            text = path.read_text()
            for match in re.finditer(r"deadline=([\w.]+)", text):
                assert match.group(1) == "None", f"{path}: deadline={match.group(1)}"
            for match in re.finditer(r"suppress_health_check=\[([^\]]*)\]", text):
                assert "too_slow" in match.group(1), f"{path}: {match.group(0)}"
