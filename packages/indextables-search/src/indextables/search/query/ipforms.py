"""CIDR (``10.0.0.0/8``, ``2001:db8::/32``) and trailing-wildcard (``10.0.*.*``) terms
on ip fields in a ``query``, as the reference accepts them: each becomes the exact
address range ``field:[first TO last]`` before Tantivy parses the query."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping

from indextables.search.errors import QuerySyntaxError
from indextables.search.schema.mapping import FieldKind, FieldSpec

# field:value where value holds a "/" or a "*" (the other forms are left to Tantivy)
_TERM = re.compile(r"(?<![\w.])([A-Za-z_][\w.]*):([0-9A-Fa-f:.*]+(?:/\d{1,3})?)(?=[\s()]|$)")


def ip_range(value: str) -> tuple[str, str] | None:
    """The first and last address of a CIDR or ``a.b.*.*`` form, or None for another value.

    Raises:
        QuerySyntaxError: a CIDR or wildcard that is not a valid network.
    """
    if "*" in value:
        parts = value.split(".")
        stars = [p == "*" for p in parts]
        if len(parts) != 4 or "/" in value or not stars[-1] or stars != sorted(stars):
            raise QuerySyntaxError(
                f"ip wildcard {value!r}: only trailing octets can be * (10.0.*.*)"
            )
        fixed = parts[: stars.index(True)]
        value = ".".join([*fixed, *["0"] * (4 - len(fixed))]) + f"/{8 * len(fixed)}"
    if "/" not in value:
        return None
    try:
        network = ipaddress.ip_network(value, strict=False)
    except ValueError as error:
        raise QuerySyntaxError(f"ip CIDR {value!r}: {error}") from None
    return str(network[0]), str(network[-1])


# Tantivy holds IPv4 addresses as IPv4-mapped IPv6 ones (::ffff:a.b.c.d).
_MAPPED = ipaddress.ip_network("::ffff:0:0/96")


def range_query_text(name: str, value: str) -> str | None:
    """The query text matching the addresses of the CIDR/wildcard ``value`` on ip field
    ``name`` (``name:[first TO last]``), or None when ``value`` is neither form.

    Raises:
        QuerySyntaxError: a CIDR or wildcard that is not a valid network.
    """
    bounds = ip_range(value)
    if bounds is None:
        return None
    text = f"{name}:[{bounds[0]} TO {bounds[1]}]"
    network = (
        ipaddress.ip_network(f"{bounds[0]}/{value.rsplit('/', 1)[-1]}", strict=False)
        if ("/" in value)
        else None
    )
    if network is not None and network.version == 6 and network.overlaps(_MAPPED):
        # an IPv6 network over the mapped block would also match IPv4 rows: leave them out
        text = f"({text} -{name}:[::ffff:0.0.0.0 TO ::ffff:255.255.255.255])"
    return text


def rewrite_ip_forms(query: str, fields: Mapping[str, FieldSpec]) -> str:
    """``query`` with each CIDR/wildcard term on an ip field as its address range."""
    ip_names = {name for name, spec in fields.items() if spec.kind is FieldKind.IP}
    if not ip_names or ("/" not in query and "*" not in query):
        return query

    def replace(match: re.Match[str]) -> str:
        name, value = match.group(1), match.group(2)
        if name.lower() not in ip_names:
            return match.group(0)
        return range_query_text(name, value) or match.group(0)

    return _TERM.sub(replace, query)
