"""What both FileEntry decoders share: the resolution plan and its constants.

A writer schema is compiled once per manifest into a *plan*: one
``FieldOp`` per writer field, saying which ``FileEntry`` slot it fills (or
-1 to skip it), how it is encoded, and, for skipped fields, a skip tree.
Fields are matched by name, so older, newer and reordered writer schemas all
resolve; known fields with an unresolvable type raise ``SchemaMismatchError``.
Both decoders (``_decode_py`` and the Cython ``_decode``) interpret the same
plan, so they cannot disagree on resolution.
"""

from __future__ import annotations

import array
from collections.abc import Sequence
from typing import Any, Final, NamedTuple

from indextables.avrostate.errors import SchemaMismatchError
from indextables.protocol.pathsafety import PATH_PROBLEMS, path_problem  # for the decoders
from indextables.protocol.predicates import as_number  # re-exported for the decoders

__all__ = [
    "DEFAULTS",
    "EAGER_SLOTS",
    "SLOT_NAMES",
    "PATH_PROBLEMS",
    "FieldOp",
    "Plan",
    "UnsafePathDecodeError",
    "as_number",
    "compile_plan",
    "path_problem",
]

# Value kinds of FileEntry slots (and of skip-tree nodes, see below).
K_NULL: Final = 0
K_BOOL: Final = 1
K_LONG: Final = 2  # int and long share the zig-zag varint encoding
K_FLOAT: Final = 3
K_DOUBLE: Final = 4
K_STR: Final = 5  # string and bytes share the length-prefixed encoding
K_MAP: Final = 6  # map<string> for slots
K_ARR: Final = 7  # array<string> for slots
K_FIXED: Final = 8
K_ENUM: Final = 9
K_UNION: Final = 10
K_RECORD: Final = 11
K_GMAP: Final = 12  # generic map (skip trees)
K_GARR: Final = 13  # generic array (skip trees)

# FileEntry slots in the protocol dataclass's field order: (wire name, kind).
_SLOTS: Final = (
    ("path", K_STR),
    ("partitionValues", K_MAP),
    ("size", K_LONG),
    ("modificationTime", K_LONG),
    ("dataChange", K_BOOL),
    ("addedAtVersion", K_LONG),
    ("addedAtTimestamp", K_LONG),
    ("stats", K_STR),
    ("minValues", K_MAP),
    ("maxValues", K_MAP),
    ("numRecords", K_LONG),
    ("footerStartOffset", K_LONG),
    ("footerEndOffset", K_LONG),
    ("hasFooterOffsets", K_BOOL),
    ("deleteOpstamp", K_LONG),
    ("splitTags", K_ARR),
    ("numMergeOps", K_LONG),
    ("docMappingJson", K_STR),
    ("docMappingRef", K_STR),
    ("uncompressedSizeBytes", K_LONG),
    ("timeRangeStart", K_LONG),
    ("timeRangeEnd", K_LONG),
    ("companionSourceFiles", K_ARR),
    ("companionDeltaVersion", K_LONG),
    ("companionFastFieldMode", K_STR),
)
SLOT_NAMES: Final = tuple(name for name, _ in _SLOTS)
_SLOT_INDEX: Final = {name: i for i, name in enumerate(SLOT_NAMES)}
_SLOT_KIND: Final = dict(_SLOTS)

SLOT_PATH: Final = 0
SLOT_PARTITION_VALUES: Final = 1
SLOT_SIZE: Final = 2
SLOT_NUM_RECORDS: Final = 10
SLOT_FOOTER_START: Final = 11
SLOT_FOOTER_END: Final = 12
SLOT_MIN_VALUES: Final = 8
SLOT_MAX_VALUES: Final = 9
# Decoded during the planning scan; every other slot waits for first access.
SLOT_ADDED_AT_VERSION: Final = 5
EAGER_SLOTS: Final = frozenset(
    {
        SLOT_PATH,
        SLOT_PARTITION_VALUES,
        SLOT_SIZE,
        SLOT_ADDED_AT_VERSION,
        SLOT_NUM_RECORDS,
        SLOT_FOOTER_START,
        SLOT_FOOTER_END,
    }
)

# Values of slots the writer schema lacks (v0.5.4 never lacks the first five).
DEFAULTS: Final[tuple[Any, ...]] = (
    None,  # path: required, checked by compile_plan
    {},
    None,  # size: required
    0,
    True,
    0,
    0,
    *([None] * 6),
    False,
    *([None] * 11),
)
_REQUIRED: Final = ("path", "size")
# The Cython decoder keeps a plan in fixed C arrays of this size.
MAX_FIELDS: Final = 512


class FieldOp(NamedTuple):
    """How to decode one writer field.

    Attributes:
        slot: FileEntry slot to fill, or -1 to skip the field.
        kind: value kind (``K_*``) of a filled slot; for a skipped field, K_UNION
            or the root kind of ``skip``.
        null_branch: union branch index meaning null, or -1.
        value_branch: union branch index holding the value, or -1 when not a union.
        n_branches: number of union branches (0 when not a union).
        skip: skip tree of a skipped field (``(kind, arg)`` nested tuples).
        eager: whether the planning scan decodes it.
    """

    slot: int
    kind: int
    null_branch: int
    value_branch: int
    n_branches: int
    skip: tuple[Any, ...]
    eager: bool


Plan = tuple[FieldOp, ...]

_PRIMITIVES: Final = {
    "null": K_NULL,
    "boolean": K_BOOL,
    "int": K_LONG,
    "long": K_LONG,
    "float": K_FLOAT,
    "double": K_DOUBLE,
    "bytes": K_STR,
    "string": K_STR,
}


def _full_name(schema: dict[str, Any], namespace: str | None) -> str:
    name = str(schema["name"])
    if "." in name:
        return name
    ns = schema.get("namespace", namespace)
    return f"{ns}.{name}" if ns else name


def _skip_tree(
    schema: Any, named: dict[str, Any], namespace: str | None, path: str, depth: int = 0
) -> tuple[Any, ...]:
    """Compile any Avro type into a skip tree; named types are registered in ``named``."""
    if depth > 32:
        raise SchemaMismatchError(path, "writer schema nests deeper than 32 levels")
    if isinstance(schema, list):
        return (K_UNION, tuple(_skip_tree(b, named, namespace, path, depth + 1) for b in schema))
    if isinstance(schema, str):
        if schema in _PRIMITIVES:
            return (_PRIMITIVES[schema], None)
        key = schema if "." in schema or not namespace else f"{namespace}.{schema}"
        found = named.get(key, named.get(schema))
        if found is None:
            raise SchemaMismatchError(path, f"writer schema references unknown type {schema!r}")
        return tuple(found)
    if not isinstance(schema, dict):
        raise SchemaMismatchError(path, f"writer schema has an invalid type {schema!r}")
    return _complex_tree(schema, named, namespace, path, depth)


def _complex_tree(
    schema: dict[str, Any], named: dict[str, Any], namespace: str | None, path: str, depth: int
) -> tuple[Any, ...]:
    type_ = schema.get("type")
    if type_ in _PRIMITIVES:
        return (_PRIMITIVES[type_], None)
    if type_ == "array":
        return (K_GARR, _skip_tree(schema.get("items"), named, namespace, path, depth + 1))
    if type_ == "map":
        return (K_GMAP, _skip_tree(schema.get("values"), named, namespace, path, depth + 1))
    if type_ in ("fixed", "enum", "record", "error"):
        full = _full_name(schema, namespace)
        if type_ == "fixed":
            node: tuple[Any, ...] = (K_FIXED, int(schema["size"]))
        elif type_ == "enum":
            node = (K_ENUM, len(schema.get("symbols", ())))
        else:
            inner_ns = full.rpartition(".")[0] or None
            fields = [
                _skip_tree(f["type"], named, inner_ns, path, depth + 1) for f in schema["fields"]
            ]
            node = (K_RECORD, tuple(fields))
        named[full] = node
        return node
    raise SchemaMismatchError(path, f"writer schema has an unknown type {type_!r}")


def _slot_kind_of(tree: tuple[Any, ...]) -> int:
    """The slot kind a writer type carries, or -1 when it cannot fill a slot."""
    kind, arg = tree
    if kind in (K_LONG, K_BOOL, K_STR):
        return int(kind)
    if kind == K_GMAP and arg[0] == K_STR:
        return K_MAP
    if kind == K_GARR and arg[0] == K_STR:
        return K_ARR
    return -1


def _slot_op(slot: int, tree: tuple[Any, ...], name: str, path: str) -> FieldOp:
    want = _SLOT_KIND[name]
    eager = slot in EAGER_SLOTS
    if tree[0] != K_UNION:
        if _slot_kind_of(tree) != want:
            raise SchemaMismatchError(path, f"field {name!r} has an unresolvable writer type")
        return FieldOp(slot, want, -1, -1, 0, tree, eager)
    branches = tree[1]
    null_branch = value_branch = -1
    for i, branch in enumerate(branches):
        if branch[0] == K_NULL and null_branch < 0:
            null_branch = i
        elif _slot_kind_of(branch) == want and value_branch < 0:
            value_branch = i
        else:
            raise SchemaMismatchError(path, f"field {name!r} has an unresolvable union branch")
    if value_branch < 0:
        raise SchemaMismatchError(path, f"field {name!r} is always null in the writer schema")
    return FieldOp(slot, want, null_branch, value_branch, len(branches), tree, eager)


def compile_plan(schema: Any, *, path: str) -> Plan:
    """Compile a FileEntry writer schema into a decoding plan.

    Raises:
        SchemaMismatchError: not a record, a required field is missing, or a
            known field has a type that does not resolve to ours.
    """
    if not isinstance(schema, dict) or schema.get("type") != "record":
        raise SchemaMismatchError(path, "writer schema is not a record")
    if len(schema.get("fields", ())) > MAX_FIELDS:
        raise SchemaMismatchError(path, f"writer schema has more than {MAX_FIELDS} fields")
    named: dict[str, Any] = {}
    namespace = _full_name(schema, None).rpartition(".")[0] or None
    ops: list[FieldOp] = []
    for field in schema.get("fields", ()):
        tree = _skip_tree(field["type"], named, namespace, path)
        slot = _SLOT_INDEX.get(field["name"], -1)
        if slot < 0:
            ops.append(FieldOp(-1, tree[0], -1, -1, 0, tree, False))
        else:
            ops.append(_slot_op(slot, tree, field["name"], path))
    present = {SLOT_NAMES[op.slot] for op in ops if op.slot >= 0}
    for name in _REQUIRED:
        if name not in present:
            raise SchemaMismatchError(path, f"writer schema lacks required field {name!r}")
    return tuple(ops)


class DecodeError(ValueError):
    """Record bytes do not decode under the plan (callers add the file name)."""


class UnsafePathDecodeError(DecodeError):
    """A record's path is not a safe table-relative path (see ``protocol.pathsafety``).

    Attributes:
        path: the path as decoded.
        problem: what is wrong with it (one of ``PATH_PROBLEMS``).
    """

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"path {path!r} {problem}")
        self.path = path
        self.problem = problem


class Columns:
    """The planning columns a block scan appends to, one element per kept entry.

    ``starts``/``ends`` are each record's byte span inside its block, so every
    other field can be decoded later from the same bytes. Integer columns are
    ``array('q')``: 70,000 entries would otherwise allocate (and later free)
    half a million int objects. A null in one of them is stored as 0 and its
    row listed in ``nulls`` under the column's name (older writers only).
    """

    __slots__ = (
        "added_at_versions",
        "ends",
        "footer_ends",
        "footer_starts",
        "nulls",
        "num_records",
        "partition_values",
        "paths",
        "sizes",
        "starts",
    )

    def __init__(self) -> None:
        self.paths: list[str] = []
        self.partition_values: list[dict[str, str]] = []
        self.sizes = array.array("q")
        self.added_at_versions = array.array("q")
        self.num_records = array.array("q")
        self.footer_starts = array.array("q")
        self.footer_ends = array.array("q")
        self.starts = array.array("q")
        self.ends = array.array("q")
        self.nulls: dict[str, list[int]] = {}

    def with_nulls(self, name: str) -> Sequence[int | None]:
        """Int column ``name`` with its nulls as ``None`` (the array itself if it has none)."""
        column: array.array[int] = getattr(self, name)
        rows = self.nulls.get(name)
        if not rows:
            return column
        out: list[int | None] = list(column)
        for row in rows:
            out[row] = None
        return out
