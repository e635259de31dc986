"""The machine-readable output the benchmark scripts print with ``--json``, read by run_all.py.

Every script's ``--json`` prints exactly one JSON object on stdout (its human-readable tables are
not printed then)::

    {"benchmark": "bench_scaling",
     "machine": {"cores": 2, "arch": "x86_64", "python": "CPython 3.11.7", ...},
     "figures": {NAME: number, ...},            # absolute figures of this run, for the record
     "ratios": {NAME: {"value": number,          # what run_all.py compares with baseline.json
                       "better": "lower" | "higher" | "zero",
                       "tolerance": number,      # optional: this metric's own tolerance
                       "target": number,         # optional: the issue's goal for the value
                       "what": "one line"}},
     "notes": ["...", ...]}

Only ratios of figures measured side by side in the same run (or counts) go into ``ratios``:
machines are noisy, so an absolute time from one run says little about another. ``better``
says which way is a regression: ``lower`` (a cost ratio: regression when it rises),
``higher`` (a throughput ratio: regression when it falls) or ``zero`` (a count of failures:
any value above 0 is a regression, whatever was recorded).
"""

from __future__ import annotations

import json
import os
import platform
import sys
from typing import Any


def machine() -> dict[str, Any]:
    """The machine a figure was taken on, with the load average at the time of the call."""
    model = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as file:
            for line in file:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = []
    return {
        "cores": os.cpu_count(),
        "arch": platform.machine(),
        "cpu": model,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "system": f"{platform.system()} {platform.release()}",
        "load_average": load,
    }


def ratio(
    value: float,
    better: str,
    what: str,
    tolerance: float | None = None,
    target: float | None = None,
) -> dict[str, Any]:
    """One compared metric (see the module docstring). ``target``: the goal an issue set for
    the value (met when the value is at or past it in the ``better`` direction); run_all.py
    prints it beside the value, it never makes a regression."""
    if better not in ("lower", "higher", "zero"):
        raise ValueError(better)
    entry: dict[str, Any] = {"value": round(float(value), 6), "better": better, "what": what}
    if tolerance is not None:
        entry["tolerance"] = tolerance
    if target is not None:
        entry["target"] = target
    return entry


def target_met(entry: dict[str, Any]) -> str:
    """``entry``'s target and whether its value meets it (``""`` without a target).

    >>> target_met({"value": 3.2, "better": "higher", "target": 3.0})
    '>= 3 met'
    >>> target_met({"value": 1.6, "better": "lower", "target": 1.3})
    '<= 1.3 missed'
    """
    target = entry.get("target")
    if target is None:
        return ""
    higher = entry["better"] == "higher"
    met = entry["value"] >= target if higher else entry["value"] <= target
    return f"{'>=' if higher else '<='} {target:g} {'met' if met else 'missed'}"


def emit(
    benchmark: str,
    figures: dict[str, float],
    ratios: dict[str, dict[str, Any]],
    notes: list[str] | None = None,
    **extra: Any,
) -> None:
    """Print the one JSON object of a ``--json`` run."""
    document = {
        "benchmark": benchmark,
        "machine": machine(),
        "figures": {k: (round(v, 6) if isinstance(v, float) else v) for k, v in figures.items()},
        "ratios": ratios,
        "notes": notes or [],
        **extra,
    }
    sys.stdout.write(json.dumps(document, sort_keys=False) + "\n")
    sys.stdout.flush()
