"""Per-stratum gates for CI (docs/benchmarks.md: a floor per stratum, never on the mean alone).

A gate file is TOML::

    # optional: which evaluated policies the gate judges (default: all except baselines)
    policies = ["default"]

    [floors.long_range]            # higher-is-better metrics: figure >= floor
    "R@5" = 0.90
    coverage = 0.80

    [ceilings.long_range]          # lower-is-better metrics: figure <= ceiling
    contamination = 0.05

    [ceilings."*"]                 # "*": every stratum present in the results
    contamination = 0.03

A stratum table overrides ``"*"`` for the metrics it names; ``mean`` may be
gated as well, beside the strata. A stratum named explicitly but absent from
the results fails (a stratum that silently vanished from the set must not pass),
and so does a metric with no value there. The figure compared is the point
estimate; intervals are for reading, floors carry their own margin.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from turnscope._exceptions import ConfigError, GateError
from turnscope.evaluation._metrics import get_metric, metric_names
from turnscope.evaluation._runner import MEAN, EvalResult

__all__ = [
    "ALL_STRATA",
    "BUNDLED_GATE",
    "Gate",
    "GateFailure",
    "bundled_gate",
    "check_gate",
    "load_gate",
    "parse_gate",
]

#: the stratum key that applies a bound to every stratum present
ALL_STRATA = "*"
#: name of the project's own gate shipped in ``turnscope/data/gates``
BUNDLED_GATE = "default"

Bounds = Mapping[str, Mapping[str, float]]  # stratum -> metric -> bound


@dataclass(frozen=True)
class GateFailure:
    """One bound not met: which policy, stratum and metric, the figure and the bound.

    ``value`` is ``None`` when the figure could not be computed (no items in that
    stratum, or the metric does not apply to them).
    """

    policy: str
    stratum: str
    metric: str
    value: float | None
    bound: float
    kind: Literal["floor", "ceiling"]

    @property
    def message(self) -> str:
        if self.value is None:
            what = "no items" if self.metric == "" else f"no {self.metric} figure"
            return (f"stratum {self.stratum}: {what} to judge "
                    f"({self.kind} {self.bound:.2f}, policy {self.policy})")
        op = "<" if self.kind == "floor" else ">"
        return (f"stratum {self.stratum}: {self.metric} {self.value:.3f} {op} {self.kind} "
                f"{self.bound:.2f} (policy {self.policy})")

    def to_json(self) -> dict[str, object]:
        return {"policy": self.policy, "stratum": self.stratum, "metric": self.metric,
                "value": self.value, "bound": self.bound, "kind": self.kind}


@dataclass(frozen=True)
class Gate:
    """Parsed gate: floors and ceilings per stratum, and the policies it judges."""

    floors: Bounds
    ceilings: Bounds
    policies: tuple[str, ...] | None = None
    source: str = "gate"

    def bounds_for(self, stratum: str) -> list[tuple[str, float, Literal["floor", "ceiling"]]]:
        """``(metric, bound, kind)`` applying to ``stratum``; its own table beats ``"*"``."""
        out: list[tuple[str, float, Literal["floor", "ceiling"]]] = []
        for table, kind in ((self.floors, "floor"), (self.ceilings, "ceiling")):
            merged: dict[str, float] = {}
            if stratum != MEAN:
                merged.update(table.get(ALL_STRATA, {}))
            merged.update(table.get(stratum, {}))
            out.extend((m, b, kind) for m, b in merged.items())  # type: ignore[misc]
        return out

    @property
    def named_strata(self) -> list[str]:
        names = set(self.floors) | set(self.ceilings)
        names.discard(ALL_STRATA)
        return sorted(names)


def _bounds(raw: Any, section: str, source: str, higher_is_better: bool) -> Bounds:
    if not isinstance(raw, dict):
        raise GateError(f"{source}: [{section}] must be a table of strata, "
                        f"e.g. [{section}.long_range]")
    out: dict[str, Mapping[str, float]] = {}
    for stratum, metrics in raw.items():
        where = f"{source}: [{section}.{stratum}]"
        if not isinstance(metrics, dict):
            raise GateError(f"{where} must be a table of metric = bound, got {metrics!r}")
        if not metrics:
            raise GateError(f"{where} names no metric")
        bounds: dict[str, float] = {}
        for name, value in metrics.items():
            try:
                metric = get_metric(name)
            except ConfigError:
                raise GateError(f"{where}: unknown metric {name!r}; valid metrics: "
                                f"{', '.join(metric_names())}") from None
            if metric.higher_is_better != higher_is_better:
                right = "floors" if metric.higher_is_better else "ceilings"
                raise GateError(
                    f"{where}: {name} is {'higher' if metric.higher_is_better else 'lower'}"
                    f"-is-better; put its bound under [{right}.{stratum}]"
                )
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise GateError(f"{where}: {name} must be a number, got {value!r}")
            if not (0.0 <= float(value) <= 1.0) or math.isnan(float(value)):
                raise GateError(f"{where}: {name} = {value} is outside [0, 1]")
            bounds[name] = float(value)
        out[stratum] = MappingProxyType(bounds)
    return MappingProxyType(out)


def parse_gate(text: str, source: str = "gate") -> Gate:
    """Parse a gate from TOML text.

    >>> gate = parse_gate('[floors.long_range]\\n"R@5" = 0.9\\n')
    >>> gate.bounds_for("long_range")
    [('R@5', 0.9, 'floor')]

    Raises :class:`GateError` naming the problem (bad TOML, unknown key or metric,
    a bound outside [0, 1], a floor on a lower-is-better metric…).
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise GateError(f"{source}: not valid TOML: {exc}") from None
    unknown = sorted(set(data) - {"floors", "ceilings", "policies", "description"})
    if unknown:
        raise GateError(f"{source}: unknown key(s) {', '.join(unknown)}; "
                        "valid: floors, ceilings, policies, description")
    floors = _bounds(data.get("floors", {}), "floors", source, True)
    ceilings = _bounds(data.get("ceilings", {}), "ceilings", source, False)
    if not floors and not ceilings:
        raise GateError(f"{source}: the gate sets no bound; add e.g. "
                        '[floors.long_range] "R@5" = 0.9')
    policies = data.get("policies")
    if policies is not None:
        if (not isinstance(policies, list) or not policies
                or not all(isinstance(p, str) and p for p in policies)):
            raise GateError(f"{source}: policies must be a non-empty list of policy names")
        policies = tuple(policies)
    return Gate(floors, ceilings, policies, source)


def _bundled_dir() -> Traversable:
    return resources.files("turnscope") / "data" / "gates"


def bundled_gate(name: str = BUNDLED_GATE) -> Gate:
    """A gate shipped with turnscope (``default``: the project's own per-stratum floors)."""
    ref = _bundled_dir() / f"{name}.toml"
    if not ref.is_file():
        names = sorted(e.name.removesuffix(".toml") for e in _bundled_dir().iterdir()
                       if e.name.endswith(".toml")) if _bundled_dir().is_dir() else []
        raise GateError(f"no bundled gate named {name!r}; bundled: {', '.join(names) or '(none)'}")
    return parse_gate(ref.read_text(encoding="utf-8"), f"bundled:{name}.toml")


def load_gate(path: str | Path) -> Gate:
    """Read a gate file; ``"default"`` (when no such file exists) is the bundled gate.

    >>> load_gate("default").source
    'bundled:default.toml'
    """
    p = Path(path)
    if not p.exists() and str(path) == BUNDLED_GATE:
        return bundled_gate()
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise GateError(f"{p}: gate file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise GateError(f"{p}: cannot read gate file: {exc}") from None
    return parse_gate(text, str(p))


def check_gate(gate: Gate, result: EvalResult,
               policies: Sequence[str] | None = None) -> list[GateFailure]:
    """Every bound of ``gate`` the results miss, per policy and stratum (empty: passed).

    The gate judges ``policies`` if given, else the gate's own ``policies``, else every
    evaluated policy except ``baseline:*`` rows.

    >>> failures = check_gate(load_gate("gate.toml"), result)   # doctest: +SKIP
    >>> [f.message for f in failures]                            # doctest: +SKIP
    ['stratum long_range: R@5 0.314 < floor 0.90 (policy window:1)']
    """
    judged = list(policies or gate.policies or
                  [p for p in result.policy_names if not p.startswith("baseline:")])
    failures: list[GateFailure] = []
    for name in judged:
        if name not in result.policy_names:
            raise GateError(f"{gate.source}: the gate judges policy {name!r}, which was not "
                            f"evaluated (evaluated: {', '.join(result.policy_names)})")
        pol = result.policy(name)
        present = pol.strata
        for stratum in present + [s for s in gate.named_strata if s not in present
                                  and s != MEAN] + [MEAN]:
            bounds = gate.bounds_for(stratum)
            if not bounds:
                continue
            row = pol.row(stratum)
            if row is None:
                _, bound, kind = bounds[0]
                failures.append(GateFailure(name, stratum, "", None, bound, kind))
                continue
            for metric, bound, kind in bounds:
                fig = row.figures.get(metric)
                value = None if fig is None else fig.value
                if value is None or (value < bound - 1e-12 if kind == "floor"
                                     else value > bound + 1e-12):
                    failures.append(GateFailure(name, stratum, metric, value, bound, kind))
    return failures
