"""Spec validation both clouds share: field types, error paths and the one FATAL message.

Pydantic checks types, bounds and patterns; cross-field rules run separately on the raw spec so
that one bad field never hides another. Every problem is reported with its Kubernetes field
path (spec.nodePools[1].gpu) so a user can find it in their YAML.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Annotated, Any, Generic, Literal, TypeVar

import pydantic
from pydantic import BeforeValidator, Field, StringConstraints

from function.shared.cache import ParseCache, content_key
from function.shared.outcome import Composite

M = TypeVar("M", bound=pydantic.BaseModel)

# Validated specs kept per parser: an XR's spec is validated once per change, not per reconcile
# (a converged reconcile is answered by the memo without it).
SPEC_CACHE_BYTES = 2 * 1024 * 1024

# Values are quoted in messages; a hostile spec must not turn one FATAL into megabytes.
_MAX_QUOTED_VALUE = 64


def _strict_integer(value: Any) -> Any:
    # Struct delivers every number as a float; 3.0 is the integer 3, 3.5 and "3" are not integers.
    if isinstance(value, bool):
        raise ValueError("must be an integer")
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError("must be an integer")
        return int(value)
    if not isinstance(value, int):
        raise ValueError("must be an integer")
    return value


Integer = Annotated[int, BeforeValidator(_strict_integer)]
StrictStr = Annotated[str, pydantic.Strict()]
StrictBool = Annotated[bool, pydantic.Strict()]


def text(min_length: int, max_length: int, pattern: str | None = None) -> StringConstraints:
    """Bounds of a string field; use as Annotated[StrictStr, text(1, 63)]."""
    return StringConstraints(min_length=min_length, max_length=max_length, pattern=pattern)


def between(minimum: int, maximum: int) -> Any:
    """Bounds of an integer field; use as Annotated[Integer, between(0, 1000)]."""
    return Field(ge=minimum, le=maximum)


class SpecModel(pydantic.BaseModel):
    # Unknown fields are ignored as the API server would prune them; a newer XRD must not
    # break an older function.
    model_config = pydantic.ConfigDict(extra="ignore", frozen=True)


# A Kubernetes label value: acceleratorType becomes the modelplane.ai/gpu node label.
LABEL_VALUE_PATTERN = r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"


class GPU(SpecModel):
    acceleratorType: Annotated[StrictStr, text(1, 63, LABEL_VALUE_PATTERN)]


class Credentials(SpecModel):
    name: Annotated[StrictStr, text(1, 253)] = "default"
    type: Literal["ProviderConfig", "ClusterProviderConfig"] = "ClusterProviderConfig"


def field_path(root: str, loc: Iterable[str | int]) -> str:
    path = root
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def quote(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # Struct turned the user's integer into a float
    text = repr(value) if not isinstance(value, str) else f'"{value}"'
    if len(text) > _MAX_QUOTED_VALUE:
        text = text[: _MAX_QUOTED_VALUE - 3] + "..."
    return text


def _describe(error: Mapping[str, Any]) -> str:
    kind = error["type"]
    ctx = error.get("ctx") or {}
    value = error.get("input")
    messages = {
        "missing": "required",
        "string_type": "must be a string",
        "int_type": "must be an integer",
        "bool_type": "must be a boolean",
        "model_type": "must be an object",
        "model_attributes_type": "must be an object",
        "dict_type": "must be an object",
        "list_type": "must be an array",
    }
    if kind in messages:
        return messages[kind]
    if kind == "string_too_short":
        minimum = ctx.get("min_length")
        return "must not be empty" if minimum == 1 else f"must be at least {minimum} characters"
    if kind == "string_too_long":
        length = len(value) if isinstance(value, str) else "?"
        return f"must be at most {ctx.get('max_length')} characters (got {length})"
    if kind == "string_pattern_mismatch":
        return f"must match {ctx.get('pattern')} (got {quote(value)})"
    if kind == "literal_error":
        return f"must be one of {ctx.get('expected')} (got {quote(value)})"
    if kind == "greater_than_equal":
        return f"must be at least {ctx.get('ge')} (got {quote(value)})"
    if kind == "less_than_equal":
        return f"must be at most {ctx.get('le')} (got {quote(value)})"
    if kind == "too_short":
        minimum = ctx.get("min_length")
        return f"must have at least {minimum} item{'' if minimum == 1 else 's'}"
    if kind == "too_long":
        return f"must have at most {ctx.get('max_length')} items (got {ctx.get('actual_length')})"
    if kind == "value_error":
        return str(error["msg"]).removeprefix("Value error, ")
    return str(error["msg"])


def _path_order(problem: str) -> list[Any]:
    # A stable order a reader can scan: by field path, list items by index rather than as text.
    path = problem.split(": ", 1)[0]
    return [int(p) if p.isdigit() else p for p in re.split(r"[.\[\]]+", path) if p]


class SpecProblems(Exception):
    """Every problem found in a spec; str() is the one FATAL message."""

    def __init__(self, subject: str, problems: Sequence[str]) -> None:
        self.subject = subject
        self.problems = sorted(dict.fromkeys(problems), key=_path_order)
        super().__init__(subject, self.problems)

    def __str__(self) -> str:
        return self.message

    @property
    def message(self) -> str:
        count = len(self.problems)
        noun = "problem" if count == 1 else "problems"
        return f"invalid {self.subject} ({count} {noun}): " + "; ".join(self.problems)


def parse(
    model: type[M],
    data: Any,
    *,
    root: str,
    subject: str,
    cross_field: Iterable[str] = (),
) -> M:
    """Validate data as model; raise SpecProblems naming every field path that is wrong."""
    problems = list(cross_field)
    try:
        parsed = model.model_validate(data)
    except pydantic.ValidationError as error:
        problems[:0] = [
            f"{field_path(root, e['loc'])}: {_describe(e)}" for e in error.errors(include_url=False)
        ]
        raise SpecProblems(subject, problems) from None
    if problems:
        raise SpecProblems(subject, problems)
    return parsed


def pool_problems(pools: Any) -> list[str]:
    """Cross-field rules of spec.nodePools that the XRD states in CEL, checked on raw values."""
    if not isinstance(pools, list):
        return []
    problems = []
    first_index: dict[str, int] = {}
    for index, pool in enumerate(pools):
        if not isinstance(pool, Mapping):
            continue
        path = f"spec.nodePools[{index}]"
        if pool.get("role") == "GPU" and pool.get("gpu") is None:
            problems.append(f"{path}.gpu: required when role is GPU")
        minimum, maximum, count = (
            _number(pool.get(k)) for k in ("minNodeCount", "maxNodeCount", "nodeCount")
        )
        if pool.get("minNodeCount") is not None and pool.get("maxNodeCount") is None:
            problems.append(f"{path}.maxNodeCount: required when minNodeCount is set")
        if minimum is not None and maximum is not None and minimum > maximum:
            problems.append(
                f"{path}.minNodeCount: must not exceed maxNodeCount ({minimum} > {maximum})"
            )
        if count is not None and maximum is not None and count > maximum:
            problems.append(f"{path}.nodeCount: must not exceed maxNodeCount ({count} > {maximum})")
        name = pool.get("name")
        if isinstance(name, str):
            if name in first_index:
                problems.append(
                    f"{path}.name: duplicate pool name {quote(name)} "
                    f"(also spec.nodePools[{first_index[name]}])"
                )
            else:
                first_index[name] = index
    return problems


def _number(value: Any) -> int | None:
    """An integer field's value, or None when the field itself is wrong (reported on its own)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class SpecParser(Generic[M]):
    """Validation of one XR kind's spec: its model plus the cross-field rules on pools, which
    run on the raw spec so that one bad field never hides another."""

    def __init__(self, model: type[M], kind: str, pool_rules: Callable[[Any], list[str]]) -> None:
        self._model, self._kind, self._pool_rules = model, kind, pool_rules
        self._validated: ParseCache[M] = ParseCache(SPEC_CACHE_BYTES, SpecProblems)

    def parse(self, spec: Any) -> M:
        """The validated spec; SpecProblems lists every bad field otherwise."""
        pools = spec.get("nodePools") if isinstance(spec, dict) else None
        return parse(
            self._model,
            spec,
            root="spec",
            subject=f"{self._kind} spec",
            cross_field=[*pool_problems(pools), *self._pool_rules(pools)],
        )

    def validated(self, xr: Composite) -> M:
        """The XR's spec, validated once per distinct content; SpecProblems otherwise."""
        key = xr.spec_key if xr.spec_key is not None else content_key(xr.spec)
        return self._validated.parse(key, lambda: xr.spec, self.parse)
