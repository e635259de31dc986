"""The warm worker's wire protocol, and the hook's options: one owner for both ends.

:mod:`forge_policy.worker.client` (run under ``python -I -S``, once per agent tool call) and
:mod:`forge_policy.worker.server` speak it; :mod:`forge_policy.hook` and the CLI read the
hook's options with it. Its rules are in :mod:`~forge_policy.worker.wire`, which this module
re-exports: functions and constants only, all the client loads (a class costs a fresh
interpreter some 0.2-0.7 M instructions to build). Here are what only the others need:

- the worker's half of the framing (:func:`decode_request`, :func:`encode_answer`; the client's
  half, ``encode_request`` and ``decode_answer``, is the wire module's);
- :class:`HookRequest`, a request as the worker reads it (its items:
  :func:`~forge_policy.worker.wire.hook_items`);
- :class:`HookOptions` (``--harness``, ``--event``, ``--via-serve``, ``--help``: their grammar
  is :func:`~forge_policy.worker.wire.parse_options`), checked against the harness registry
  for ``forge-policy hook`` and the worker, declared from :data:`OPTIONS` for the CLI's
  argparse.

It imports interpreter built-ins only (``struct`` in the worker's :func:`decode_request`).

>>> decode_answer(encode_answer(b"A", b"out\\n", b"", 2))
(b'A', b'out\\n', b'', 2)
>>> HookOptions.parse(["--harness=codex", "--event", "Stop"]).argv()
['--harness', 'codex', '--event', 'Stop']
"""

import time

# the client's half and every shared rule: re-exported, so the worker, the hook and the CLI
# read the whole protocol here
from forge_policy.worker.wire import *  # noqa: F403
from forge_policy.worker.wire import (
    MAGIC,
    encode_request,
    hook_fields,
    hook_items,
    options_argv,
    parse_options,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
    from typing import Protocol

    class Harness(Protocol):
        """What :meth:`HookOptions.check` reads of a harness
        (:class:`forge_policy.harness.registry.Harness`)."""

        @property
        def title(self) -> str: ...
        @property
        def events(self) -> Collection[str]: ...


def decode_request(data: bytes) -> list[bytes]:
    """The items of :func:`encode_request`; raises ``ValueError`` for anything else."""
    length = len(data)
    if data[:4] != MAGIC or length < 8:
        raise ValueError("not a worker request")
    # struct reads the lengths in place (no slice per number): 3.7 instead of 10.7 us for a
    # request of eleven items; loaded by the worker only (the client never decodes one)
    unpack = _UNPACK[0] if _UNPACK else _unpack()
    (count,) = unpack(data, 4)
    items: list[bytes] = []
    position = 8
    for _ in range(count):
        if position + 4 > length:
            raise ValueError("request cut short")
        (size,) = unpack(data, position)
        position += 4
        end = position + size
        if end > length:
            raise ValueError("request cut short")
        items.append(data[position:end])
        position = end
    if position != length:
        raise ValueError("trailing bytes after the request")
    return items


#: ``struct.Struct(">I").unpack_from``: a big-endian u32 at an offset (:func:`decode_request`)
_UNPACK: "list[Callable[[bytes, int], tuple[int]]]" = []


def _unpack() -> "Callable[[bytes, int], tuple[int]]":
    import struct

    unpack: Callable[[bytes, int], tuple[int]] = struct.Struct(">I").unpack_from
    _UNPACK.append(unpack)
    return unpack


def encode_answer(status: bytes, out: bytes, err: bytes, code: int = 0) -> bytes:
    """``MAGIC``, a status byte (``A`` answer, ``R`` refused), the exit code (one byte), stdout
    and stderr with lengths."""
    out_size, err_size = len(out).to_bytes(4, "big"), len(err).to_bytes(4, "big")
    return b"".join((MAGIC, status, bytes((code,)), out_size, out, err_size, err))


class HookRequest:
    """A ``hook`` (or ``statusline``: :data:`~forge_policy.worker.wire.KINDS`) request: the
    client's identity, the instant after which it no longer waits, its working directory, the
    hook's arguments, the raw event and the variables an answer depends on, its items in the
    order of :func:`~forge_policy.worker.wire.hook_items` (the client encodes with that function
    alone: it builds no class).

    >>> request = HookRequest(b"id", 5.0, b"/p", ["--harness", "codex"], b"{}", [b"HOME=/h"])
    >>> back = HookRequest.decode(decode_request(request.encode()))
    >>> back.args, back.deadline, back.environ, back.kind
    (['--harness', 'codex'], 5.0, [b'HOME=/h'], b'hook')
    >>> line = HookRequest(b"id", 5.0, b"/p", [], b"{}", [], kind=b"statusline")
    >>> HookRequest.decode(decode_request(line.encode())).kind
    b'statusline'
    """

    __slots__ = ("args", "cwd", "deadline", "environ", "identity", "kind", "raw")

    def __init__(
        self,
        identity: bytes,
        deadline: float,
        cwd: bytes,
        args: "Sequence[str]",
        raw: bytes,
        environ: "Sequence[bytes]",
        kind: bytes = b"hook",
    ) -> None:
        self.kind = kind
        self.identity = identity
        self.deadline = deadline
        self.cwd = cwd
        self.args = list(args)
        self.raw = raw
        self.environ = list(environ)

    def encode(self) -> bytes:
        """The request as :func:`~forge_policy.worker.wire.encode_request` frames it."""
        fields = (self.identity, self.deadline, self.cwd, self.args, self.raw, self.environ)
        return encode_request(hook_items(*fields, self.kind))

    @classmethod
    def decode(cls, items: "Sequence[bytes]") -> "HookRequest":
        """The request of a decoded ``hook`` or ``statusline`` request; ``ValueError`` for any
        other (:func:`~forge_policy.worker.wire.hook_fields`)."""
        return cls(*hook_fields(items))

    def expired(self) -> bool:
        """Whether the client has given up on this request (it evaluates in-process)."""
        return not time.monotonic() < self.deadline


class OptionsError(ValueError):
    """Arguments ``forge-policy hook`` does not take; the message says which, for stderr."""


class HookOptions:
    """``forge-policy hook``'s options, parsed once (:meth:`parse`).

    >>> HookOptions.parse(["--via-serve"])
    HookOptions(harness='claude-code', event='', via_serve=True, help=False)
    >>> HookOptions.parse(["--harness"])
    Traceback (most recent call last):
    ...
    forge_policy.worker.protocol.OptionsError: forge-policy hook: unexpected argument '--harness'
    usage: forge-policy hook [--harness NAME] [--event NAME] [--via-serve]  (event JSON on stdin)
    """

    __slots__ = ("event", "harness", "help", "via_serve")

    def __init__(
        self,
        harness: str = "claude-code",
        event: str = "",
        via_serve: bool = False,
        help: bool = False,
    ) -> None:
        self.harness = harness
        self.event = event
        self.via_serve = via_serve
        self.help = help

    def __repr__(self) -> str:
        return (
            f"HookOptions(harness={self.harness!r}, event={self.event!r}, "
            f"via_serve={self.via_serve!r}, help={self.help!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HookOptions):
            return NotImplemented
        return self.argv() == other.argv() and self.help == other.help

    __hash__ = None  # type: ignore[assignment]

    @classmethod
    def parse(
        cls, args: "Iterable[str]", harnesses: "Mapping[str, Harness] | None" = None
    ) -> "HookOptions":
        """The options in ``args`` (``-h``/``--help`` stops there: :attr:`help` is set,
        :func:`~forge_policy.worker.wire.parse_options`); raises :class:`OptionsError`. With
        ``harnesses`` (the registry) they are checked too (:meth:`check`); without, only their
        form is (the client cannot load the registry)."""
        try:
            options = cls(*parse_options(args))
        except ValueError as exc:
            raise OptionsError(str(exc)) from None
        if harnesses is not None and not options.help:
            options.check(harnesses)
        return options

    def check(self, harnesses: "Mapping[str, Harness]") -> None:
        """Raise :class:`OptionsError` unless the harness and its event are known."""
        harness = harnesses.get(self.harness)
        if harness is None:
            raise OptionsError(
                f"forge-policy hook: --harness {self.harness!r} is not supported "
                f"(supported: {', '.join(harnesses)})"
            )
        if self.event and self.event not in harness.events:
            raise OptionsError(
                f"forge-policy hook: --event {self.event!r} is not a {harness.title} hook "
                f"event forge-policy handles (known: {', '.join(harness.events)})"
            )

    def argv(self) -> list[str]:
        """The arguments that give these options back (``--help`` aside)."""
        return options_argv(self.harness, self.event, self.via_serve)

    @property
    def for_worker(self) -> bool:
        """Whether the worker can answer with these options: it neither prints help nor asks
        ``forge-policy serve``."""
        return not (self.help or self.via_serve)
