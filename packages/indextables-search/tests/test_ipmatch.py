"""fieldmatch on ip fields (CIDR, trailing wildcards, single addresses) and the errors a
search names for a column the table does not have, through the engine's SearchTable."""

from __future__ import annotations

import ipaddress
import random
from pathlib import Path

import pyarrow as pa
import pytest

from indextables.search import open_table, write_table
from indextables.search.errors import FieldKindError, QuerySyntaxError

IP = {"spark.indextables.indexing.typemap.ip": "ip"}
EDGES = [
    "0.0.0.0",
    "255.255.255.255",
    "10.0.0.0",
    "10.255.255.255",
    "10.1.0.0",
    "10.1.255.255",
    "::",
    "::1",
    "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
    "2001:db8::",
    "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff",
]


def _ips(rng: random.Random, count: int) -> list[str | None]:
    out: list[str | None] = [*EDGES, None]
    while len(out) < count:
        if rng.random() < 0.5:
            out.append(str(ipaddress.IPv4Address(rng.getrandbits(32))))
        else:
            address = ipaddress.IPv6Address(rng.getrandbits(128))
            if address.ipv4_mapped is None:  # Tantivy stores those as their IPv4 address
                out.append(str(address))
    return out


def _forms(rng: random.Random, ips: list[str | None], count: int) -> list[str]:
    forms = ["10.*.*.*", "10.1.*.*", "0.0.0.0/0", "::/0", "::ffff:0:0/96", "10.0.0.0", "::1"]
    present = [ip for ip in ips if ip is not None]
    while len(forms) < count:
        base = ipaddress.ip_address(rng.choice(present))
        if base.version == 4 and rng.random() < 0.3:
            keep = rng.randint(1, 3)
            forms.append(".".join(str(base).split(".")[:keep] + ["*"] * (4 - keep)))
        else:
            forms.append(f"{base}/{rng.randint(0, base.max_prefixlen)}")
    return forms


def _oracle(ips: list[str | None], form: str) -> set[int]:
    """The rows whose address is ``form`` or lies in it, by Python's ipaddress alone."""
    if "*" in form:
        fixed = [p for p in form.split(".") if p != "*"]
        form = ".".join(fixed + ["0"] * (4 - len(fixed))) + f"/{8 * len(fixed)}"
    network = ipaddress.ip_network(form, strict=False)
    return {i for i, ip in enumerate(ips) if ip is not None and ipaddress.ip_address(ip) in network}


@pytest.mark.parametrize("seed", [3, 4])
def test_fieldmatch_on_an_ip_field_matches_an_independent_oracle(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    ips = _ips(rng, 200)
    data = pa.table({"id": pa.array(range(len(ips)), pa.int64()), "ip": pa.array(ips)})
    write_table(str(tmp_path), data, options=IP)
    table = open_table(str(tmp_path))
    for form in _forms(rng, ips, 40):
        expected = _oracle(ips, form)
        found = table.search(fieldmatch={"ip": form}, columns=["id"])
        assert set(found.column("id").to_pylist()) == expected, form
        assert table.count(fieldmatch={"IP": form}) == len(expected), form


@pytest.mark.parametrize("value", ["10.*.0.*", "10.0.0.0/33", "not-an-address", "10.1.*.*/8"])
def test_fieldmatch_on_an_ip_field_refuses_other_values_naming_the_option(
    tmp_path: Path, value: str
) -> None:
    write_table(str(tmp_path), pa.table({"ip": ["10.0.0.1"]}), options=IP)
    with pytest.raises(QuerySyntaxError, match=r"fieldmatch\.ip"):
        open_table(str(tmp_path)).search(fieldmatch={"ip": value})


def test_a_search_on_a_missing_column_names_the_closest_one(tmp_path: Path) -> None:
    data = pa.table({"message": ["disk full"], "level": ["ERROR"]})
    write_table(str(tmp_path), data, options={"spark.indextables.indexing.typemap.message": "text"})
    table = open_table(str(tmp_path))
    with pytest.raises(FieldKindError, match=r"'mesage'.*did you mean 'message'"):
        table.search(textsearch={"mesage": "disk"})
    with pytest.raises(FieldKindError, match=r"'levl'.*did you mean 'level'"):
        table.count(fieldmatch={"levl": "ERROR"})
    with pytest.raises(FieldKindError, match=r"'zzz'.*indexed columns: level, message"):
        table.count(fieldmatch={"zzz": "ERROR"})
