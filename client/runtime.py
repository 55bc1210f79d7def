"""Running a bean-client command: the asyncio reactor (prompt_toolkit shares its loop) or,
for a headless bot, Twisted's own; logging that never writes over the screen, and exit
codes. This is the one place where no traceback gets past: whatever fails unexpectedly, or
a Ctrl-C that no prompt took, is said in one line of words, and its details are kept in
the log file (`log_path`)."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import traceback
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TextIO

from twisted.logger import (
    FileLogObserver,
    FilteringLogObserver,
    ILogObserver,
    LogEvent,
    LogLevel,
    LogLevelFilterPredicate,
    eventAsText,
    globalLogBeginner,
    textFileLogObserver,
)

from client.gamefile import data_home


def log_path() -> Path:
    """Where the details of what went wrong are kept: bean-client.log beside the games."""
    return data_home() / "bean-client.log"


def start_logging(level: LogLevel = LogLevel.warn, to: Path | None = None) -> None:
    """Warnings and worse to stderr, as words (a failure's traceback goes only to the log
    file), and with tracebacks to the log file; or everything at `level` and worse to `to`."""
    if to is not None:
        observers = [_to_file(to)]
    else:
        observers = [FileLogObserver(sys.stderr, _words), _to_file(log_path())]
    filtered: list[ILogObserver] = [
        FilteringLogObserver(observer, [LogLevelFilterPredicate(defaultLogLevel=level)])
        for observer in observers
        if observer is not None
    ]
    globalLogBeginner.beginLoggingTo(filtered, redirectStandardIO=False)


def _to_file(path: Path) -> ILogObserver | None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        stream: TextIO = open(path, "a", encoding="utf-8")  # noqa: SIM115
    except OSError:
        return None  # the screen still gets the words
    return textFileLogObserver(stream)


def _words(event: LogEvent) -> str | None:
    """An event as a line, without the traceback of a failure it carries."""
    text = eventAsText(event, includeTraceback=False)
    if not text:
        return None
    details = f" (the details are in {log_path()})" if "log_failure" in event else ""
    return text.replace("\n", " ") + details + "\n"


def _keep_details(details: str) -> Path:
    """Append what went wrong to the log file; its path."""
    path = log_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with open(path, "a", encoding="utf-8") as log:
            log.write(details.rstrip() + "\n")
    except OSError:
        pass  # the sentence on the screen is all there is
    return path


def _unexpected(error: BaseException) -> int:
    """An error no part of bean-client expected: one sentence, the traceback in the log; 1."""
    details = "".join(traceback.format_exception(error))
    path = _keep_details(f"bean-client stopped on an unexpected error:\n{details}")
    said = f"{type(error).__name__}: {error}".rstrip(": ")
    with contextlib.suppress(OSError):  # a bot whose person's client is gone has no stderr
        print(
            f"bean-client: stopped on an unexpected error ({said}); the details are in {path}",
            file=sys.stderr,
        )
    return 1


def _loop_error(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """asyncio's own report of an error in a callback: to the log file, not the screen."""
    error = context.get("exception")
    details = "".join(traceback.format_exception(error)) if error is not None else ""
    _keep_details(f"{context.get('message', 'an asyncio callback failed')}\n{details}")


def run(
    main: Callable[[Any], Coroutine[Any, Any, int]],
    log_to: Path | None = None,
    *,
    terminal: bool = True,
) -> None:
    """Install a reactor, run `main(reactor)`, exit with the code it returns. A command that
    may use the terminal gets the asyncio reactor, whose loop prompt_toolkit shares; a
    headless one (`terminal=False`: a bot) gets Twisted's own default reactor (epoll on
    Linux), which spends less on each event: in `scripts/bench game` the bots' CPU time per
    game step fell by about 7%."""
    if terminal:
        from twisted.internet import asyncioreactor

        loop = asyncio.new_event_loop()
        loop.set_exception_handler(_loop_error)
        asyncio.set_event_loop(loop)
        asyncioreactor.install(loop)
    else:
        from twisted.internet import default

        default.install()
    from twisted.internet import defer, task

    start_logging(to=log_to)

    def started(reactor: Any) -> defer.Deferred[None]:
        def exit_with(code: int) -> None:
            if code:
                raise SystemExit(code)

        def in_words(failure: Any) -> int:
            if failure.check(SystemExit):
                return failure
            return _unexpected(failure.value)

        running = defer.Deferred.fromCoroutine(main(reactor))
        return running.addErrback(in_words).addCallback(exit_with)

    try:
        task.react(started)
    except KeyboardInterrupt:  # a Ctrl-C that no prompt took as a key
        print("bean-client: stopped by Ctrl-C.", file=sys.stderr)
        raise SystemExit(1) from None
    except Exception as error:  # the one place that says any error in words
        raise SystemExit(_unexpected(error)) from None
