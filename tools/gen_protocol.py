"""Generate ``seaway.protocol.messages`` from Kafka's JSON message definitions.

Usage::

    python -m tools.gen_protocol --spec-dir ../shared/kafka-protocol \
        --out protocol/seaway/protocol/messages

One module per message (``produce_request.py``, ``produce_response.py``, ...) holding a
frozen, slotted dataclass per struct, with field docs from the JSON ``about``, and
``decode``/``encode`` for the versions listed in :data:`SERVED` only. Flexible versions
(compact types, tagged fields) follow the ``flexibleVersions`` of each message. Every
class also carries ``_FIELDS``, a description of its fields that the generated round-trip
tests use to build random instances.

Hot-path shape (the produce path decodes and answers a struct per partition):

- each class gets an explicit ``__init__`` instead of the dataclass one (``init=False``),
  with the same signature; it sets each slot through its descriptor's ``__set__`` (what
  ``object.__setattr__`` ends up calling, minus the lookup; the frozen ``__setattr__``
  still guards every later assignment). A struct-typed default that holds no list is one
  shared instance (frozen, so sharing is safe) instead of a fresh one per object;
- ``decode`` reads, and ``encode`` packs, each run of fixed-width fields under the same
  version test with one precompiled ``struct.Struct``; an empty tagged-field section, a
  null string and a short compact array length are read or written inline.

Behaviour (equality, hashing, ``dataclasses.replace``, defaults, errors on truncated
input) is the dataclass's and the Reader's. The output is committed; re-run after
changing :data:`SERVED`. Kafka's JSON is read, never copied into the repository.
"""

from __future__ import annotations

import argparse
import json
import keyword
import re
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path

# API name -> (lowest, highest) version generated. Lowest versions are those that carry
# record batch v2 (Produce 3+, Fetch 4+) or that current clients still send.
SERVED: dict[str, tuple[int, int]] = {
    "Produce": (3, 11),
    "Fetch": (4, 12),
    "ListOffsets": (1, 8),
    "Metadata": (0, 12),
    # v9 is what KIP-848 consumers (group.protocol=consumer) need: member epochs in commits and fetches.
    "OffsetCommit": (2, 9),
    "OffsetFetch": (1, 9),
    "FindCoordinator": (0, 5),
    "JoinGroup": (0, 9),
    "Heartbeat": (0, 4),
    "LeaveGroup": (0, 5),
    "SyncGroup": (0, 5),
    "DescribeGroups": (0, 5),
    "ListGroups": (0, 5),
    "ApiVersions": (0, 4),
    "CreateTopics": (2, 7),
    "DeleteTopics": (1, 6),
    "DeleteRecords": (0, 2),
    "InitProducerId": (0, 5),
    "DescribeConfigs": (1, 4),
    "AlterConfigs": (0, 2),
    "DeleteGroups": (0, 2),
    "CreatePartitions": (0, 3),
    "IncrementalAlterConfigs": (0, 1),
    "OffsetDelete": (0, 0),
    "DescribeCluster": (0, 1),
    # kafka-topics --describe (Kafka 3.8+ tools) asks this first, Metadata only as a fallback.
    "DescribeTopicPartitions": (0, 0),
    # Security (issue 18): SASL authentication, ACLs, SCRAM credentials.
    "SaslHandshake": (0, 1),
    "SaslAuthenticate": (0, 2),
    "CreateAcls": (0, 3),
    "DescribeAcls": (0, 3),
    "DeleteAcls": (0, 3),
    "DescribeUserScramCredentials": (0, 0),
    "AlterUserScramCredentials": (0, 0),
    # Transactions (issue 20). AddPartitionsToTxn v4+ is Kafka's broker-to-broker batch form
    # (CLUSTER_ACTION); EndTxn v5 (KIP-890 part 2, an epoch bump per transaction) is not served.
    "AddPartitionsToTxn": (0, 5),
    "AddOffsetsToTxn": (0, 4),
    "EndTxn": (0, 4),
    "TxnOffsetCommit": (0, 4),
    "DescribeTransactions": (0, 0),
    "ListTransactions": (0, 1),
    # The KIP-848 consumer group protocol (group.protocol=consumer).
    "ConsumerGroupHeartbeat": (0, 1),
    "ConsumerGroupDescribe": (0, 0),
}

HEADERS = {"RequestHeader": (0, 2), "ResponseHeader": (0, 1)}
# Embedded data formats with their own versions: the consumer protocol's subscription
# and assignment (what `consumer` groups carry in JoinGroup/SyncGroup metadata).
EMBEDDED = {"ConsumerProtocolSubscription": (0, 3), "ConsumerProtocolAssignment": (0, 3)}

PRIMITIVES = {
    "bool": ("bool", "False"),
    "int8": ("int", "0"),
    "int16": ("int", "0"),
    "uint16": ("int", "0"),
    "int32": ("int", "0"),
    "uint32": ("int", "0"),
    "int64": ("int", "0"),
    "float64": ("float", "0.0"),
    "uuid": ("uuid.UUID", "ZERO_UUID"),
    "string": ("str", '""'),
    "bytes": ("bytes", 'b""'),
    "records": ("RecordsValue", "None"),
}
VARIABLE = {"string", "bytes"}
# Fixed-width types and their struct format characters (big-endian). ``?`` packs any
# truthy value as 1, as Writer.bool does.
FIXED = {"bool": "?", "int8": "b", "int16": "h", "uint16": "H", "int32": "i", "uint32": "I",
         "int64": "q", "float64": "d"}

INF = 1 << 15


def parse_versions(spec: str | None) -> tuple[int, int] | None:
    """'3+' -> (3, INF), '1-4' -> (1, 4), '2' -> (2, 2), 'none'/'' -> None."""
    if spec is None or spec in ("", "none"):
        return None
    if spec.endswith("+"):
        return int(spec[:-1]), INF
    if "-" in spec:
        lo, hi = spec.split("-")
        return int(lo), int(hi)
    return int(spec), int(spec)


def snake(name: str) -> str:
    s = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()
    return s + "_" if keyword.iskeyword(s) else s


def strip_comments(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.strip().startswith("//"))


@dataclass
class Field:
    name: str
    py: str
    type: str
    versions: tuple[int, int]
    nullable: tuple[int, int] | None
    tag: int | None
    tagged: tuple[int, int] | None
    default: str | None
    about: str
    flexible_override: tuple[int, int] | bool | None = False  # False: follow the message
    fields: list[Field] = field(default_factory=list)

    @property
    def is_array(self) -> bool:
        return self.type.startswith("[]")

    @property
    def elem(self) -> str:
        return self.type[2:] if self.is_array else self.type

    @property
    def is_struct(self) -> bool:
        return self.elem not in PRIMITIVES


@dataclass
class Struct:
    name: str
    fields: list[Field]
    about: str = ""


def load_fields(raw: list[dict[str, object]]) -> list[Field]:
    out = []
    for f in raw:
        versions = parse_versions(str(f["versions"]))
        assert versions is not None, f
        flex: tuple[int, int] | bool | None = False
        if "flexibleVersions" in f:
            flex = parse_versions(str(f["flexibleVersions"]))
        out.append(
            Field(
                name=str(f["name"]),
                py=snake(str(f["name"])),
                type=str(f["type"]),
                versions=versions,
                nullable=parse_versions(str(f["nullableVersions"])) if "nullableVersions" in f else None,
                tag=int(str(f["tag"])) if "tag" in f else None,
                tagged=parse_versions(str(f["taggedVersions"])) if "taggedVersions" in f else None,
                default=str(f["default"]).lower() if isinstance(f.get("default"), bool) else (
                    None if f.get("default") is None else str(f["default"])
                ),
                about=str(f.get("about", "")),
                flexible_override=flex,
                fields=load_fields(f.get("fields", [])),  # type: ignore[arg-type]
            )
        )
    return out


def overlaps(a: tuple[int, int] | None, lo: int, hi: int) -> bool:
    return a is not None and a[0] <= hi and a[1] >= lo


def cond(r: tuple[int, int], lo: int, hi: int) -> str:
    """A version test for range r, simplified against the generated range [lo, hi]."""
    parts = []
    if r[0] > lo:
        parts.append(f"version >= {r[0]}")
    if r[1] < hi:
        parts.append(f"version <= {r[1]}")
    return " and ".join(parts) or "True"


class Generator:
    def __init__(self, spec: dict[str, object], lo: int, hi: int) -> None:
        self.spec = spec
        self.name = str(spec["name"])
        self.lo, self.hi = lo, hi
        self.flexible = parse_versions(str(spec.get("flexibleVersions", "none")))
        self.structs: dict[str, Struct] = {}
        self.formats: set[str] = set()
        common: list[dict[str, object]] = spec.get("commonStructs", [])  # type: ignore[assignment]
        self.common = {str(s["name"]): load_fields(s["fields"]) for s in common}  # type: ignore[arg-type]
        top = load_fields(spec["fields"])  # type: ignore[arg-type]
        self.collect(self.name, top)

    def collect(self, name: str, fields: list[Field]) -> None:
        live = [f for f in fields if overlaps(f.versions, self.lo, self.hi)]
        for f in live:
            if f.is_struct:
                sub = f.fields or self.common.get(f.elem)
                if sub is None:
                    raise SystemExit(f"{self.name}: unknown struct type {f.elem}")
                f.fields = sub
                if f.elem not in self.structs:
                    self.collect(f.elem, sub)
        self.structs[name] = Struct(name, live)

    # --- type helpers -------------------------------------------------------------
    def py_type(self, f: Field) -> str:
        base = f.elem if f.is_struct else PRIMITIVES[f.elem][0]
        t = f"list[{base}]" if f.is_array else base
        if f.nullable and overlaps(f.nullable, self.lo, self.hi) and f.elem != "records":
            t += " | None"
        return t

    def py_default(self, f: Field) -> str:
        """The dataclass default, per Kafka's rules (explicit default, else zero-ish)."""
        if f.is_array:
            if f.default == "null":
                return "None"
            return "dataclasses.field(default_factory=list)"
        if f.is_struct:
            if f.nullable or f.default == "null":
                return "None"
            return f"dataclasses.field(default_factory={f.elem})"
        d = f.default
        if d is None or d == "":
            if d == "" and f.elem == "string":
                return '""'
            return PRIMITIVES[f.elem][1]
        if d == "null":
            return "None"
        if f.elem == "bool":
            return "True" if d.lower() == "true" else "False"
        if f.elem in ("string",):
            return repr(d)
        if f.elem == "float64":
            return repr(float(d))
        if f.elem in ("int8", "int16", "uint16", "int32", "uint32", "int64"):
            return str(int(d, 16) if d.lower().startswith("0x") else int(d))
        return PRIMITIVES[f.elem][1]

    def immutable(self, name: str) -> bool:
        """Whether a default instance of struct ``name`` can be shared (no list inside)."""
        return not any(f.is_array or (f.is_struct and not self.immutable(f.elem)) for f in self.structs[name].fields)

    def shared_default(self, f: Field) -> str | None:
        """Name of the module-level default instance a struct field defaults to, if any."""
        shareable = f.is_struct and not f.is_array and self.py_default(f).startswith("dataclasses.field")
        return f"_{f.elem}_DEFAULT" if shareable and self.immutable(f.elem) else None

    def flex_expr(self, f: Field) -> str:
        """The expression giving whether this field uses compact encoding."""
        if f.flexible_override is False:
            return "flexible"
        if f.flexible_override is None:
            return "False"
        assert isinstance(f.flexible_override, tuple)
        return f"({cond(f.flexible_override, self.lo, self.hi)})"

    def nullable_now(self, f: Field) -> str:
        if not f.nullable or not overlaps(f.nullable, self.lo, self.hi):
            return "False"
        return f"({cond(f.nullable, self.lo, self.hi)})"

    # --- decode -----------------------------------------------------------------
    def read_one(self, f: Field, elem: str, flex: str, nullable: str) -> str:
        if elem in PRIMITIVES:
            if elem in VARIABLE:
                if nullable == "False":
                    return f"r.{elem}({flex})"
                if nullable == "True":
                    return f"r.nullable_{elem}({flex})"
                return f"(r.nullable_{elem}({flex}) if {nullable} else r.{elem}({flex}))"
            if elem == "records":
                return f"r.records({flex})"
            return f"r.{elem}()"
        return f"{elem}.decode(r, version)"

    def read_expr(self, f: Field) -> str:
        flex = self.flex_expr(f)
        if f.is_array:
            item = self.read_one(f, f.elem, flex, "False")
            if self.nullable_now(f) == "False":
                # A null where the spec allows none reads as empty, as forgiving as Kafka.
                return f"[{item} for _ in range(r.array_length({flex}))]"
            return f"(None if (_n := r.array_length({flex})) < 0 else [{item} for _ in range(_n)])"
        if f.is_struct and f.nullable and overlaps(f.nullable, self.lo, self.hi):
            return f"({f.elem}.decode(r, version) if r.int8() >= 0 else None)"
        return self.read_one(f, f.elem, flex, self.nullable_now(f))

    def gen_decode(self, s: Struct) -> list[str]:
        L = ["    @classmethod", f"    def decode(cls, r: Reader, version: int) -> {s.name}:"]
        L.append(f'        """Read a {s.name} of ``version`` (in [{self.lo}, {self.hi}])."""')
        if self.flexible:
            L.append(f"        flexible = {cond(self.flexible, self.lo, self.hi)}")
        else:
            L.append("        flexible = False")
        names = [f.py for f in s.fields]
        L.extend(f"        {f.py} = {self.inline_default(f)}" for f in s.fields if f.tagged is not None)
        for c, fields in self.fixed_runs(s):
            f = fields[0]
            if f.elem == "records" and not f.is_array and c == "True":
                L += ["        " + line for line in self.records_lines(f)]
                continue
            if f.is_array or f.elem not in FIXED:
                if c == "True":
                    L.append(f"        {f.py} = {self.read_expr(f)}")
                else:
                    L.append(f"        {f.py} = {self.read_expr(f)} if {c} else {self.inline_default(f)}")
                continue
            indent = "        "
            if c != "True":
                L.append(f"        if {c}:")
                indent = "            "
            L += [indent + line for line in self.unpack_lines(fields)]
            if c != "True":
                L.append("        else:")
                L += [f"            {g.py} = {self.inline_default(g)}" for g in fields]
        tagged = [f for f in s.fields if f.tagged is not None]
        if self.flexible:
            L.append("        if flexible:")
            if not tagged:
                # Almost always no tagged field: one zero byte, read inline.
                L.append("            if r.pos < r.end and r.buf[r.pos] == 0:")
                L.append("                r.pos += 1")
                L.append("            else:")
                L.append("                r.skip_tagged_fields()")
            else:
                # Each tagged field must lie inside the frame and a known one must fill
                # exactly its declared size, or the frame is corrupt (Kafka's reader
                # fails the same frames with a buffer underflow).
                L.append("            for _ in range(r.uvarint()):")
                L.append("                _tag = r.uvarint()")
                L.append("                _end = r.tagged_field_end(r.uvarint())")
                first = True
                for f in sorted(tagged, key=lambda f: f.tag or 0):
                    kw = "if" if first else "elif"
                    first = False
                    c = cond(f.tagged, self.lo, self.hi) if f.tagged else "True"
                    L.append(f"                {kw} _tag == {f.tag} and {c}:")
                    L.append(f"                    {f.py} = {self.read_expr(f)}")
                    L.append("                    r.end_tagged_field(_tag, _end)")
                L.append("                else:")
                L.append("                    r.pos = _end")
        L.append(f"        return cls({', '.join(names)})")
        return L

    def unpack_lines(self, fields: list[Field]) -> list[str]:
        """Read a run of fixed-width fields with one unpack (bounds checked as Reader does)."""
        fmt = "".join(FIXED[f.elem] for f in fields)
        self.formats.add(fmt)
        size = struct.calcsize(">" + fmt)
        targets = ", ".join(f.py for f in fields) + ("," if len(fields) == 1 else "")
        return [
            "_p = r.pos",
            f"if _p + {size} > r.end:",
            f"    r._need({size})",
            f"({targets}) = {self.struct_name(fmt)}.unpack_from(r.buf, _p)",
            f"r.pos = _p + {size}",
        ]

    def records_lines(self, f: Field) -> list[str]:
        """Read a records field (Reader.records, inlined): a memoryview of the request."""
        flex = self.flex_expr(f)
        return [
            f"_n = (r.uvarint() - 1) if {flex} else r.int32()",
            "if _n < 0:",
            f"    {f.py} = None",
            "else:",
            "    _p = r.pos",
            "    if _p + _n > r.end:",
            "        r._need(_n)",
            f"    {f.py} = r.buf[_p : _p + _n]",
            "    r.pos = _p + _n",
        ]

    @staticmethod
    def struct_name(fmt: str) -> str:
        return f"_P_{fmt.replace('?', 'B_')}"

    def inline_default(self, f: Field) -> str:
        shared = self.shared_default(f)
        if shared is not None:
            return shared
        d = self.py_default(f)
        if d == "dataclasses.field(default_factory=list)":
            return "[]"
        if d.startswith("dataclasses.field(default_factory="):
            return d[len("dataclasses.field(default_factory=") : -1] + "()"
        return d

    # --- encode -----------------------------------------------------------------
    def write_one(self, f: Field, elem: str, val: str, flex: str, nullable: str) -> str:
        if elem in PRIMITIVES:
            if elem in VARIABLE:
                if nullable == "False":
                    return f"w.{elem}({val}, {flex})"
                return f"w.nullable_{elem}({val}, {flex})"
            if elem == "records":
                return f"w.records({val}, {flex})"
            return f"w.{elem}({val})"
        return f"{val}.encode(w, version)"

    def write_lines(self, f: Field, val: str, indent: str) -> list[str]:
        flex = self.flex_expr(f)
        if f.is_array:
            ev = f"_{f.py}_item"
            item = self.write_one(f, f.elem, ev, flex, "False")
            length = [f"{indent}    w.array_length(len({val}), {flex})"]
            if flex != "False":
                # A compact length under 127 is one byte: written inline.
                length = [
                    f"{indent}    if {flex} and len({val}) < 127:",
                    f"{indent}        w.buf.append(len({val}) + 1)",
                    f"{indent}    else:",
                    f"{indent}        w.array_length(len({val}), {flex})",
                ]
            return [
                f"{indent}if {val} is None:",
                f"{indent}    w.array_length(-1, {flex})",
                f"{indent}else:",
                *length,
                f"{indent}    for {ev} in {val}:",
                f"{indent}        {item}",
            ]
        if f.is_struct and f.nullable and overlaps(f.nullable, self.lo, self.hi):
            return [
                f"{indent}if {val} is None:",
                f"{indent}    w.int8(-1)",
                f"{indent}else:",
                f"{indent}    w.int8(1)",
                f"{indent}    {val}.encode(w, version)",
            ]
        if f.is_struct:
            return [f"{indent}{val}.encode(w, version)"]
        nullable = self.nullable_now(f)
        if f.elem in VARIABLE and nullable != "False":
            # Null (the usual value of optional strings) written inline: compact 0, else length -1.
            classic = "b'\\xff\\xff'" if f.elem == "string" else "b'\\xff\\xff\\xff\\xff'"
            null = f"b'\\x00' if {flex} else {classic}" if flex != "False" else classic
            return [
                f"{indent}if {val} is None:",
                f"{indent}    w.buf += {null}",
                f"{indent}else:",
                f"{indent}    {self.write_one(f, f.elem, val, flex, nullable)}",
            ]
        return [f"{indent}{self.write_one(f, f.elem, val, flex, nullable)}"]

    def fixed_runs(self, s: Struct) -> list[tuple[str, list[Field]]]:
        """Untagged fields in order, grouped: runs of fixed-width fields under one version test.

        Each item is (version test, fields); a run of several fields is packed at once.
        """
        runs: list[tuple[str, list[Field]]] = []
        for f in s.fields:
            if f.tagged is not None:
                continue
            c = cond(f.versions, self.lo, self.hi)
            fixed = not f.is_array and f.elem in FIXED
            if fixed and runs and runs[-1][0] == c and all(not g.is_array and g.elem in FIXED for g in runs[-1][1]):
                runs[-1][1].append(f)
            else:
                runs.append((c, [f]))
        return runs

    def pack_line(self, fields: list[Field], indent: str) -> str:
        fmt = "".join(FIXED[f.elem] for f in fields)
        self.formats.add(fmt)
        values = ", ".join(f"self.{f.py}" for f in fields)
        return f"{indent}w.buf += {self.struct_name(fmt)}.pack({values})"

    def gen_encode(self, s: Struct) -> list[str]:
        L = ["    def encode(self, w: Writer, version: int) -> None:"]
        L.append(f'        """Write this {s.name} as ``version`` (in [{self.lo}, {self.hi}])."""')
        if self.flexible:
            L.append(f"        flexible = {cond(self.flexible, self.lo, self.hi)}")
        else:
            L.append("        flexible = False")
        for c, fields in self.fixed_runs(s):
            indent = "        "
            if c != "True":
                L.append(f"        if {c}:")
                indent = "            "
            if not fields[0].is_array and fields[0].elem in FIXED:
                L.append(self.pack_line(fields, indent))
            else:
                L += self.write_lines(fields[0], f"self.{fields[0].py}", indent)
        tagged = sorted((f for f in s.fields if f.tagged is not None), key=lambda f: f.tag or 0)
        if self.flexible:
            L.append("        if flexible:")
            if not tagged:
                L.append("            w.buf.append(0)  # no tagged fields")
            else:
                L.append("            _tagged: list[tuple[int, bytes]] = []")
                for f in tagged:
                    c = cond(f.tagged, self.lo, self.hi) if f.tagged else "True"
                    default = self.inline_default(f)
                    differs = f"self.{f.py} != {default}"
                    if self.shared_default(f) is not None:
                        differs = f"self.{f.py} is not {default} and {differs}"
                    L.append(f"            if {c} and {differs}:")
                    L.append("                _outer, w = w, Writer()")
                    L += self.write_lines(f, f"self.{f.py}", "                ")
                    L.append(f"                _tagged.append(({f.tag}, w.getvalue()))")
                    L.append("                w = _outer")
                L.append("            if not _tagged:")
                L.append("                w.buf.append(0)")
                L.append("            else:")
                L.append("                w.uvarint(len(_tagged))")
                L.append("                for _tag, _data in _tagged:")
                L.append("                    w.uvarint(_tag)")
                L.append("                    w.uvarint(len(_data))")
                L.append("                    w.raw(_data)")
        return L

    # --- class ------------------------------------------------------------------
    def gen_struct(self, s: Struct, top: bool) -> list[str]:
        L = ["", "", "@dataclasses.dataclass(frozen=True, slots=True, init=False)", f"class {s.name}:"]
        doc = str(self.spec.get("about", "")) if top else s.about
        L.append(f'    """{doc or s.name + " (Kafka " + self.name + ")."}"""')
        L.append("")
        if top and "apiKey" in self.spec:
            L.append(f"    API_KEY: ClassVar[int] = {self.spec['apiKey']}")
        L.append(f"    MIN_VERSION: ClassVar[int] = {self.lo}")
        L.append(f"    MAX_VERSION: ClassVar[int] = {self.hi}")
        if top and self.flexible:
            L.append(f"    FLEXIBLE_FROM: ClassVar[int] = {self.flexible[0]}")
        elif top:
            L.append(f"    FLEXIBLE_FROM: ClassVar[int] = {INF}")
        meta = []
        for f in s.fields:
            n = f.nullable if f.nullable and overlaps(f.nullable, self.lo, self.hi) else None
            meta.append(
                f"        ({f.py!r}, {f.type!r}, {f.versions[0]}, {min(f.versions[1], self.hi)}, "
                f"{n[0] if n else -1}, {min(n[1], self.hi) if n else -1}, "
                f"{f.tag if f.tag is not None else -1}),"
            )
        L.append("    _FIELDS: ClassVar[tuple[tuple[str, str, int, int, int, int, int], ...]] = (")
        L += meta
        L.append("    )")
        L.append("")
        for f in s.fields:
            L.append(f"    {f.py}: {self.py_type(f)} = {self.py_default(f)}")
            about = f.about.replace('"""', "'''").strip()
            if about:
                L.append(f'    """{about}"""')
        L.append("")
        L += self.gen_init(s)
        L.append("")
        L += self.gen_decode(s)
        L.append("")
        L += self.gen_encode(s)
        return L

    def gen_init(self, s: Struct) -> list[str]:
        """The dataclass ``__init__`` made cheap (see the module docstring); same signature."""
        params, body = [], []
        for f in s.fields:
            d = self.py_default(f)
            shared = self.shared_default(f)
            value = f.py
            if shared is not None:
                d = shared
            elif d.startswith("dataclasses.field(default_factory="):
                factory = d[len("dataclasses.field(default_factory=") : -1]
                d = "_NEW"
                fresh = "[]" if factory == "list" else f"{factory}()"
                value = f"{fresh} if {f.py} is _NEW else {f.py}"
            params.append(f"{f.py}: {self.py_type(f)} = {d}")
            body.append(f"        {self.setter(s, f)}(self, {value})")
        if not params:
            return ["    def __init__(self) -> None:", "        pass"]
        L = ["    def __init__(", "        self,"]
        L += [f"        {p}," for p in params]
        L.append("    ) -> None:")
        return L + body

    @staticmethod
    def setter(s: Struct, f: Field) -> str:
        """Module-level name of the slot's ``__set__`` (bypasses the frozen ``__setattr__``)."""
        return f"_S_{s.name}_{f.py}"

    def module(self) -> str:
        L = [
            f'"""Kafka {self.name}, versions {self.lo}-{self.hi}.',
            "",
            "Generated by tools/gen_protocol.py from Kafka's JSON message definitions; do not edit.",
            '"""',
            "",
            "from __future__ import annotations",
            "",
            "import dataclasses",
            "import struct  # noqa: F401",
            "import uuid  # noqa: F401",
            "from typing import Any, ClassVar  # noqa: F401",
            "",
            "from seaway.protocol.primitives import ZERO_UUID, Reader, RecordsValue, Writer  # noqa: F401",
            "",
            f"__all__ = {sorted(self.structs)!r}",
            "",
            "_NEW: Any = object()  # stands for a fresh default_factory value in __init__ signatures",
        ]
        # Nested structs first so default factories resolve at class creation time.
        order = [n for n in self.structs if n != self.name] + [self.name]
        shared = {d for st in self.structs.values() for f in st.fields if (d := self.shared_default(f))}
        body: list[str] = []
        for n in order:
            body += self.gen_struct(self.structs[n], top=(n == self.name))
            fields = self.structs[n].fields
            if fields:
                body += ["", ""]
                body += [f"{self.setter(self.structs[n], f)} = {n}.__dict__[{f.py!r}].__set__" for f in fields]
            if f"_{n}_DEFAULT" in shared:
                body += ["", "", f"_{n}_DEFAULT = {n}()"]
        L += [f"{self.struct_name(fmt)} = struct.Struct('>{fmt}')" for fmt in sorted(self.formats)]
        return "\n".join(L + body) + "\n"


def module_name(msg: str) -> str:
    return snake(msg)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--spec-dir", type=Path, default=Path("../shared/kafka-protocol"))
    ap.add_argument("--out", type=Path, default=Path("protocol/seaway/protocol/messages"))
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    written = []
    jobs: list[tuple[str, tuple[int, int]]] = []
    for api, rng in SERVED.items():
        jobs += [(api + "Request", rng), (api + "Response", rng)]
    jobs += list(HEADERS.items()) + list(EMBEDDED.items())
    index = []
    for msg, (lo, hi) in jobs:
        spec = json.loads(strip_comments((args.spec_dir / f"{msg}.json").read_text()))
        valid = parse_versions(str(spec["validVersions"]))
        assert valid is not None and valid[0] <= lo and hi <= valid[1], (msg, valid, lo, hi)
        gen = Generator(spec, lo, hi)
        mod = module_name(msg)
        (args.out / f"{mod}.py").write_text(gen.module())
        written.append(mod)
        if "apiKey" in spec:
            index.append((int(spec["apiKey"]), spec["type"], msg, mod))
    lines = [
        '"""Generated Kafka protocol messages, one module per message; see tools/gen_protocol.py.',
        "",
        "``REQUESTS`` and ``RESPONSES`` map an API key to its message class.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import Any",
        "",
    ]
    for _key, _kind, msg, mod in sorted(index):
        lines.append(f"from seaway.protocol.messages.{mod} import {msg}")
    lines.append("")
    req = ", ".join(f"{k}: {m}" for k, t, m, _ in sorted(index) if t == "request")
    resp = ", ".join(f"{k}: {m}" for k, t, m, _ in sorted(index) if t == "response")
    lines.append(f"REQUESTS: dict[int, Any] = {{{req}}}")
    lines.append(f"RESPONSES: dict[int, Any] = {{{resp}}}")
    names = [*sorted(m for _, _, m, _ in index), "REQUESTS", "RESPONSES"]
    lines.append(f"__all__ = {names!r}")
    (args.out / "__init__.py").write_text("\n".join(lines) + "\n")
    print(f"wrote {len(written)} modules to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
