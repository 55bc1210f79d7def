"""Plain mode, a whole game: a seeded game against two `bean-client bot` processes through a
real lobby, played at a plain-mode screen, gives the same transcript every run, kept in
tests/golden/plain_game.txt (what changes from run to run, the key fingerprints, masked).
Any change to a line of plain mode shows here as a difference with the line and its place.

Every secret repeats as in `scripts/bench game` (scripts/bench_bot.py: the seats' secrets
come from the seed and their names, the game identity from the seed), for the bots and, in
this process, for the person's seat. The person's moves are the greedy bot's, typed at the
screen as command lines the moment each step is shown (as a bot decides), so that they land
in the same steps every run; plain mode reads and shows them like any typed line.

After a deliberate change of plain mode's lines, write the new transcript with
`UPDATE_GOLDEN=1 pytest tests/test_plain_golden.py` and read the difference before committing.
"""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from prompt_toolkit.output import DummyOutput
from twisted.internet import reactor
from twisted.internet.defer import Deferred

import client.net.lobby_client
from client.bots import BotPlayer, BotProcess, GreedyBot, spawn_bot
from client.cli import build_parser
from client.game import PeerGame
from client.screen import GameScreen, Terminal, play_human_seat
from client.screen.commands import command_for
from client.screen.plain import PlainLines
from protocol.rules import Action
from tests.lobby_support import start_lobby
from tests.processes import LOCAL
from tests.waiting import Watched, within

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).with_name("golden") / "plain_game.txt"
SEED = "plain golden game"
GAME_SECONDS = 150
FINGERPRINT = re.compile(r"\b[a-z0-9]{4}(?:-[a-z0-9]{4}){4}\b")


def bench_bot() -> Any:
    spec = importlib.util.spec_from_file_location("bench_bot", ROOT / "scripts" / "bench_bot.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class TypedGame:
    """The driver as the greedy bot sees it, except that its moves are typed at the screen."""

    def __init__(self, game: PeerGame, screen: GameScreen) -> None:
        self._game = game
        self._screen = screen

    def __getattr__(self, name: str) -> Any:
        return getattr(self._game, name)

    def submit(self, actions: list[Action]) -> None:
        view = self._screen.player.view(self._game)
        assert view is not None
        lines = []
        for action in actions:
            lines.append(command_for(action, view))
            view = view.after([action])
        line = "; ".join(lines)
        self._screen.terminal.say(line, label="typed")
        self._screen.enter(line)


class SteadyTypist(BotPlayer):
    """Types the greedy bot's moves at a screen, when the screen has shown a step."""

    def __init__(self, screen: GameScreen) -> None:
        super().__init__(reactor, GreedyBot())
        player = screen.player
        shown = player.step_played

        def step_played(game: PeerGame, report: Any) -> None:
            shown(game, report)
            self.step_played(TypedGame(game, screen), report)  # type: ignore[arg-type]

        player.step_played = step_played  # type: ignore[method-assign]
        player.may_act = lambda game: self.may_act(TypedGame(game, screen))  # type: ignore[method-assign,arg-type]
        finished = player.finished

        def on_finish(game: PeerGame, outcome: Any) -> None:
            self.finished(game, outcome)
            finished(game, outcome)

        player.finished = on_finish  # type: ignore[method-assign]


class Seated(Watched):
    """Who the lobby has seated, in order (this process's seat, and the bots' word)."""

    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []

    def add(self, name: str) -> None:
        self.names.append(name)
        self.changed()


class SeatedBot(BotProcess):
    """A bench bot, which says on stderr when the lobby has seated it."""

    def __init__(self, name: str, seated: Seated) -> None:
        super().__init__()
        self.name, self.seated = name, seated

    def errReceived(self, data: bytes) -> None:
        super().errReceived(data)
        if b"bench: seated" in data:
            self.seated.add(self.name)


@pytest.fixture
def keyboard() -> Iterator[Any]:
    """The plain terminal's input: a pipe nobody writes to (the moves are typed directly)."""
    read, write = os.pipe()
    with os.fdopen(read) as lines, os.fdopen(write, "w"):
        yield lines


def masked(lines: list[str]) -> list[str]:
    return [FINGERPRINT.sub("<key>", line) for line in lines]


@pytest.mark.slow
@pytest_twisted.ensureDeferred
async def test_a_seeded_game_in_plain_mode_prints_the_golden_transcript(
    keyboard: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    for module, attribute, value in bench_bot().same_game_patches(SEED, "ann"):
        monkeypatch.setattr(module, attribute, value)
    seated = Seated()
    quick_match = client.net.lobby_client.LobbyClient.quick_match

    def quick_match_and_say(self: Any, *args: Any) -> Any:
        return quick_match(self, *args).addCallback(lambda room: seated.add("ann") or room)

    monkeypatch.setattr(client.net.lobby_client.LobbyClient, "quick_match", quick_match_and_say)
    lobby = await start_lobby()
    terminal = Terminal(colour=False, output=DummyOutput(), lines=PlainLines(keyboard))
    screen = GameScreen(terminal)
    SteadyTypist(screen)
    args = build_parser().parse_args(["play", "--name", "ann", "--no-proofs", "--plain"])
    bots: list[BotProcess] = []
    try:
        playing = Deferred.fromCoroutine(
            play_human_seat(reactor, args, LOCAL, lobby.port, 3, screen)
        )
        await seated.when(lambda s: s.names == ["ann"], 30)
        for name in ("bot1", "bot2"):  # one by one: the seats are in the order they sit
            bots.append(
                spawn_bot(reactor, bot_arguments(lobby.port, name), SeatedBot(name, seated))
            )
            await seated.when(lambda s, n=name: n in s.names, 30)
        outcome = await within(playing, GAME_SECONDS)
        for bot in bots:
            _, err, code = await within(bot.ended, 30)
            assert code == 0, err.decode()[-2000:]
    finally:
        for bot in bots:
            bot.stop(reactor)
        await lobby.stop()
    assert outcome.final is not None and outcome.final.audit_passed
    transcript = masked("\n".join(terminal.printed).splitlines())
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text("\n".join(transcript) + "\n")
    golden = GOLDEN.read_text().splitlines()
    for number, (seen, kept) in enumerate(zip(transcript, golden, strict=False), 1):
        assert seen == kept, f"line {number} of {GOLDEN.name} differs"
    assert len(transcript) == len(golden), "the transcript and the golden file differ in length"


def bot_arguments(port: int, name: str) -> list[str]:
    return [
        str(ROOT / "scripts" / "bench_bot.py"), "sealed", SEED, f"{LOCAL}:{port}",
        "--seats", "3", "--name", name, "--profile", name, "--json",
        "--listen", f"tcp:0:interface={LOCAL}", "--no-proofs", "--allow-weak-proofs",
    ]  # fmt: skip
