"""The terminal REPL: a person's seat at the table, and the lobby before and after a game.

prompt_toolkit runs on the asyncio loop the Twisted reactor also runs on; the prompt is awaited
(`prompt_async`), never blocking the reactor, and everything that happens meanwhile is printed
above it. Parsing, completion and what the screen shows are pure (`commands`,
`completion`, `render`); this module wires them to the game driver and the lobby.
See docs/repl.md for the commands.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import math
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from textwrap import fill
from typing import Any, TypeVar

from prompt_toolkit import PromptSession
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.input import Input
from prompt_toolkit.output import Output
from prompt_toolkit.patch_stdout import patch_stdout
from twisted.internet.defer import Deferred

from client.game import Outcome, PeerGame, Player
from client.identity_store import load_or_create
from client.mesh import PeerListener
from client.screen.commands import (
    CommandError,
    LeaveGame,
    Question,
    Say,
    ShowView,
    Submit,
    View,
    parse_game_command,
)
from client.screen.completion import GameCompleter
from client.screen.player_view import PlayerView, join_words
from client.screen.render import (
    STYLE,
    WIDTH,
    colour_wanted,
    render_chat,
    render_error,
    render_event,
    render_hand,
    render_help,
    render_question,
    render_refusal,
    render_table,
    render_table_code,
    render_takers,
    render_toolbar,
    render_who,
    show,
    toolbar_proof_warning,
)
from client.session import (
    Seat,
    agree_on_table,
    deck_workers,
    match,
    open_peer_port,
    room_options,
    start_game,
)
from protocol.identity import Identity
from protocol.lockstep import StepReport
from protocol.messages import GameStart, RoomOptions
from protocol.rules import RuleError, bids_on
from protocol.table import MIN_PROOF_ROUNDS

LOG_LINES = 40
CLOCK_REFRESH_SECONDS = 1.0
CLOCK_WARNING_SECONDS = 10
T = TypeVar("T")


@dataclass
class Terminal:
    """Where the REPL reads and writes: the real terminal, or pipes in tests."""

    colour: bool
    input: Input | None = None
    output: Output | None = None
    printed: list[str] = field(default_factory=list)  # plain text of everything shown

    def show(self, text: FormattedText) -> None:
        self.printed.append("".join(fragment[1] for fragment in text))
        show(text, self.colour, self.output)

    def say(self, text: str) -> None:
        """A sentence of plain text, wrapped between words to the screen's width."""
        wrapped = "\n".join(
            fill(line, WIDTH, break_long_words=False, break_on_hyphens=False)
            for line in text.splitlines()
        )
        self.show(FormattedText([("", wrapped)]))


class HumanPlayer(Player):
    """A person at the seat: what happens is printed as it happens; the screen refreshes."""

    def __init__(self, terminal: Terminal, refresh: Callable[[], None]) -> None:
        self.terminal = terminal
        self.refresh = refresh
        self.log: list[FormattedText] = []
        self.on_finish: Callable[[], None] = lambda: None
        self._takers: dict[int, list[int]] = {}  # my offers to everyone: the takers last shown

    def view(self, game: PeerGame) -> PlayerView | None:
        snapshot = game.view
        if snapshot.rules is None:
            return None
        return PlayerView(snapshot.rules, snapshot.seat, snapshot.hand, snapshot.names)

    def _print(self, text: FormattedText) -> None:
        if text:
            self.log = [*self.log[-LOG_LINES + 1 :], text]
            self.terminal.show(text)

    def step_played(self, game: PeerGame, report: StepReport) -> None:
        names, me = game.names, game.seat
        if report.start_player is not None:
            starter = (
                "You start" if report.start_player == me else f"{names[report.start_player]} starts"
            )
            self.terminal.say(f"{starter}. The deck is being shuffled by everyone together...")
        for applied in report.applied:
            self._print(
                render_event(applied.before, applied.seat, applied.action, applied.after, names, me)
            )
        rules = game.view.rules
        for refusal in report.refusals:
            if rules is not None and refusal.seat == me:  # others' are their own business
                self._print(render_refusal(refusal, rules, names, me))
        self._show_takers(game)
        if report.dealt:
            view = self.view(game)
            if view is not None:
                self.terminal.say("The cards are dealt.")
                self.terminal.show(render_hand(view))
        self.refresh()

    def _show_takers(self, game: PeerGame) -> None:
        """The takers of my offers to everyone, each time they change, with the lines that
        take them."""
        view = self.view(game)
        if view is None:
            return
        takers = {
            offer.id: [bid.bidder for bid in bids_on(view.state, offer.id)]
            for offer in view.state.offers
            if offer.maker == view.seat
        }
        for offer_id, seats in takers.items():
            if seats and seats != self._takers.get(offer_id):
                self._print(render_takers(view, offer_id))
        self._takers = takers

    def notice(self, game: PeerGame, text: str) -> None:
        self._print(render_error(text))
        self.refresh()

    def chat(self, game: PeerGame, seat: int, text: str) -> None:
        self._print(render_chat(game.names[seat], text))

    def finished(self, game: PeerGame, outcome: Outcome) -> None:
        self.terminal.say(describe_outcome(game, outcome))
        self.on_finish()


def describe_outcome(game: PeerGame, outcome: Outcome) -> str:
    names = game.names
    if outcome.cheat is not None:
        cheat = outcome.cheat
        who = "The deal itself" if cheat.seat is None else names[cheat.seat]
        return (
            f"The game is stopped: {who} {cheat.reason} (step {cheat.step}). The signed "
            f"messages that prove it are in {game.gamefile.path}."
        )
    if outcome.gone:
        who = join_words([names[seat] for seat in outcome.gone])
        gone_seeds = tuple(f"seat {seat}:" for seat in outcome.gone)
        held = [f for f in outcome.audit_findings if not f.startswith(gone_seeds)]
        audit = (
            "the audit FAILED: " + "; ".join(held)
            if held
            else "the audit of what was played found nothing against anyone still here"
        )
        return f"The game ended without {who}, gone for good, by everyone else's vote: {audit}."
    if outcome.final is None:
        return "You left the game."
    final = outcome.final
    ranking = sorted(zip(final.result.scores, names, strict=True), reverse=True)
    scores = ", ".join(f"{name} {score}" for score, name in ranking)
    winners = " and ".join(names[s] for s in final.result.winners)
    agreed = "Every player's machine agrees" if final.agreed else "The machines DISAGREE"
    audit = (
        "the audit passed"
        if final.audit_passed
        else "the audit FAILED: " + "; ".join(final.audit_findings)
    )
    return f"Game over. {winners} won. Final scores: {scores}. {agreed}; {audit}."


class GameScreen:
    """Game mode: commands in, the table out, until the game ends."""

    def __init__(self, terminal: Terminal) -> None:
        self.terminal = terminal
        self.game: PeerGame | None = None
        self.player = HumanPlayer(terminal, self._refresh)
        self.session: PromptSession[str] = PromptSession(
            history=InMemoryHistory(),
            completer=GameCompleter(self._view),
            complete_while_typing=False,
            bottom_toolbar=self._toolbar,
            style=STYLE,
            input=terminal.input,
            output=terminal.output,
        )
        self.player.on_finish = self._interrupt
        self._leaving = False  # "leave" was typed once

    def _view(self) -> PlayerView | None:
        return None if self.game is None else self.player.view(self.game)

    def _toolbar(self) -> FormattedText:
        game = self.game
        if game is None:
            return FormattedText([("class:toolbar", "Joining the game...")])
        progress = _deck_progress(game)
        view = self._view()
        if view is None:
            return FormattedText([("class:toolbar", progress or "Choosing who starts...")])
        toolbar = render_toolbar(view)
        weak = toolbar_proof_warning(game.roster.options.proof_rounds)
        if weak is not None:  # on top: the last line stays whom the game waits for
            toolbar = FormattedText([("class:error", weak), ("", "\n"), *toolbar])
        if progress:
            toolbar = FormattedText([*toolbar, ("", "\n"), ("class:toolbar", progress)])
        left = game.turn_seconds_left()
        if left is not None:
            style = "class:error" if left <= CLOCK_WARNING_SECONDS else "class:title"
            toolbar = FormattedText([*toolbar, ("", "\n"), (style, _clock_words(left))])
        return toolbar

    def _refresh(self) -> None:
        redraw(self.session)

    def _interrupt(self) -> None:
        end_prompt(self.session)

    async def play(self, game: PeerGame) -> Outcome:
        """The prompt until the game ends (an asyncio coroutine: run it with `in_twisted`)."""
        self.game = game
        question: Question | None = None
        name = game.names[game.seat]
        clock = game.turn_seconds > 0  # its countdown is redrawn with no key pressed
        while game.outcome is None:
            try:
                with patch_stdout(raw=True):
                    line = await self.session.prompt_async(
                        f"{name}> ", refresh_interval=CLOCK_REFRESH_SECONDS if clock else 0
                    )
            except (EOFError, KeyboardInterrupt):
                game.stop("the player closed the REPL")
                break
            if game.outcome is not None or not line.strip():
                continue
            question = self._command(game, line, question)
        assert game.outcome is not None  # set when the game ended or the player left
        return game.outcome

    def _command(self, game: PeerGame, line: str, question: Question | None) -> Question | None:
        view = self._view()
        if view is None:
            self.terminal.show(render_error("wait: the cards are still being shuffled and dealt"))
            return question
        try:
            command = parse_game_command(line, view, question)
        except CommandError as error:
            self.terminal.show(render_error(str(error)))
            return question
        if isinstance(command, Question):
            self.terminal.show(render_question(command))
            return command
        if isinstance(command, Submit):
            try:
                game.submit(command.actions)
            except RuleError as error:
                self.terminal.show(render_error(view.readable(error)))
        elif isinstance(command, ShowView):
            self._show(command, view)
        elif isinstance(command, Say):
            game.chat(command.text)
            self.terminal.show(render_chat(game.names[game.seat], command.text))
        elif isinstance(command, LeaveGame):
            if self._leaving:
                game.stop("the player left")
            else:
                self._leaving = True
                self.terminal.show(
                    render_error(
                        "the others cannot go on without you; type leave again to leave the game"
                    )
                )
                return question
        self._leaving = False
        return None

    def _show(self, command: ShowView, view: PlayerView) -> None:
        game = self.game
        assert game is not None
        if command.view is View.TABLE:
            self.terminal.show(render_table(view))
            self.terminal.show(render_table_code(game.table.code, game.roster.options.proof_rounds))
        elif command.view is View.WHO:
            keys = [member.public_key for member in game.roster.seats]
            self.terminal.show(render_who(view, keys, game.view.connected, game.table.code))
        elif command.view is View.HAND:
            self.terminal.show(render_hand(view))
        elif command.view is View.LOG:
            for text in self.player.log[-LOG_LINES:]:
                self.terminal.show(text)
        else:
            self.terminal.show(render_help(command.topic))


def redraw(session: PromptSession[str]) -> None:
    """Draw the prompt and its toolbar again: what they show has changed."""
    app = session.app
    if app.is_running:
        app.invalidate()


def end_prompt(session: PromptSession[str]) -> None:
    """End the prompt being awaited (it returns an empty line): something else takes over."""
    app = session.app
    if app.is_running and not app.future.done():  # type: ignore[union-attr]
        app.exit(result="")


def in_twisted(coroutine: Coroutine[Any, Any, T]) -> Deferred[T]:
    """Await an asyncio coroutine (prompt_toolkit's) from Twisted code on the same loop."""
    return Deferred.fromFuture(asyncio.ensure_future(coroutine))


def _clock_words(left: float) -> str:
    return f"Your clock: {math.ceil(left)} s left, then the default moves are made for you"


def _deck_progress(game: PeerGame) -> str:
    """What the deck is doing while an epoch is shuffled and locked by everyone."""
    if game.view.dealing is None:
        return ""
    epoch, round_, rounds = game.view.dealing
    what = "Dealing" if epoch == 0 else "Reshuffling the discard pile"
    return f"{what}: every player shuffles and locks the deck (round {round_ + 1} of {rounds})"


# --- Playing a roster at the REPL -------------------------------------------------------------


async def play_roster(
    reactor: Any,
    seat: Seat,
    identity: Identity,
    listener: PeerListener,
    roster: GameStart,
    terms: RoomOptions | None,
    screen: GameScreen,
) -> Outcome:
    """Agree on the table with the others, then play its game at this screen until it ends;
    returns once every link is closed (the peer port may then serve the next game).
    TableRefused, saying why, if the table does not start."""
    say = screen.terminal.say
    setup = await agree_on_table(reactor, seat, identity, listener, roster, terms, say)
    with deck_workers() as executor:
        game = start_game(reactor, seat, identity, listener, setup, screen.player, executor)
        screen.game = game
        outcome = await in_twisted(screen.play(game))
        await game.done
    return outcome


# --- bean-client play: the person's seat at a local table ------------------------------------


async def play_human_seat(
    reactor: Any,
    args: argparse.Namespace,
    host: str,
    port: int,
    seats: int,
    screen: GameScreen | None = None,
) -> Outcome:
    """Join the local lobby as the person and play the game in the REPL (tests bring their
    own screen, with pipes for a terminal)."""
    screen = screen or GameScreen(Terminal(colour_wanted()))
    terminal = screen.terminal
    name = args.name or getpass.getuser()
    listen = f"tcp:0:interface={host}"
    # The person chose the proof rounds of a table of their own bots: that is the local choice.
    weak = args.allow_weak_proofs or args.proof_rounds < MIN_PROOF_ROUNDS
    seat = Seat.from_args(
        args, name, f"play-{name}", host, port, listen=listen, allow_weak_proofs=weak
    )
    identity = load_or_create(seat.profile)
    options = room_options(args)
    listener = await open_peer_port(reactor, seat.listen, identity)
    try:
        terminal.say(f"Waiting for {seats - 1} bots to join the table...")
        roster = await match(reactor, seat, seats, options, identity, listener)
        terminal.say("Everyone is here: " + ", ".join(s.name for s in roster.seats) + ".")
        return await play_roster(reactor, seat, identity, listener, roster, options, screen)
    finally:
        await listener.stop()
