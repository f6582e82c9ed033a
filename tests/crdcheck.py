"""Offline validation of Kubernetes objects against real CustomResourceDefinitions.

The checks follow what kube-apiserver (k8s.io/apiextensions-apiserver) does when a
custom resource is created, in the same order:

1. unknown fields are pruned; they are reported here, as ``kubectl
   --validate=strict`` and ``crossplane beta validate`` report them, and the rest of
   the checks see the pruned object, like the API server's validation does;
2. nulls of non-nullable fields without a default are dropped, then structural
   defaults are applied;
3. the OpenAPI v3 schema (kube-openapi), embedded-resource and
   ``x-kubernetes-list-type`` invariants are checked;
4. CEL ``x-kubernetes-validations`` run, unless step 3 produced a "blocking" error
   (type, required, enum, maxLength, maxItems/maxProperties): the API server then
   skips CEL and says so, and so does this module.

Error strings are rendered like ``field.Error.Error()`` in k8s.io/apimachinery so
they read like kubectl output, e.g. ``spec.forProvider: Required value``.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import functools
import ipaddress
import itertools
import json
import math
import operator
import os
import re
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, cast

import celpy
import lark
import re2
import yaml
from celpy import celtypes
from celpy.adapter import json_to_cel
from celpy.evaluation import CELEvalError, Context, Evaluator

__all__ = ["CrdCatalog", "CrdError", "default_catalog", "shared_crds_dir"]

SHARED_CRDS_ENV: Final = "SHARED_CRDS_DIR"

JSON = Any


class CrdError(ValueError):
    """A definition could not be loaded, e.g. a CEL rule that does not compile."""


def shared_crds_dir() -> Path | None:
    """The shared CRD folder (``$SHARED_CRDS_DIR`` or ``<repo>/../shared/crds``)."""
    override = os.environ.get(SHARED_CRDS_ENV)
    candidate = (
        Path(override) if override else Path(__file__).resolve().parents[2] / "shared" / "crds"
    )
    return candidate if candidate.is_dir() else None


@functools.cache
def default_catalog() -> CrdCatalog:
    """The catalog of the shared CRD folder, loaded once per process."""
    directory = shared_crds_dir()
    if directory is None:
        raise FileNotFoundError(
            f"shared CRD folder not found (set ${SHARED_CRDS_ENV} or add ../shared/crds)"
        )
    return CrdCatalog.load(directory)


# --------------------------------------------------------------------------
# field.Error rendering


class _Omit:
    """Marks an error whose value kubectl does not print (field.OmitValueType)."""


_OMIT: Final = _Omit()
_MISSING: Final = object()

REQUIRED: Final = "Required value"
INVALID: Final = "Invalid value"
TYPE_INVALID: Final = "Invalid value "  # rendered like INVALID, but blocks CEL
NOT_SUPPORTED: Final = "Unsupported value"
DUPLICATE: Final = "Duplicate value"
FORBIDDEN: Final = "Forbidden"
TOO_LONG: Final = "Too long"
TOO_MANY: Final = "Too many"

# strategy.go hasBlockingErr: with any of these the API server does not run CEL.
_BLOCKING: Final = frozenset({REQUIRED, NOT_SUPPORTED, TOO_LONG, TOO_MANY, TYPE_INVALID})
# field.Error.ErrorBody never prints the value of these.
_NO_VALUE: Final = frozenset({REQUIRED, FORBIDDEN, TOO_LONG})


def _go_number(value: float) -> str:
    if math.isfinite(value) and value == int(value) and abs(value) < 1e21:
        return str(int(value))
    return repr(value)


def _go_value(value: JSON) -> str:
    """Approximates Go's ``%v``/``%q``/``%#v`` as field.Error uses them."""
    if value is None:
        return '"null"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_number(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        inner = ", ".join(f"{json.dumps(str(k))}:{_go_value(v)}" for k, v in sorted(value.items()))
        return f"map[string]interface {{}}{{{inner}}}"
    return json.dumps(value, sort_keys=True, default=str)


@dataclass(frozen=True, slots=True)
class _FieldError:
    kind: str
    path: str
    value: JSON = _OMIT
    detail: str = ""

    def __str__(self) -> str:
        body = self.kind.strip()
        if self.kind not in _NO_VALUE and self.value is not _OMIT:
            body += ": " + _go_value(self.value)
        if self.detail:
            body += ": " + self.detail
        return f"{self.path or '<nil>'}: {body}"


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


# --------------------------------------------------------------------------
# Compiled schema


@dataclass(slots=True, eq=False)
class _Rule:
    rule: str
    message: str
    program: celpy.Runner | None  # None: transition rule, never run without oldSelf
    message_program: celpy.Runner | None
    field_path: str
    reason: str

    @property
    def error_string(self) -> str:
        return self.message or self.rule.strip()


@dataclass(slots=True, eq=False)
class _Node:
    type: str = ""
    nullable: bool = False
    properties: dict[str, _Node] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    additional: _Node | None = None
    additional_any: bool = False
    items: _Node | None = None
    preserve_unknown: bool = False
    int_or_string: bool = False
    embedded: bool = False
    enum: tuple[JSON, ...] | None = None
    pattern: str | None = None
    pattern_re: Any = None
    fmt: str = ""
    min_length: int | None = None
    max_length: int | None = None
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    exclusive_maximum: bool = False
    multiple_of: float | None = None
    min_items: int | None = None
    max_items: int | None = None
    min_properties: int | None = None
    max_properties: int | None = None
    unique_items: bool = False
    list_type: str = ""
    list_map_keys: tuple[str, ...] = ()
    default: JSON = _MISSING
    all_of: tuple[_Node, ...] = ()
    any_of: tuple[_Node, ...] = ()
    one_of: tuple[_Node, ...] = ()
    not_: _Node | None = None
    rules: tuple[_Rule, ...] = ()
    # Subtree flags let the default, list-type and CEL passes skip most of a
    # schema: provider CRDs are large and rules sit on a handful of nodes.
    has_defaults: bool = False
    has_list_types: bool = False
    has_rules: bool = False

    def child(self, key: str) -> _Node | None:
        found = self.properties.get(key)
        return found if found is not None else self.additional


def _json_equal(a: JSON, b: JSON) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and bool(a == b)


def _copy(value: JSON) -> JSON:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_copy(v) for v in value]
    return value


class _SchemaCompiler:
    """Turns openAPIV3Schema dicts into _Node trees, compiling CEL once per text."""

    def __init__(self) -> None:
        self._programs: dict[str, tuple[celpy.Runner, bool]] = {}

    def compile(self, raw: Mapping[str, JSON], where: str) -> _Node:
        return self._node(raw, where, "")

    def _program(self, text: str, where: str) -> tuple[celpy.Runner, bool]:
        cached = self._programs.get(text)
        if cached is None:
            cached = _compile_cel(text, where)
            self._programs[text] = cached
        return cached

    def _node(self, raw: Mapping[str, JSON], where: str, path: str) -> _Node:
        if not isinstance(raw, Mapping):
            raise CrdError(f"{where}: {path or '<root>'}: schema is not an object")
        node = _Node(
            type=str(raw.get("type") or ""),
            nullable=bool(raw.get("nullable", False)),
            required=tuple(raw.get("required") or ()),
            preserve_unknown=bool(raw.get("x-kubernetes-preserve-unknown-fields")),
            int_or_string=bool(raw.get("x-kubernetes-int-or-string")),
            embedded=bool(raw.get("x-kubernetes-embedded-resource")),
            fmt=str(raw.get("format") or ""),
            min_length=raw.get("minLength"),
            max_length=raw.get("maxLength"),
            minimum=raw.get("minimum"),
            maximum=raw.get("maximum"),
            exclusive_minimum=bool(raw.get("exclusiveMinimum", False)),
            exclusive_maximum=bool(raw.get("exclusiveMaximum", False)),
            multiple_of=raw.get("multipleOf"),
            min_items=raw.get("minItems"),
            max_items=raw.get("maxItems"),
            min_properties=raw.get("minProperties"),
            max_properties=raw.get("maxProperties"),
            unique_items=bool(raw.get("uniqueItems", False)),
            list_type=str(raw.get("x-kubernetes-list-type") or ""),
            list_map_keys=tuple(raw.get("x-kubernetes-list-map-keys") or ()),
        )
        if "enum" in raw and raw["enum"] is not None:
            node.enum = tuple(raw["enum"])
        if "default" in raw:
            node.default = raw["default"]
        if raw.get("pattern") is not None:
            node.pattern = str(raw["pattern"])
            try:
                node.pattern_re = re2.compile(node.pattern)
            except re2.error as exc:
                raise CrdError(f"{where}: {path}: bad pattern {node.pattern!r}: {exc}") from exc
        for key, sub in (raw.get("properties") or {}).items():
            node.properties[key] = self._node(sub, where, _child(path, key))
        extra = raw.get("additionalProperties")
        if isinstance(extra, Mapping):
            node.additional = self._node(extra, where, _child(path, "*"))
        elif extra is True:
            node.additional_any = True
        items = raw.get("items")
        if isinstance(items, Mapping):
            node.items = self._node(items, where, path + "[*]")
        node.all_of = tuple(self._node(s, where, path) for s in raw.get("allOf") or ())
        node.any_of = tuple(self._node(s, where, path) for s in raw.get("anyOf") or ())
        node.one_of = tuple(self._node(s, where, path) for s in raw.get("oneOf") or ())
        if isinstance(raw.get("not"), Mapping):
            node.not_ = self._node(raw["not"], where, path)
        node.rules = tuple(
            self._rule(r, where, path) for r in raw.get("x-kubernetes-validations") or ()
        )
        children = [*node.properties.values(), node.additional, node.items]
        kids = [c for c in children if c is not None]
        node.has_defaults = any(k.default is not _MISSING or k.has_defaults for k in kids)
        node.has_list_types = bool(node.list_type) or any(k.has_list_types for k in kids)
        node.has_rules = bool(node.rules) or any(k.has_rules for k in kids)
        return node

    def _rule(self, raw: Mapping[str, JSON], where: str, path: str) -> _Rule:
        text = str(raw.get("rule") or "")
        label = f"{where}: {path or '<root>'}: rule {text!r}"
        program, uses_old_self = self._program(text, label)
        message_program = None
        if raw.get("messageExpression"):
            message_program, _ = self._program(str(raw["messageExpression"]), label)
        return _Rule(
            rule=text,
            message=str(raw.get("message") or "").strip(),
            program=None if uses_old_self else program,
            message_program=message_program,
            field_path=_normalize_field_path(str(raw.get("fieldPath") or ""), label),
            reason=str(raw.get("reason") or ""),
        )


_FIELD_PATH_TOKEN: Final = re.compile(r"\.([^.\[\]]+)|\['((?:[^'\\]|\\.)*)'\]")
_UNQUOTE: Final = re.compile(r"\\(.)")


def _normalize_field_path(text: str, label: str) -> str:
    """Renders a rule's fieldPath the way cel.ValidFieldPath + field.Path do."""
    out = ""
    pos = 0
    while pos < len(text):
        match = _FIELD_PATH_TOKEN.match(text, pos)
        if match is None:
            raise CrdError(f"{label}: invalid fieldPath {text!r}")
        if match.group(1) is not None:
            out = _child(out, match.group(1))
        else:
            out += "[" + _UNQUOTE.sub(r"\1", match.group(2)) + "]"
        pos = match.end()
    return out


# --------------------------------------------------------------------------
# CEL (cel-python with the Kubernetes semantics the shared CRDs rely on)

# CEL reserved words are reachable as __word__ (k8s.io/apiserver/pkg/cel escaping).
_CEL_RESERVED: Final = frozenset(
    [
        *("true", "false", "null", "in", "as", "break", "const", "continue", "else"),
        *("for", "function", "if", "import", "let", "loop", "package", "namespace"),
        *("return", "var", "void", "while"),
    ]
)
_ESCAPE_PART: Final = re.compile(r"__|[-./]|[^a-zA-Z0-9_]")
_ESCAPES: Final = {"__": "__underscores__", ".": "__dot__", "-": "__dash__", "/": "__slash__"}


def _escape(name: str) -> str | None:
    """Property name as CEL sees it, or None when Kubernetes hides the field."""
    if not name or name[0].isdigit():
        return None
    if name in _CEL_RESERVED:
        return f"__{name}__"
    hidden = False

    def swap(match: re.Match[str]) -> str:
        nonlocal hidden
        part = match.group(0)
        if part in _ESCAPES:
            return _ESCAPES[part]
        hidden = True
        return ""

    escaped = _ESCAPE_PART.sub(swap, name)
    return None if hidden else escaped


_GO_DURATION: Final = re.compile(r"([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)")
_GO_UNITS: Final = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}


def _parse_go_duration(text: str) -> datetime.timedelta | None:
    """Go's time.ParseDuration grammar; celpy's own parser accepts "1d" and rejects "µs"."""
    body = text[1:] if text[:1] in "+-" else text
    if body == "0":
        return datetime.timedelta(0)
    if not body:
        return None
    total = 0.0
    pos = 0
    while pos < len(body):
        match = _GO_DURATION.match(body, pos)
        if match is None or match.group(1) in ("", "."):
            return None
        total += float(match.group(1)) * _GO_UNITS[match.group(2)]
        pos = match.end()
    return datetime.timedelta(seconds=-total if text.startswith("-") else total)


def _err(message: str) -> CELEvalError:
    return CELEvalError(message, ValueError, None)


def _cel_duration(value: celtypes.Value) -> celtypes.Value | CELEvalError:
    if isinstance(value, datetime.timedelta):
        return celtypes.DurationType(value)
    if not isinstance(value, str):
        raise TypeError(f"duration({type(value).__name__})")
    parsed = _parse_go_duration(str(value))
    if parsed is None:
        return _err(f'time: invalid duration "{value}"')
    return celtypes.DurationType(parsed)


def _is_number(value: object) -> bool:
    return isinstance(value, (celtypes.IntType, celtypes.UintType, celtypes.DoubleType))


def _plain_number(value: object) -> int | float:
    return float(value) if isinstance(value, float) else int(cast(int, value))


def _heterogeneous(
    base: Callable[[Any, Any], Any], op: Callable[[Any, Any], bool], mismatch: bool | None
) -> Callable[[Any, Any], Any]:
    """Kubernetes enables cel-go's cross-type numeric comparisons and heterogeneous
    equality (1 == 1.0 is true, 'a' == 1 is false); celpy raises "no such overload"."""

    def compare(a: Any, b: Any) -> Any:
        if isinstance(a, CELEvalError):
            return a
        if isinstance(b, CELEvalError):
            return b
        if _is_number(a) and _is_number(b) and type(a) is not type(b):
            return celtypes.BoolType(op(_plain_number(a), _plain_number(b)))
        try:
            return base(a, b)
        except TypeError:
            if mismatch is None:
                raise
            return celtypes.BoolType(mismatch)

    return compare


def _add(a: Any, b: Any) -> Any:
    # celpy's `_+_` is operator.add, which hands back plain str/list for
    # string and list concatenation; methods such as contains() then fail.
    result = operator.add(a, b)
    if isinstance(result, str) and not isinstance(result, celtypes.StringType):
        return celtypes.StringType(result)
    if isinstance(result, list) and not isinstance(result, celtypes.ListType):
        return celtypes.ListType(result)
    return result


def _ascii_case(value: str, upper: bool) -> celtypes.StringType:
    table = str.maketrans(
        "abcdefghijklmnopqrstuvwxyz" if upper else "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
        "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if upper else "abcdefghijklmnopqrstuvwxyz",
    )
    return celtypes.StringType(str(value).translate(table))


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected string, got {type(value).__name__}")
    return str(value)


def _replace(s: Any, old: Any, new: Any, n: Any = -1) -> celtypes.StringType:
    return celtypes.StringType(_string(s).replace(_string(old), _string(new), int(n)))


def _split(s: Any, sep: Any, n: Any = -1) -> celtypes.ListType:
    limit = int(n)
    if limit == 0:
        return celtypes.ListType([])
    parts = _string(s).split(_string(sep), limit - 1 if limit > 0 else -1)
    return celtypes.ListType([celtypes.StringType(p) for p in parts])


def _join(items: Any, sep: Any = "") -> celtypes.StringType:
    return celtypes.StringType(_string(sep).join(_string(i) for i in items))


def _index_of(target: Any, item: Any, offset: Any = 0) -> celtypes.IntType:
    if isinstance(target, list):
        for i, x in enumerate(target):
            if _json_equal(x, item):
                return celtypes.IntType(i)
        return celtypes.IntType(-1)
    text, start = _string(target), int(offset)
    if not 0 <= start <= len(text):
        raise ValueError(f"index out of range: {start}")
    return celtypes.IntType(text.find(_string(item), start))


def _last_index_of(target: Any, item: Any) -> celtypes.IntType:
    if isinstance(target, list):
        for i in range(len(target) - 1, -1, -1):
            if _json_equal(target[i], item):
                return celtypes.IntType(i)
        return celtypes.IntType(-1)
    return celtypes.IntType(_string(target).rfind(_string(item)))


def _substring(s: Any, start: Any, end: Any = None) -> celtypes.StringType:
    text = _string(s)
    lo, hi = int(start), len(text) if end is None else int(end)
    if not 0 <= lo <= hi <= len(text):
        raise ValueError(f"index out of range: {lo}..{hi}")
    return celtypes.StringType(text[lo:hi])


def _char_at(s: Any, index: Any) -> celtypes.StringType:
    text, i = _string(s), int(index)
    if not 0 <= i <= len(text):
        raise ValueError(f"index out of range: {i}")
    return celtypes.StringType(text[i : i + 1])


def _find(s: Any, pattern: Any) -> celtypes.StringType:
    match = re2.search(_string(pattern), _string(s))
    return celtypes.StringType(match.group(0) if match else "")


def _find_all(s: Any, pattern: Any, n: Any = -1) -> celtypes.ListType:
    found = [m.group(0) for m in re2.finditer(_string(pattern), _string(s))]
    limit = int(n)
    return celtypes.ListType(
        [celtypes.StringType(x) for x in (found if limit < 0 else found[:limit])]
    )


def _is_sorted(items: Any) -> celtypes.BoolType:
    return celtypes.BoolType(all(a <= b for a, b in itertools.pairwise(items)))


def _sum(items: Any) -> celtypes.Value:
    values = list(items)
    if not values:
        return celtypes.IntType(0)
    total = values[0]
    for v in values[1:]:
        total = total + v
    return cast(celtypes.Value, total)


# Extensions from the Kubernetes CEL environment (strings, lists, regex
# libraries) beyond what celpy implements, plus the operator semantics above.
# Anything else is rejected when the rule is loaded, never at evaluation time.
_EXTENSIONS: Final[dict[str, Callable[..., Any]]] = {
    "duration": _cel_duration,
    "_+_": _add,
    "_==_": _heterogeneous(celpy.evaluation.bool_eq, lambda a, b: a == b, False),
    "_!=_": _heterogeneous(celpy.evaluation.bool_ne, lambda a, b: a != b, True),
    "_<_": _heterogeneous(celpy.evaluation.bool_lt, lambda a, b: a < b, None),
    "_<=_": _heterogeneous(celpy.evaluation.bool_le, lambda a, b: a <= b, None),
    "_>_": _heterogeneous(celpy.evaluation.bool_gt, lambda a, b: a > b, None),
    "_>=_": _heterogeneous(celpy.evaluation.bool_ge, lambda a, b: a >= b, None),
    "lowerAscii": lambda s: _ascii_case(_string(s), upper=False),
    "upperAscii": lambda s: _ascii_case(_string(s), upper=True),
    "trim": lambda s: celtypes.StringType(_string(s).strip()),
    "replace": _replace,
    "split": _split,
    "join": _join,
    "indexOf": _index_of,
    "lastIndexOf": _last_index_of,
    "substring": _substring,
    "charAt": _char_at,
    "find": _find,
    "findAll": _find_all,
    "isSorted": _is_sorted,
    "sum": _sum,
}

_MACROS: Final = frozenset({"all", "exists", "exists_one", "map", "filter"})
_GLOBAL_FUNCTIONS: Final = frozenset(
    {"has", "dyn", "size", "int", "uint", "double", "string", "bool", "bytes"}
    | {"duration", "timestamp", "type", "matches", "contains", "startsWith"}
    | {"endsWith"}
)
_METHODS: Final = (
    frozenset({"size", "contains", "startsWith", "endsWith", "matches"})
    | frozenset(
        {"getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear", "getFullYear"}
        | {"getHours", "getMilliseconds", "getMinutes", "getMonth", "getSeconds"}
    )
    | frozenset(k for k in _EXTENSIONS if not k.startswith("_") and k != "duration")
)
_TYPE_NAMES: Final = frozenset(
    {"int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type"}
    | {"type", "google"}
)


_Tree = lark.Tree[Any]


def _unwrap(tree: _Tree) -> _Tree:
    """Skips the single-child precedence levels celpy's grammar wraps around a term."""
    while len(tree.children) == 1 and isinstance(tree.children[0], lark.Tree):
        if tree.data in ("member_dot", "member_dot_arg", "ident_arg", "list_lit"):
            break
        tree = tree.children[0]
    return tree


def _token(tree: _Tree, index: int) -> str:
    return str(cast(lark.Token, tree.children[index]).value)


def _check_cel_tree(tree: _Tree, label: str) -> bool:
    """Rejects what the Kubernetes CEL compiler would reject and celpy would only
    notice (or silently tolerate) at evaluation time. Returns "uses oldSelf"."""
    subtrees = list(tree.iter_subtrees())
    bound: set[str] = set()
    for sub in subtrees:
        if sub.data == "ident_arg":
            name = _token(sub, 0)
            if name not in _GLOBAL_FUNCTIONS:
                raise CrdError(f"{label}: undeclared function {name!r}")
            if name == "has":
                args = cast(_Tree, sub.children[1]).children if len(sub.children) > 1 else []
                if len(args) != 1 or _unwrap(cast(_Tree, args[0])).data != "member_dot":
                    raise CrdError(f"{label}: invalid argument to has() macro")
        elif sub.data == "member_dot_arg":
            name = _token(sub, 1)
            if name not in _MACROS and name not in _METHODS:
                raise CrdError(f"{label}: undeclared function {name!r}")
            if name in _MACROS:
                args = cast(_Tree, sub.children[2]).children if len(sub.children) > 2 else []
                first = _unwrap(cast(_Tree, args[0])) if args else None
                arity_ok = len(args) == 2 or (len(args) == 3 and name == "map")
                if first is None or first.data != "ident" or not arity_ok:
                    raise CrdError(f"{label}: invalid {name}() macro")
                bound.add(_token(first, 0))
        elif sub.data in ("member_object", "dot_ident_arg"):
            raise CrdError(f"{label}: unsupported CEL construct {sub.data}")
    uses_old_self = False
    for sub in subtrees:
        if sub.data in ("ident", "dot_ident"):
            name = _token(sub, 0)
            if name == "oldSelf":
                uses_old_self = True
            elif name != "self" and name not in bound and name not in _TYPE_NAMES:
                raise CrdError(f"{label}: undeclared reference to {name!r}")
    return uses_old_self


class _K8sEvaluator(Evaluator):
    """celpy's evaluator with has() as CEL (and Kubernetes) define it."""

    def sub_evaluator(self, ast: _Tree) -> Evaluator:
        return _K8sEvaluator(ast, activation=self.activation)

    def macro_has_eval(self, exprlist: _Tree) -> celtypes.BoolType:
        # celpy answers False whenever evaluating `e.f` fails, so has(a.b.c) with
        # `a.b` absent is False. cel-go evaluates `e` normally and only tests the
        # presence of `f`, so an absent `a.b` is a "no such key" error there.
        member = _unwrap(cast(_Tree, exprlist.children[0]))
        target = self.visit(cast(_Tree, member.children[0]))
        name = _token(member, 1)
        if isinstance(target, CELEvalError):
            return cast(celtypes.BoolType, target)
        if isinstance(target, celtypes.MapType):
            return celtypes.BoolType(celtypes.StringType(name) in target)
        return cast(celtypes.BoolType, _err(f"invalid type for field selection: {name}"))


class _Runner(celpy.InterpretedRunner):
    def evaluate(self, context: Context) -> celtypes.Value:
        return _K8sEvaluator(ast=self.ast, activation=self.new_activation()).evaluate(context)


@functools.cache
def _cel_environment() -> celpy.Environment:
    return celpy.Environment(runner_class=_Runner)


def _compile_cel(text: str, label: str) -> tuple[celpy.Runner, bool]:
    if not text.strip():
        raise CrdError(f"{label}: empty rule")
    env = _cel_environment()
    try:
        ast = env.compile(text)
    except Exception as exc:  # celpy raises CELParseError and lark errors
        raise CrdError(f"{label}: does not compile: {exc}") from exc
    uses_old_self = _check_cel_tree(ast, label)
    return env.program(ast, functions=_EXTENSIONS), uses_old_self


def _generic_cel(value: JSON) -> celtypes.Value:
    if isinstance(value, dict):
        return celtypes.MapType({celtypes.StringType(k): _generic_cel(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return celtypes.ListType([_generic_cel(v) for v in value])
    return json_to_cel(value)


def _string_cel(node: _Node, value: str) -> celtypes.Value:
    # UnstructuredToVal (k8s.io/apiserver/pkg/cel/common/values.go) types
    # some string formats; a value that does not parse has already failed the
    # format check, which blocks CEL, so the fallbacks here are never relied on.
    try:
        if node.fmt == "duration":
            parsed = _parse_go_duration(value)
            if parsed is not None:
                return celtypes.DurationType(parsed)
        elif node.fmt in ("date-time", "datetime"):
            return celtypes.TimestampType(value)
        elif node.fmt == "date":
            return celtypes.TimestampType(f"{value}T00:00:00Z")
        elif node.fmt == "byte":
            return celtypes.BytesType(base64.b64decode(value, validate=True))
    except (ValueError, binascii.Error):
        pass
    return celtypes.StringType(value)


def _to_cel(node: _Node | None, value: JSON, resource_root: bool = False) -> celtypes.Value:
    if value is None:
        return None
    if node is None:
        return _generic_cel(value)
    if isinstance(value, bool):
        return celtypes.BoolType(value)
    if isinstance(value, (int, float)):
        if node.type == "number":
            return celtypes.DoubleType(value)
        if float(value).is_integer():
            return celtypes.IntType(int(value))
        return celtypes.DoubleType(value)
    if isinstance(value, str):
        return _string_cel(node, value)
    if isinstance(value, (list, tuple)):
        return celtypes.ListType([_to_cel(node.items, v) for v in value])
    if not isinstance(value, dict):
        return _generic_cel(value)
    if node.additional is not None and not node.properties:
        return celtypes.MapType(
            {celtypes.StringType(k): _to_cel(node.additional, v) for k, v in value.items()}
        )
    out: dict[celtypes.StringType, celtypes.Value] = {}
    for key, item in value.items():
        name = _escape(key)
        if name is None:
            continue
        if resource_root and key == "metadata" and isinstance(item, dict):
            # Only name and generateName of ObjectMeta are visible to rules.
            meta = {k: item[k] for k in ("name", "generateName") if k in item}
            out[celtypes.StringType(name)] = _generic_cel(meta)
        else:
            out[celtypes.StringType(name)] = _to_cel(node.properties.get(key), item)
    return celtypes.MapType(out)


def _cel_error_text(error: CELEvalError) -> str:
    message = str(error.args[0]) if error.args else "evaluation error"
    missing = re.fullmatch(r"no such member in mapping: '(.*)'", message)
    if missing:
        return f"no such key: {missing.group(1)}"
    details = error.args[2] if len(error.args) > 2 else None
    if message == "return error for overflow" and details:
        return str(details[0])
    return message


# --------------------------------------------------------------------------
# Validation passes


_JSON_TYPES: Final[dict[type, str]] = {
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
    dict: "object",
    list: "array",
    tuple: "array",
}


def _json_type(value: JSON) -> str:
    if value is None:
        return "null"
    for cls, name in _JSON_TYPES.items():
        if isinstance(value, cls):
            return name
    return type(value).__name__


def _type_matches(node: _Node, value: JSON, actual: str) -> bool:
    if node.int_or_string:
        return actual in ("integer", "string") or (actual == "number" and float(value).is_integer())
    if not node.type:
        return True
    if node.type == "number":
        return actual in ("integer", "number")
    if node.type == "integer":
        # A whole float is an integer to Go's JSON decoding and kube-openapi,
        # and the function SDK's struct_to_dict turns every number into float.
        return actual == "integer" or (actual == "number" and float(value).is_integer())
    return actual == node.type


_DNS1035: Final = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_DNS1035_MESSAGE: Final = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
    "start with an alphabetic character, and end with an alphanumeric character "
    "(e.g. 'my-name',  or 'abc-123', regex used for validation is "
    "'[a-z]([-a-z0-9]*[a-z0-9])?')"
)
_DATE_TIME: Final = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})"
)
_MAC: Final = re.compile(r"([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}")


def _format_ok(fmt: str, text: str) -> bool:
    """The strfmt formats the API server checks that are cheap to check exactly."""
    try:
        if fmt in ("date-time", "datetime"):
            if not _DATE_TIME.fullmatch(text):
                return False
            datetime.datetime.fromisoformat(text.replace("z", "Z").replace("Z", "+00:00"))
        elif fmt == "date":
            datetime.date.fromisoformat(text)
            return len(text) == 10
        elif fmt == "byte":
            base64.b64decode(text, validate=True)
        elif fmt in ("uuid", "uuid3", "uuid4", "uuid5"):
            parsed = uuid.UUID(text)
            return len(text) == 36 and (fmt == "uuid" or parsed.version == int(fmt[-1]))
        elif fmt == "ipv4":
            ipaddress.IPv4Address(text)
        elif fmt == "ipv6":
            ipaddress.IPv6Address(text)
        elif fmt == "cidr":
            ipaddress.ip_network(text, strict=False)
            return "/" in text
        elif fmt == "mac":
            return bool(_MAC.fullmatch(text))
        elif fmt == "duration":
            return _parse_go_duration(text) is not None
    except (ValueError, binascii.Error):
        return False
    return True


class _Validation:
    """State of one validate() call."""

    def __init__(self) -> None:
        self.unknown: list[str] = []
        self.schema: list[_FieldError] = []
        self.lists: list[_FieldError] = []
        self.cel: list[_FieldError] = []

    # -- pruning (pruning.Prune + PruneNonNullableNullsWithoutDefaults)

    def prune(self, node: _Node, value: JSON, path: str, resource_root: bool) -> None:
        if isinstance(value, dict):
            for key in list(value):
                if resource_root and key in ("apiVersion", "kind", "metadata"):
                    continue  # ObjectMeta is coerced by the server, not pruned.
                child = node.child(key)
                if child is None:
                    if not (node.preserve_unknown or node.additional_any):
                        self.unknown.append(f"{_child(path, key)}: unknown field")
                        del value[key]
                    continue
                item = value[key]
                if item is None and not child.nullable and child.default is _MISSING:
                    del value[key]
                    continue
                self.prune(child, item, _child(path, key), child.embedded)
        elif isinstance(value, (list, tuple)) and node.items is not None:
            for index, item in enumerate(value):
                self.prune(node.items, item, f"{path}[{index}]", node.items.embedded)

    # -- defaulting (structuraldefaulting.Default)

    def default(self, node: _Node, value: JSON, resource_root: bool) -> None:
        if not node.has_defaults:
            return
        if isinstance(value, dict):
            for key, declared in node.properties.items():
                if declared.default is _MISSING or (resource_root and key == "metadata"):
                    continue
                if key not in value or (value[key] is None and not declared.nullable):
                    value[key] = _copy(declared.default)
            extra = node.additional
            for key in value:
                prop = node.properties.get(key)
                if prop is None and extra is not None:
                    if value[key] is None and not extra.nullable and extra.default is not _MISSING:
                        value[key] = _copy(extra.default)
                    prop = extra
                if prop is not None and not (resource_root and key == "metadata"):
                    self.default(prop, value[key], prop.embedded)
        elif isinstance(value, list) and node.items is not None:
            items = node.items
            for index in range(len(value)):
                if value[index] is None and not items.nullable and items.default is not _MISSING:
                    value[index] = _copy(items.default)
                self.default(items, value[index], items.embedded)

    # -- OpenAPI schema (kube-openapi validate, errors as kubeOpenAPIResultToFieldErrors)

    def check(self, node: _Node, value: JSON, path: str, resource_root: bool) -> None:
        out = self.schema
        actual = _json_type(value)
        if value is None:
            if not (node.nullable or (not node.type and not node.int_or_string)):
                detail = f'{path} in body must be of type {node.type or "integer,string"}: "null"'
                out.append(_FieldError(TYPE_INVALID, path, "null", detail))
            return
        if not _type_matches(node, value, actual):
            wanted = "integer,string" if node.int_or_string else node.type
            detail = f'{path} in body must be of type {wanted}: "{actual}"'
            out.append(_FieldError(TYPE_INVALID, path, actual, detail))
            return
        if node.enum is not None and not any(_json_equal(value, e) for e in node.enum):
            allowed = ", ".join(
                json.dumps(e if isinstance(e, str) else json.dumps(e)) for e in node.enum
            )
            out.append(_FieldError(NOT_SUPPORTED, path, value, f"supported values: {allowed}"))
        if isinstance(value, str):
            self._check_string(node, value, path)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            self._check_number(node, value, path)
        elif isinstance(value, (list, tuple)):
            self._check_array(node, value, path)
        elif isinstance(value, dict):
            self._check_object(node, value, path, resource_root)
        self._check_combinators(node, value, path)

    def _check_string(self, node: _Node, value: str, path: str) -> None:
        out = self.schema
        if node.max_length is not None and len(value) > node.max_length:
            out.append(
                _FieldError(TOO_LONG, path, value, f"may not be longer than {node.max_length}")
            )
        if node.min_length is not None and len(value) < node.min_length:
            detail = f"{path} in body should be at least {node.min_length} chars long"
            out.append(_FieldError(INVALID, path, value, detail))
        if node.pattern_re is not None and node.pattern_re.search(value) is None:
            detail = f"{path} in body should match '{node.pattern}'"
            out.append(_FieldError(INVALID, path, value, detail))
        if node.fmt and not _format_ok(node.fmt, value):
            detail = f'{path} in body must be of type {node.fmt}: "{value}"'
            out.append(_FieldError(TYPE_INVALID, path, value, detail))

    def _check_number(self, node: _Node, value: float, path: str) -> None:
        out = self.schema
        low, high = node.minimum, node.maximum
        if low is not None:
            if node.exclusive_minimum and value <= low:
                detail = f"{path} in body should be greater than {_go_number(low)}"
                out.append(_FieldError(INVALID, path, value, detail))
            elif not node.exclusive_minimum and value < low:
                detail = f"{path} in body should be greater than or equal to {_go_number(low)}"
                out.append(_FieldError(INVALID, path, value, detail))
        if high is not None:
            if node.exclusive_maximum and value >= high:
                detail = f"{path} in body should be less than {_go_number(high)}"
                out.append(_FieldError(INVALID, path, value, detail))
            elif not node.exclusive_maximum and value > high:
                detail = f"{path} in body should be less than or equal to {_go_number(high)}"
                out.append(_FieldError(INVALID, path, value, detail))
        step = node.multiple_of
        if step and not float(value / step).is_integer():
            detail = f"{path} in body should be a multiple of {_go_number(step)}"
            out.append(_FieldError(INVALID, path, value, detail))

    def _check_array(self, node: _Node, value: list[JSON] | tuple[JSON, ...], path: str) -> None:
        out = self.schema
        if node.max_items is not None and len(value) > node.max_items:
            out.append(
                _FieldError(TOO_MANY, path, len(value), f"must have at most {node.max_items} items")
            )
        if node.min_items is not None and len(value) < node.min_items:
            detail = f"{path} in body should have at least {node.min_items} items"
            out.append(_FieldError(INVALID, path, len(value), detail))
        if node.unique_items and len({_canonical(v) for v in value}) != len(value):
            detail = f"{path} in body shouldn't contain duplicates"
            out.append(_FieldError(INVALID, path, "", detail))
        if node.items is not None:
            for index, item in enumerate(value):
                self.check(node.items, item, f"{path}[{index}]", node.items.embedded)

    def _check_object(
        self, node: _Node, value: dict[str, JSON], path: str, resource_root: bool
    ) -> None:
        out = self.schema
        for name in node.required:
            if name not in value:
                out.append(_FieldError(REQUIRED, _child(path, name)))
        count = len(value)
        if node.max_properties is not None and count > node.max_properties:
            detail = f"must have at most {node.max_properties} items"
            out.append(_FieldError(TOO_MANY, path, count, detail))
        if node.min_properties is not None and count < node.min_properties:
            detail = f"{path} in body should have at least {node.min_properties} properties"
            out.append(_FieldError(INVALID, path, count, detail))
        for key, item in value.items():
            child = node.child(key)
            if resource_root and key == "metadata":
                self._check_metadata(child, item, _child(path, key))
            elif child is not None:
                self.check(child, item, _child(path, key), child.embedded)
        if node.embedded:
            self._check_embedded(value, path)

    def _check_metadata(self, node: _Node | None, value: JSON, path: str) -> None:
        # ObjectMeta is validated by the API server's own code, not by the
        # CRD schema; only its shape matters for composed objects here.
        # A malformed embedded ObjectMeta is a plain Invalid value (it does not
        # block CEL); at the root the request would not even decode.
        error = TYPE_INVALID if path == "metadata" else INVALID
        if not isinstance(value, dict):
            detail = f'{path} in body must be of type object: "{_json_type(value)}"'
            self.schema.append(_FieldError(error, path, _json_type(value), detail))
            return
        for key in ("name", "namespace", "generateName"):
            if key in value and not isinstance(value[key], str):
                kind = _json_type(value[key])
                detail = f'{_child(path, key)} in body must be of type string: "{kind}"'
                self.schema.append(_FieldError(error, _child(path, key), kind, detail))
            elif key in value and node is not None and key in node.properties:
                self.check(node.properties[key], value[key], _child(path, key), False)

    def _check_embedded(self, value: dict[str, JSON], path: str) -> None:
        # schemaobjectmeta.validateEmbeddedResource
        out = self.schema
        for key in ("apiVersion", "kind"):
            item = value.get(key, _MISSING)
            where = _child(path, key)
            if item is _MISSING or item == "":
                out.append(_FieldError(REQUIRED, where))
            elif not isinstance(item, str):
                out.append(_FieldError(INVALID, where, item, "must be a string"))
            elif key == "apiVersion" and item.count("/") > 1:
                detail = f"unexpected GroupVersion string: {item}"
                out.append(_FieldError(INVALID, where, item, detail))
            elif key == "kind" and (len(item) > 63 or not _DNS1035.fullmatch(item.lower())):
                problem = (
                    "must be no more than 63 characters" if len(item) > 63 else _DNS1035_MESSAGE
                )
                detail = f"may have mixed case, but should otherwise match: {problem}"
                out.append(_FieldError(INVALID, where, item, detail))

    def _check_combinators(self, node: _Node, value: JSON, path: str) -> None:
        for sub in node.all_of:
            self.check(sub, value, path, False)
        if node.any_of and not any(self._passes(s, value, path) for s in node.any_of):
            detail = f"{path} in body must validate at least one schema (anyOf)"
            self.schema.append(_FieldError(INVALID, path, "", detail))
        if node.one_of and sum(self._passes(s, value, path) for s in node.one_of) != 1:
            detail = f"{path} in body must validate one and only one schema (oneOf)"
            self.schema.append(_FieldError(INVALID, path, "", detail))
        if node.not_ is not None and self._passes(node.not_, value, path):
            detail = f"{path} in body must not validate the schema (not)"
            self.schema.append(_FieldError(INVALID, path, "", detail))

    def _passes(self, node: _Node, value: JSON, path: str) -> bool:
        probe = _Validation()
        probe.check(node, value, path, False)
        return not probe.schema

    # -- x-kubernetes-list-type (structurallisttype.ValidateListSetsAndMaps)

    def check_lists(self, node: _Node, value: JSON, path: str) -> None:
        if not node.has_list_types:
            return
        if isinstance(value, dict):
            for key, item in value.items():
                prop = node.properties.get(key)
                if prop is not None:
                    self.check_lists(prop, item, _child(path, key))
                elif node.additional is not None:
                    self.check_lists(node.additional, item, f"{path}[{key}]")
        elif isinstance(value, (list, tuple)):
            if node.list_type == "set":
                for index in _second_occurrences([_canonical(v) for v in value]):
                    self.lists.append(_FieldError(DUPLICATE, f"{path}[{index}]", value[index]))
            elif node.list_type == "map":
                self._check_list_map(node, value, path)
            if node.items is not None:
                for index, item in enumerate(value):
                    self.check_lists(node.items, item, f"{path}[{index}]")

    def _check_list_map(self, node: _Node, value: list[JSON] | tuple[JSON, ...], path: str) -> None:
        for index, item in enumerate(value):
            if item is not None and not isinstance(item, dict):
                detail = "must be an object for an array of list-type map"
                self.lists.append(_FieldError(INVALID, f"{path}[{index}]", item, detail))
                return
        keys = [
            {k: item[k] for k in node.list_map_keys if k in item} if item else {} for item in value
        ]
        for index in _second_occurrences([_canonical(k) for k in keys]):
            self.lists.append(_FieldError(DUPLICATE, f"{path}[{index}]", keys[index]))

    # -- x-kubernetes-validations (cel.Validator)

    def run_cel(self, node: _Node, value: JSON, path: str, resource_root: bool) -> None:
        if value is None or not node.has_rules:
            return
        if node.rules:
            self._run_rules(node, value, path, resource_root)
        if isinstance(value, dict):
            for key, item in value.items():
                prop = node.properties.get(key)
                if prop is not None:
                    self.run_cel(prop, item, _child(path, key), prop.embedded)
                elif node.additional is not None:
                    self.run_cel(node.additional, item, f"{path}[{key}]", node.additional.embedded)
        elif isinstance(value, (list, tuple)) and node.items is not None:
            for index, item in enumerate(value):
                self.run_cel(node.items, item, f"{path}[{index}]", node.items.embedded)

    def _run_rules(self, node: _Node, value: JSON, path: str, resource_root: bool) -> None:
        activation = {"self": _to_cel(node, value, resource_root)}
        for rule in node.rules:
            if rule.program is None:
                continue  # Transition rules need oldSelf, which a create never has.
            try:
                result = rule.program.evaluate(activation)
            except CELEvalError as error:
                # Kubernetes never runs a rule whose own field is absent or null
                # (run_cel does not descend into those), but a rule that fails
                # inside, e.g. `self.celQuery` with celQuery unset ("no such key"),
                # is not a pass: cel/validation.go reports it as an Invalid value
                # "<error> evaluating rule: <message>". Rules that tolerate absent
                # fields say so with has(), as every upjet rule does.
                self.cel.append(_FieldError(INVALID, path, node.type, _runtime_detail(error, rule)))
                continue
            if isinstance(result, celtypes.BoolType) and bool(result):
                continue
            if not isinstance(result, celtypes.BoolType):
                # The API server's type checker refuses such a rule up front.
                detail = f"rule returned {type(result).__name__}, not bool: {rule.error_string}"
                self.cel.append(_FieldError(INVALID, path, node.type, detail))
                continue
            where = path
            if rule.field_path:
                where = (
                    f"{path}{rule.field_path}"
                    if rule.field_path.startswith("[")
                    else _child(path, rule.field_path)
                )
            detail = _rule_message(rule, activation)
            shown = _OMIT if node.type in ("object", "array") else value
            self.cel.append(_reason_error(rule.reason, where, shown, detail))


def _runtime_detail(error: CELEvalError, rule: _Rule) -> str:
    text = _cel_error_text(error)
    if text == "no such overload" or "no matching overload" in text:
        return (
            f"'no such overload': call arguments did not match a supported operator, "
            f"function or macro signature for rule: {rule.error_string}"
        )
    return f"{text} evaluating rule: {rule.error_string}"


def _rule_message(rule: _Rule, activation: dict[str, celtypes.Value]) -> str:
    if rule.message_program is not None:
        try:
            text = rule.message_program.evaluate(activation)
        except CELEvalError:
            text = None
        if isinstance(text, str) and text.strip() and "\n" not in text.strip():
            return text.strip()
    return rule.message or f"failed rule: {rule.rule.strip()}"


def _reason_error(reason: str, path: str, value: JSON, detail: str) -> _FieldError:
    if reason == "FieldValueForbidden":
        return _FieldError(FORBIDDEN, path, _OMIT, detail)
    if reason == "FieldValueRequired":
        return _FieldError(REQUIRED, path, _OMIT, detail)
    if reason == "FieldValueDuplicate":
        return _FieldError(DUPLICATE, path, value)
    return _FieldError(INVALID, path, value, detail)


def _canonical(value: JSON) -> str:
    # Go compares scalars by dynamic type and value (1 and 1.0 differ), and
    # compounds by their JSON encoding.
    if isinstance(value, (dict, list, tuple)):
        return "j" + json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return f"{type(value).__name__}:{value!r}"


def _second_occurrences(keys: list[str]) -> Iterator[int]:
    seen: dict[str, int] = {}
    for index, key in enumerate(keys):
        seen[key] = seen.get(key, 0) + 1
        if seen[key] == 2:
            yield index


# --------------------------------------------------------------------------
# Loading definitions


@dataclass(frozen=True, slots=True)
class _Version:
    root: _Node
    served: bool
    source: str


def _split_api_version(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


def _iter_yaml_files(paths: Iterable[Path]) -> Iterator[Path]:
    for path in paths:
        if path.is_dir():
            found = [*path.rglob("*.yaml"), *path.rglob("*.yml")]
            yield from sorted(p for p in found if p.is_file())
        elif path.is_file():
            yield path
        else:
            raise FileNotFoundError(f"CRD path not found: {path}")


_YAML_LOADER: Final = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _load_documents(path: Path) -> Iterator[dict[str, JSON]]:
    with path.open(encoding="utf-8") as stream:
        for document in yaml.load_all(stream, Loader=_YAML_LOADER):
            if isinstance(document, dict):
                yield document


def _xr_schema(
    xrd_spec: Mapping[str, JSON], version: Mapping[str, JSON], scope: str, claim: bool
) -> dict[str, JSON]:
    """The XR (or claim) schema Crossplane generates from an XRD version
    (internal/xcrd in crossplane/crossplane: genCrdVersion and schemas.go)."""
    raw = (version.get("schema") or {}).get("openAPIV3Schema") or {}
    user_spec = (raw.get("properties") or {}).get("spec") or {}
    user_status = (raw.get("properties") or {}).get("status") or {}
    name_max = 63
    user_name = ((raw.get("properties") or {}).get("metadata") or {}).get("properties", {})
    if isinstance(user_name.get("name"), Mapping) and user_name["name"].get("maxLength"):
        name_max = min(name_max, int(user_name["name"]["maxLength"]))

    def ref(*required: str, **props: JSON) -> dict[str, JSON]:
        return {"type": "object", "required": list(required), "properties": props}

    string = {"type": "string"}
    labels = {
        "type": "object",
        "required": ["matchLabels"],
        "properties": {
            "matchLabels": {"type": "object", "additionalProperties": {"type": "string"}}
        },
    }
    machinery: dict[str, JSON] = {
        "compositionRef": ref("name", name=string),
        "compositionSelector": labels,
        "compositionRevisionRef": ref("name", name=string),
        "compositionRevisionSelector": labels,
        "compositionUpdatePolicy": {"type": "string", "enum": ["Automatic", "Manual"]},
    }
    if not claim:
        machinery["compositionUpdatePolicy"]["default"] = xrd_spec.get(
            "defaultCompositionUpdatePolicy", "Automatic"
        )
    ref_props = {"apiVersion": string, "name": string, "kind": string}
    if scope != "Namespaced":
        ref_props["namespace"] = string
    machinery["resourceRefs"] = {
        "type": "array",
        "x-kubernetes-list-type": "atomic",
        "items": ref("apiVersion", "kind", **ref_props),
    }
    conditions = {
        "type": "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["type"],
        "items": ref(
            "lastTransitionTime",
            "reason",
            "status",
            "type",
            lastTransitionTime={"type": "string", "format": "date-time"},
            message=string,
            reason=string,
            status=string,
            type=string,
            observedGeneration={"type": "integer", "format": "int64"},
        ),
    }
    published = ref(lastPublishedTime={"type": "string", "format": "date-time"})
    status_props: dict[str, JSON] = {"conditions": conditions}
    if claim:
        machinery.pop("resourceRefs")
        machinery["compositeDeletePolicy"] = {
            "type": "string",
            "enum": ["Background", "Foreground"],
            "default": xrd_spec.get("defaultCompositeDeletePolicy", "Background"),
        }
        machinery["resourceRef"] = ref(
            "apiVersion", "kind", "name", apiVersion=string, kind=string, name=string
        )
        machinery["writeConnectionSecretToRef"] = ref("name", name=string)
        spec_props = machinery
        scope = "LegacyCluster"
    elif scope == "LegacyCluster":
        machinery["claimRef"] = ref(
            "apiVersion", "kind", "namespace", "name",
            apiVersion=string, kind=string, namespace=string, name=string,
        )  # fmt: skip
        machinery["writeConnectionSecretToRef"] = ref(
            "name", "namespace", name=string, namespace=string
        )
        spec_props = machinery
    else:
        spec_props = {"crossplane": {"type": "object", "properties": machinery}}
    if scope == "LegacyCluster":
        status_props["connectionDetails"] = published
        status_props["claimConditionTypes"] = {
            "type": "array",
            "x-kubernetes-list-type": "set",
            "items": string,
        }
    else:
        status_props["crossplane"] = ref(connectionDetails=published)

    spec: dict[str, JSON] = {
        key: user_spec[key]
        for key in ("required", "x-kubernetes-preserve-unknown-fields", "oneOf")
        if key in user_spec
    }
    spec["type"] = "object"
    spec["properties"] = {**(user_spec.get("properties") or {}), **spec_props}
    if user_spec.get("x-kubernetes-validations"):
        spec["x-kubernetes-validations"] = user_spec["x-kubernetes-validations"]
    status: dict[str, JSON] = {
        key: user_status[key]
        for key in ("required", "x-kubernetes-validations", "oneOf")
        if key in user_status
    }
    status["type"] = "object"
    # Crossplane writes its own spec and status properties over the user's.
    status["properties"] = {**(user_status.get("properties") or {}), **status_props}
    return {
        "type": "object",
        "required": ["spec"],
        "properties": {
            "apiVersion": string,
            "kind": string,
            "metadata": ref(name={"type": "string", "maxLength": name_max}),
            "spec": spec,
            "status": status,
        },
    }


def _xrd_to_crds(xrd: Mapping[str, JSON]) -> list[dict[str, JSON]]:
    spec = xrd.get("spec") or {}
    # The API server defaults the scope per XRD version (v2: Namespaced,
    # v1: LegacyCluster); an offline reader must do the same.
    default_scope = (
        "LegacyCluster" if str(xrd.get("apiVersion", "")).endswith("/v1") else "Namespaced"
    )
    scope = str(spec.get("scope") or default_scope)
    versions = spec.get("versions") or []

    def crd(kind: str, claim: bool) -> dict[str, JSON]:
        return {
            "spec": {
                "group": spec.get("group"),
                "names": {"kind": kind},
                "versions": [
                    {
                        "name": v.get("name"),
                        "served": v.get("served", True),
                        "schema": {"openAPIV3Schema": _xr_schema(spec, v, scope, claim)},
                    }
                    for v in versions
                ],
            }
        }

    out = [crd(str((spec.get("names") or {}).get("kind")), claim=False)]
    claim_names = spec.get("claimNames")
    if isinstance(claim_names, Mapping) and claim_names.get("kind"):
        out.append(crd(str(claim_names["kind"]), claim=True))
    return out


class CrdCatalog:
    """Schemas of CRDs and Crossplane XRDs, indexed by group, version and kind."""

    def __init__(self) -> None:
        self._versions: dict[tuple[str, str, str], _Version] = {}
        self._compiler = _SchemaCompiler()

    @classmethod
    def load(cls, *paths: Path) -> CrdCatalog:
        """Reads CRDs and XRDs from files or directories (recursed, multi-document)."""
        catalog = cls()
        for file in _iter_yaml_files(Path(p) for p in paths):
            for document in _load_documents(file):
                catalog._add_document(document, str(file))
        return catalog

    def _add_document(self, document: Mapping[str, JSON], source: str) -> None:
        api_version = str(document.get("apiVersion", ""))
        kind = document.get("kind")
        if kind == "CustomResourceDefinition" and api_version.startswith("apiextensions.k8s.io/"):
            self._add_crd(document, source)
        elif kind == "CompositeResourceDefinition" and api_version.startswith(
            "apiextensions.crossplane.io/"
        ):
            for crd in _xrd_to_crds(document):
                self._add_crd(crd, source)

    def _add_crd(self, crd: Mapping[str, JSON], source: str) -> None:
        spec = crd.get("spec") or {}
        group = str(spec.get("group") or "")
        kind = str((spec.get("names") or {}).get("kind") or "")
        for version in spec.get("versions") or []:
            schema = (version.get("schema") or {}).get("openAPIV3Schema")
            if not isinstance(schema, Mapping):
                continue
            name = str(version.get("name"))
            where = f"{source}: {group}/{name}, Kind={kind}"
            self._versions[(group, name, kind)] = _Version(
                root=self._compiler.compile(schema, where),
                served=bool(version.get("served", True)),
                source=source,
            )

    def has_schema(self, api_version: str, kind: str) -> bool:
        """Whether a served CRD version defines this kind (core kinds have none)."""
        found = self._versions.get((*_split_api_version(api_version), kind))
        return found is not None and found.served

    def validate(self, obj: Mapping[str, JSON]) -> list[str]:
        """Errors the API server would report when creating ``obj``; [] when valid."""
        api_version = obj.get("apiVersion")
        kind = obj.get("kind")
        if not isinstance(api_version, str) or not isinstance(kind, str):
            return [f"no schema for {api_version}/{kind}"]
        if not self.has_schema(api_version, kind):
            return [f"no schema for {api_version}/{kind}"]
        root = self._versions[(*_split_api_version(api_version), kind)].root
        work = _copy(dict(obj))
        run = _Validation()
        run.prune(root, work, "", resource_root=True)
        run.default(root, work, resource_root=True)
        run.check(root, work, "", resource_root=True)
        run.check_lists(root, work, "")
        errors = [*run.schema, *run.lists]
        if any(e.kind in _BLOCKING for e in errors):
            if root.has_rules:
                detail = (
                    "some validation rules were not checked because the object was "
                    "invalid; correct the existing errors to complete validation"
                )
                errors.append(_FieldError(INVALID, "", None, detail))
        else:
            run.run_cel(root, work, "", resource_root=True)
            errors.extend(run.cel)
        return [*run.unknown, *(str(e) for e in errors)]
