"""What `bean-client` and `bean-lobby` say about themselves on the command line: every option and
argument explained, `--version` naming this program and its protocol, and `play --bots` taking
what its help says (the real programs, as a person runs them)."""

from __future__ import annotations

import argparse
import re
import subprocess
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

from client.cli import build_parser
from lobby.service import LobbyOptions
from protocol.cards import MAX_PLAYERS, MIN_PLAYERS
from protocol.messages import PROTOCOL_VERSION
from tests.processes import BIN, isolated_env


def run(tmp_path: Path, program: str, *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / program), *arguments],
        capture_output=True,
        text=True,
        env=isolated_env(tmp_path),
        timeout=60,
    )


def parsers(parser: argparse.ArgumentParser, name: str) -> Iterator[tuple[str, Any]]:
    """The parser and those of its subcommands, each with the command line that reaches it."""
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command, subparser in action.choices.items():
                yield from parsers(subparser, f"{name} {command}")


def test_every_option_and_argument_of_both_commands_says_what_it_is_for() -> None:
    unexplained = [
        f"{where}: {'/'.join(action.option_strings) or action.dest}"
        for where, parser in parsers(build_parser(), "bean-client")
        for action in parser._actions
        if not (action.help or "").strip()
    ]
    lobby = LobbyOptions()
    unexplained += [
        f"bean-lobby: --{option.rstrip('=')}"
        for option in lobby.longOpt
        if not lobby.docs.get(option.rstrip("="), "").strip()
    ]
    assert unexplained == []


@pytest.mark.parametrize("program", ["bean-client", "bean-lobby"])
def test_version_names_this_program_its_release_and_its_protocol(
    tmp_path: Path, program: str
) -> None:
    said = run(tmp_path, program, "--version")
    assert said.returncode == 0, said.stderr
    release = version("bohnanza-p2p")
    assert (
        said.stdout == f"{program} {release} (bohnanza-p2p, protocol version {PROTOCOL_VERSION})\n"
    )


def test_play_refuses_exactly_the_bots_its_help_does_not_offer(tmp_path: Path) -> None:
    """The help's ranges are the rules' (3 to 7 players, the person one of them unless
    --no-human), and a number just outside either range is refused in words."""
    helped = " ".join(run(tmp_path, "bean-client", "play", "--help").stdout.split())
    offered = re.search(r"--bots N bots at the table \(default 3\): (\d) to (\d) with you, "
                        r"(\d) to (\d) with --no-human", helped)  # fmt: skip
    assert offered, helped
    with_you = (int(offered[1]), int(offered[2]))
    alone = (int(offered[3]), int(offered[4]))
    assert with_you == (MIN_PLAYERS - 1, MAX_PLAYERS - 1)
    assert alone == (MIN_PLAYERS, MAX_PLAYERS)
    outside = [[str(with_you[0] - 1)], [str(with_you[1] + 1)]]
    outside += [[str(alone[0] - 1), "--no-human"], [str(alone[1] + 1), "--no-human"]]
    for arguments in outside:
        refused = run(tmp_path, "bean-client", "play", "--bots", *arguments)
        assert refused.returncode == 2, arguments
        assert refused.stderr.startswith(f"bean-client: --bots {arguments[0]} makes a table of ")
        assert "--bots takes 2 to 6 with you, 3 to 7 with --no-human\n" in refused.stderr
        assert "Traceback" not in refused.stderr
