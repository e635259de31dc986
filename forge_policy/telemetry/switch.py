"""Whether, and in which processes, forge_policy exports OpenTelemetry: ``FORGE_OTEL``.

Built-ins only: the hook reads the switch on every call, and telemetry that is off must cost it
no import. The values:

- unset, ``""``, ``off``, ``0``, ``false``, ``no``: no telemetry anywhere (the default);
- ``on``, ``1``, ``true``, ``yes``: the warm worker and ``forge-policy serve`` export, batched in
  the background; a hook that evaluates in-process (no worker) does not;
- ``hook``: the in-process hook exports too: it notes its decision, writes its answer, and only
  then imports OpenTelemetry and exports, within :data:`HOOK_FLUSH_SECONDS`.

``OTEL_SDK_DISABLED=true`` (the OpenTelemetry standard switch) turns it off whatever
``FORGE_OTEL`` says. Where it goes is the standard ``OTEL_*`` environment, read by the SDK
(``OTEL_EXPORTER_OTLP_ENDPOINT``, ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``,
``OTEL_EXPORTER_OTLP_HEADERS``, ``OTEL_SERVICE_NAME``, ``OTEL_BSP_SCHEDULE_DELAY``,
``OTEL_METRIC_EXPORT_INTERVAL`` …; OTLP over HTTP/protobuf, default ``http://localhost:4318``).

Why an explicit switch rather than "on when an OTLP endpoint is set": the hook runs in the
harness's environment, and Claude Code's own telemetry sets ``OTEL_EXPORTER_OTLP_ENDPOINT``
(often to a gRPC port) for itself; forge_policy would otherwise start sending to a collector
nobody pointed it at.

>>> mode({}), mode({"FORGE_OTEL": "on"}), mode({"FORGE_OTEL": "hook"})
('off', 'on', 'hook')
>>> mode({"FORGE_OTEL": "on", "OTEL_SDK_DISABLED": "true"})
'off'
>>> problem({"FORGE_OTEL": "yes please"})
"FORGE_OTEL: expected on, off or hook, got 'yes please'; telemetry is off"
"""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

VARIABLE = "FORGE_OTEL"
#: Seconds the in-process hook (``FORGE_OTEL=hook``) waits, after its answer is written, for its
#: spans and metrics to leave: a dead or slow collector costs the hook at most this.
HOOK_FLUSH_SECONDS = 0.5
#: Seconds a worker or ``serve`` gives its last export when it stops.
STOP_FLUSH_SECONDS = 2.0

_ON = ("on", "1", "true", "yes")
_OFF = ("", "off", "0", "false", "no")


def mode(environ: "Mapping[str, str]") -> str:
    """``off``, ``on`` or ``hook`` (an unknown ``FORGE_OTEL`` value is ``off``: see
    :func:`problem`)."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return "off"
    value = environ.get(VARIABLE, "").strip().lower()
    if value in _ON:
        return "on"
    if value == "hook":
        return "hook"
    return "off"


def problem(environ: "Mapping[str, str]") -> str:
    """Why ``FORGE_OTEL`` is not understood (``""`` when it is): the worker and ``serve`` log
    it, and telemetry stays off (a decision never depends on it)."""
    value = environ.get(VARIABLE, "")
    if value.strip().lower() in (*_ON, *_OFF, "hook"):
        return ""
    return f"{VARIABLE}: expected on, off or hook, got {value!r}; telemetry is off"
