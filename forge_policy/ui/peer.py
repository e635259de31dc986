"""Who is at the other end of a loopback TCP connection: the uid that owns the peer's socket.

On Linux the kernel lists every TCP socket with its owner's uid in ``/proc/net/tcp`` (IPv4)
and ``/proc/net/tcp6`` (IPv6, where an IPv4 peer on a dual-stack socket shows as
``::ffff:127.0.0.1``). The peer of a connection to our ``server_port`` is the socket whose local
port is the peer's port and whose remote port is ours. Elsewhere (macOS, Windows) there is no
such table: :func:`available` is false, and the dashboard relies on its token alone (and says
so when it starts).

>>> line = ("   1: 0100007F:A1B2 0100007F:1F90 01 00000000:00000000 00:00000000 "
...         "00000000  1000        0 12345 1 0000000000000000 20 4 30 10 -1")
>>> _owner([line], peer_port=0xA1B2, server_port=0x1F90)
1000
>>> _owner([line], peer_port=0xA1B3, server_port=0x1F90) is None
True
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

TABLES = ("/proc/net/tcp", "/proc/net/tcp6")
#: 127.0.0.1 as the tables print it: in ``tcp``, and mapped into IPv6 in ``tcp6``
LOOPBACK = frozenset({"0100007F", "0000000000000000FFFF00000100007F"})


def available() -> bool:
    """Whether this system lists sockets with their owners (Linux ``/proc/net/tcp``)."""
    return os.path.exists(TABLES[0])


def peer_uid(peer_port: int, server_port: int) -> int | None:
    """The uid owning the client socket of a loopback connection from ``peer_port`` to
    ``server_port``; None when no table lists it (then the caller refuses)."""
    for table in TABLES:
        try:
            with open(table, encoding="ascii", errors="replace") as handle:
                found = _owner(handle, peer_port=peer_port, server_port=server_port)
        except OSError:
            continue
        if found is not None:
            return found
    return None


def _owner(lines: Iterable[str], *, peer_port: int, server_port: int) -> int | None:
    for line in lines:
        fields = line.split()
        # sl local rem st queues timer retrnsmt uid ...; the header line has no ':' port
        if len(fields) < 8 or ":" not in fields[1] or ":" not in fields[2]:
            continue
        try:
            local = int(fields[1].rsplit(":", 1)[1], 16)
            remote = int(fields[2].rsplit(":", 1)[1], 16)
            uid = int(fields[7])
        except ValueError:
            continue
        here, there = fields[1].rsplit(":", 1)[0], fields[2].rsplit(":", 1)[0]
        if local == peer_port and remote == server_port and {here, there} <= LOOPBACK:
            return uid
    return None
