"""`bean-lobby`: run the lobby until interrupted. The first stdout line says where it listens."""

from __future__ import annotations

import resource
import sys
from typing import Any

from twisted.internet.interfaces import IListeningPort
from twisted.logger import (
    FilteringLogObserver,
    LogLevel,
    LogLevelFilterPredicate,
    globalLogBeginner,
    textFileLogObserver,
)
from twisted.python import usage
from twisted.python.failure import Failure

from lobby.service import LobbyOptions, makeService

# Descriptors beyond the connections: the listening socket, the reactor's own, stdio, logs.
_SPARE_DESCRIPTORS = 64


def raise_descriptor_limit(wanted: int) -> int:
    """Raise the soft limit on open files towards `wanted` (never above the hard limit)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        return target
    return soft


def main(argv: list[str] | None = None) -> None:
    options = LobbyOptions()
    try:
        options.parseOptions(sys.argv[1:] if argv is None else argv)
    except usage.UsageError as error:
        print(f"bean-lobby: {error}\n\n{options}", file=sys.stderr)
        sys.exit(2)
    limit = raise_descriptor_limit(options["max-connections"] + _SPARE_DESCRIPTORS)
    level = LogLevel.warn if options["quiet"] else LogLevel.info
    observer = FilteringLogObserver(
        textFileLogObserver(sys.stderr), [LogLevelFilterPredicate(defaultLogLevel=level)]
    )
    globalLogBeginner.beginLoggingTo([observer], redirectStandardIO=False)
    if limit < options["max-connections"] + _SPARE_DESCRIPTORS:
        print(
            f"bean-lobby: warning: only {limit} open files allowed; "
            f"fewer than --max-connections={options['max-connections']} clients fit",
            file=sys.stderr,
        )

    from twisted.internet import reactor as global_reactor

    reactor: Any = global_reactor
    exit_code = [0]
    service = makeService(options, reactor)

    def announce(port: IListeningPort) -> None:
        address: Any = port.getHost()
        where = f"{address.host}:{address.port}" if hasattr(address, "port") else str(address)
        print(f"bean-lobby listening on {where}", flush=True)
        print(
            f"bean-lobby key {options['identity'].fingerprint} (players' clients remember it, "
            "and warn if it ever changes)",
            flush=True,
        )

    def cannot_listen(failure: Failure) -> None:
        print(f"bean-lobby: cannot listen on {options['listen']}: {failure.value}", file=sys.stderr)
        exit_code[0] = 1
        reactor.stop()

    service.startService()
    reactor.addSystemEventTrigger("before", "shutdown", service.stopService)
    service.getServiceNamed("listener").listening.addCallbacks(announce, cannot_listen)
    reactor.run()
    sys.exit(exit_code[0])
