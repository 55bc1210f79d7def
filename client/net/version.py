"""What `--version` says, for `bean-client` and `bean-lobby` alike: this program's release, from
the installed package's metadata, and the protocol version it speaks (the lobby and every
player's client must speak the same one)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from protocol.messages import PROTOCOL_VERSION

PACKAGE = "bohnanza-p2p"


def version_line(program: str) -> str:
    """ "bean-lobby 0.1.0 (bohnanza-p2p, protocol version 2)"."""
    try:
        release = version(PACKAGE)
    except PackageNotFoundError:  # run from a source tree that was never installed
        release = "(not installed)"
    return f"{program} {release} ({PACKAGE}, protocol version {PROTOCOL_VERSION})"
