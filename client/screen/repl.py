"""The terminal REPL: a person's seat at the table, and the lobby before and after a game.

prompt_toolkit runs on the asyncio loop the Twisted reactor also runs on; the prompt is awaited
(`prompt_async`), never blocking the reactor, and everything that happens meanwhile is printed
above it. Parsing, completion and what the screen shows are pure (`commands`,
`completion`, `render`); this module wires them to the game driver and the lobby.
A `Terminal` with `lines` is in plain mode (`plain`): lines are read without prompt_toolkit and
everything is shown by `plain.PlainLooks`, one line per thing; the commands are the same.
See docs/repl.md for the commands.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import math
import os
import shutil
import signal
import sys
from collections.abc import Callable, Coroutine, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from textwrap import fill
from typing import Any, Protocol, TypeVar

from prompt_toolkit import PromptSession
from prompt_toolkit.application import get_app_session
from prompt_toolkit.formatted_text import FormattedText, to_plain_text
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.input import Input
from prompt_toolkit.output import Output
from prompt_toolkit.patch_stdout import patch_stdout
from twisted.internet.defer import Deferred

from client.game import Outcome, PeerGame, Player
from client.net import PeerListener, load_or_create
from client.presence import PresenceNews
from client.resume import resume_game
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
from client.screen.plain import (
    PlainLines,
    PlainLooks,
    PlainPrompt,
    ascii_punctuation,
    lines_of,
    plain_wanted,
    status_words,
)
from client.screen.player_view import PlayerView, bot_label, join_words
from client.screen.render import (
    STYLE,
    WIDTH,
    colour_wanted,
    render_beans,
    render_chat,
    render_error,
    render_event,
    render_hand,
    render_help,
    render_netcheck,
    render_question,
    render_refusal,
    render_table,
    render_table_code,
    render_takers,
    render_toolbar,
    render_who,
    rewrap,
    show,
    toolbar_proof_warning,
    toolbar_relayed,
)
from client.screen.story import render_story
from client.session import (
    Seat,
    agree_on_table,
    deck_workers,
    match,
    open_peer_port,
    room_options,
    start_game,
)
from client.story import GameStory
from protocol.identity import Identity
from protocol.lockstep import StepReport
from protocol.messages import GameStart
from protocol.rules import Action, MakeOffer, RuleError, State, accepters, bids_on
from protocol.steps import Applied, Refusal
from protocol.table import RoomTerms

LOG_LINES = 40
MIN_WIDTH = 40  # narrower terminals get this, cut by the terminal
LEAVE_QUESTION = (
    "the others cannot go on without you; type leave again (or press Ctrl-C) to leave the "
    "game; any other command plays on"
)
CLOCK_REFRESH_SECONDS = 1.0
CLOCK_WARNING_SECONDS = 10
T = TypeVar("T")


@dataclass
class Terminal:
    """Where the REPL reads and writes: the real terminal, or pipes in tests; with `lines`,
    in plain mode (lines read from there, nothing drawn but lines)."""

    colour: bool
    input: Input | None = None
    output: Output | None = None
    printed: list[str] = field(default_factory=list)  # plain text of everything shown
    lines: PlainLines | None = None
    bell: bool = True  # BEL when my turn starts or an offer is made to me (--no-bell: off)
    _warned_narrow: bool = field(default=False, init=False, repr=False)

    @property
    def plain(self) -> bool:
        return self.lines is not None

    def columns(self) -> int:
        """How wide the terminal is (80 for plain mode's lines, which are never wrapped)."""
        if self.plain:
            return WIDTH
        if self.output is not None:
            return self.output.get_size().columns
        return shutil.get_terminal_size((WIDTH, 24)).columns

    def width(self) -> int:
        """The columns the screen is drawn in: the terminal's, at most 80."""
        return max(min(self.columns(), WIDTH), MIN_WIDTH)

    def warn_if_narrow(self) -> None:
        """Say once that a terminal under 80 columns gets a narrower screen."""
        columns = self.columns()
        if columns < WIDTH and not self._warned_narrow:
            self._warned_narrow = True
            self.say(
                f"This terminal is {columns} columns wide; the game is drawn for {WIDTH}: "
                "lines are wrapped to fit, and some are shortened."
            )

    def ring(self) -> None:
        """The terminal's bell (BEL), unless it is turned off; never into a file or a pipe."""
        if not self.bell:
            return
        if self.output is None and not sys.stdout.isatty():
            return
        output = self.output or get_app_session().output  # not through patched stdout: a BEL
        output.bell()  # moves no cursor, so the prompt need not be erased and drawn again
        output.flush()

    def show(self, text: FormattedText) -> None:
        """Show text; in plain mode with plain ASCII punctuation (a screen reader reads "·"
        or "…" aloud by name)."""
        if self.plain:
            text = FormattedText([("", ascii_punctuation(to_plain_text(text)))])
        self.printed.append("".join(fragment[1] for fragment in text))
        show(text, self.colour, self.output)

    def say(self, text: str, label: str = "note") -> None:
        """A sentence of plain text, wrapped between words to the screen's width (in plain
        mode, never: each line is one thing, and starts with its `label`)."""
        if self.plain:
            lines = [f"{label}: {line.strip()}" for line in text.splitlines() if line.strip()]
            self.show(lines_of(lines))
            return
        wrapped = "\n".join(
            fill(line, self.width(), break_long_words=False, break_on_hyphens=False)
            for line in text.splitlines()
        )
        self.show(FormattedText([("", wrapped)]))

    def error(self, text: str) -> None:
        """What cannot be done and why: in red, or in plain mode labelled `error:`."""
        self.show(lines_of([f"error: {text}"]) if self.plain else render_error(text, self.width()))

    def _line(self, text: str) -> None:
        """A line as it is, already labelled (plain mode's status and questions)."""
        self.show(FormattedText([("", text)]))

    def prompt(
        self,
        toolbar: Callable[[], FormattedText] | None = None,
        completer: Any = None,
        status: Callable[[], str | None] = lambda: None,
        asks: bool = False,
    ) -> LinePrompt:
        """A prompt for lines: prompt_toolkit's with its toolbar and completion, or in plain
        mode the lines as they come, with `status` said when it changes (and the message of a
        prompt that `asks` a question said as a line)."""
        if self.lines is not None:
            return PlainPrompt(self.lines, self._line, status, asks)
        session: PromptSession[str] = PromptSession(
            history=InMemoryHistory(),
            completer=completer,
            complete_while_typing=False,
            bottom_toolbar=toolbar,
            style=STYLE,
            input=self.input,
            output=self.output,
        )
        return RichPrompt(session)


class Interrupted(Exception):
    """Ctrl-C at a prompt. Not KeyboardInterrupt: asyncio lets that out of the task awaiting
    the prompt and out of the event loop, past every caller, as a traceback."""


class LinePrompt(Protocol):
    """Where the REPL reads a line: `line` raises EOFError when the person closes it (Ctrl-D;
    in plain mode, once input has ended for good) or Interrupted for Ctrl-C; `redraw` when
    what the toolbar shows has changed; `end` ends the line awaited (it returns empty) when
    something else takes over."""

    async def line(
        self,
        message: str,
        pre_run: Callable[[], None] | None = None,
        refresh_interval: float = 0.0,
    ) -> str: ...

    def redraw(self) -> None: ...

    def end(self) -> None: ...


class RichPrompt:
    """prompt_toolkit's prompt, awaited, with what is printed meanwhile shown above it."""

    def __init__(self, session: PromptSession[str]) -> None:
        self.session = session

    async def line(
        self,
        message: str,
        pre_run: Callable[[], None] | None = None,
        refresh_interval: float = 0.0,
    ) -> str:
        with patch_stdout(raw=True):
            try:
                return await self.session.prompt_async(
                    message, pre_run=pre_run, refresh_interval=refresh_interval
                )
            except KeyboardInterrupt:
                raise Interrupted from None
            finally:
                self.session.app.erase_when_done = False  # a line typed stays on the screen

    def redraw(self) -> None:
        redraw(self.session)

    def end(self) -> None:
        end_prompt(self.session)


class RichLooks:
    """What game mode shows on the full screen (plain mode's are plain.PlainLooks), drawn
    in `width()` columns (the terminal's, at most 80)."""

    def __init__(self, width: Callable[[], int] = lambda: WIDTH) -> None:
        self.width = width

    def event(
        self,
        before: State,
        seat: int | None,
        action: Action,
        after: State,
        names: Sequence[str],
        me: int,
    ) -> FormattedText:
        return render_event(before, seat, action, after, names, me, self.width())

    def refusal(
        self, refusal: Refusal, state: State, names: Sequence[str], me: int
    ) -> FormattedText:
        return render_refusal(refusal, state, names, me, self.width())

    def error(self, text: str) -> FormattedText:
        return render_error(text, self.width())

    notice = error

    def takers(self, view: PlayerView, offer_id: int) -> FormattedText:
        return render_takers(view, offer_id, self.width())

    def presence(self, news: PresenceNews, names: Sequence[str]) -> FormattedText:
        if not news.here:
            return render_error(news.sentence, self.width())
        return FormattedText([("class:title", fill(news.sentence, self.width()))])

    def chat(self, name: str, text: str) -> FormattedText:
        return render_chat(name, text, self.width())

    def question(self, question: Question) -> FormattedText:
        return render_question(question, self.width())

    def started(self, starter: str) -> str:
        return f"{starter}. The deck is being shuffled by everyone together..."

    def dealt(self, view: PlayerView, first: bool) -> list[FormattedText]:
        """The hand once cards of mine are open to me: dealt (`first`), or drawn."""
        said = [FormattedText([("", "The cards are dealt.")])] if first else []
        return [*said, render_hand(view, self.width())]

    def hand(self, view: PlayerView) -> FormattedText:
        return render_hand(view, self.width())

    def your_turn(self, view: PlayerView) -> FormattedText:
        return FormattedText([("class:active", f"Your turn {view.state.turn}.")])

    def table(self, view: PlayerView, code: str, proofs: bool) -> list[FormattedText]:
        return [render_table(view, self.width()), render_table_code(code, proofs)]

    def beans(self, view: PlayerView) -> FormattedText:
        return render_beans(view, self.width())

    def who(
        self,
        view: PlayerView,
        keys: Sequence[bytes],
        connected: frozenset[int],
        away: frozenset[int],
        code: str,
        labels: Sequence[str],
        relayed: frozenset[int] = frozenset(),
    ) -> FormattedText:
        return render_who(view, keys, connected, code, away, labels, self.width(), relayed)

    def netcheck(self, view: PlayerView, how: Sequence[str]) -> FormattedText:
        return render_netcheck(view, how, self.width())

    def help(self, topic: str | None, lobby: bool = False) -> FormattedText:
        return render_help(topic, lobby, self.width())

    def story(self, story: GameStory, names: Sequence[str], me: int) -> FormattedText:
        return render_story(story, names, me, self.width())


Looks = RichLooks | PlainLooks


class HumanPlayer(Player):
    """A person at the seat: what happens is printed as it happens; the screen refreshes.
    It keeps the game's story, shown at the end (`story`; a resumed seat feeds it the steps
    it replays)."""

    def __init__(self, terminal: Terminal, refresh: Callable[[], None]) -> None:
        self.terminal = terminal
        self.refresh = refresh
        self.looks: Looks = PlainLooks() if terminal.plain else RichLooks(terminal.width)
        self.log: list[FormattedText] = []
        self.story = GameStory()
        self._dealt = False
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
        names, me, looks = game.names, game.seat, self.looks
        self.story.add(report)
        if report.start_player is not None:
            starter = (
                "You start" if report.start_player == me else f"{names[report.start_player]} starts"
            )
            self.terminal.say(looks.started(starter), label="start")
        for applied in report.applied:
            self._print(
                looks.event(applied.before, applied.seat, applied.action, applied.after, names, me)
            )
        offered = any(_offered_to(applied, me) for applied in report.applied)
        my_turn = any(
            applied.after.turn != applied.before.turn and applied.after.active == me
            for applied in report.applied
        )
        rules = game.view.rules
        for refusal in report.refusals:
            if rules is not None and refusal.seat == me:  # others' are their own business
                self._print(looks.refusal(refusal, rules, names, me))
        self._show_takers(game)
        if report.dealt:  # cards of mine opened to me: the deal's, or those I drew
            view = self.view(game)
            if view is not None:
                for text in looks.dealt(view, not self._dealt):
                    self.terminal.show(text)
                if not self._dealt and view.state.active == me:  # I start: the hand is shown
                    self.terminal.show(looks.your_turn(view))
                    self.terminal.ring()
                    offered = False
                self._dealt = True
        if my_turn:
            self.turn_starts(game)
        elif offered:
            self.terminal.ring()
        self.refresh()

    def turn_starts(self, game: PeerGame) -> None:
        """My turn has started (or a resumed game is back at it): say so, show my hand and
        what I may do, and ring the bell."""
        view = self.view(game)
        if view is None:
            return
        self.terminal.show(self.looks.your_turn(view))
        self.terminal.show(self.looks.hand(view))
        self.terminal.ring()

    def dealt_already(self) -> None:
        """A resumed seat's cards were dealt before: the next cards opened are drawn ones."""
        self._dealt = True

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
                self._print(self.looks.takers(view, offer_id))
        self._takers = takers

    def notice(self, game: PeerGame, text: str) -> None:
        self._print(self.looks.notice(text))
        self.refresh()

    def presence_changed(self, game: PeerGame, news: PresenceNews) -> None:
        self._print(self.looks.presence(news, game.names))
        self.refresh()

    def chat(self, game: PeerGame, seat: int, text: str) -> None:
        self._print(self.looks.chat(game.names[seat], text))

    def finished(self, game: PeerGame, outcome: Outcome) -> None:
        self.terminal.say(describe_outcome(game, outcome))
        if outcome.final is not None and self.story.turns:
            self.terminal.show(self.looks.story(self.story, game.names, game.seat))
        self.on_finish()


def _offered_to(applied: Applied, me: int) -> bool:
    """An offer someone else made that I may accept (to me, or to everyone)."""
    if not isinstance(applied.action, MakeOffer) or applied.seat in (None, me):
        return False
    made = next(o for o in applied.after.offers if o.id == applied.before.next_offer_id)
    return me in accepters(applied.after, made)


def describe_outcome(game: PeerGame, outcome: Outcome) -> str:
    names = game.names
    findings = (
        "the audit FAILED: " + "; ".join(outcome.audit_findings)
        if outcome.audit_findings
        else "the audit of what was played found nothing against anyone"
    )
    if outcome.cheat is not None and outcome.cheat.seat is None:
        return (
            f"The game is stopped: the deal broke ({outcome.cheat.reason}, step "
            f"{outcome.cheat.step}); every seed was revealed to find who broke it: {findings}."
        )
    if outcome.cheat is not None:
        cheat = outcome.cheat
        who = join_words([names[seat] for seat in cheat.seats])
        return (
            f"The game is stopped: {who} {cheat.reason} (step {cheat.step}). The signed "
            f"messages that prove it are in {game.gamefile.path}."
        )
    if outcome.gone:
        who = join_words([names[seat] for seat in outcome.gone])
        return f"The game ended without {who}, gone for good, by everyone else's vote: {findings}."
    if outcome.ended_by is not None:
        return (
            f"{names[outcome.ended_by]}'s client ended the game, and it cannot go on without "
            f"it: {findings}."
        )
    if outcome.final is None:
        return "You left the game."
    final = outcome.final  # the last step's events said "Game over: ..." with the coins
    agreed = (
        "Every player's machine agrees"
        if final.agreed
        else f"{join_words([names[s] for s in final.disagreeing])} reported another final "
        "state than this machine's"
    )
    audit = (
        "the audit passed"
        if final.audit_passed
        else "the audit FAILED: " + "; ".join(final.audit_findings)
    )
    return f"{agreed}; {audit}."


class GameScreen:
    """Game mode: commands in, the table out, until the game ends."""

    def __init__(self, terminal: Terminal, own_bots: Mapping[bytes, str] | None = None) -> None:
        """`own_bots`: the public keys of the bots this person started, with their strategy
        (`who` says which seats they are)."""
        self.terminal = terminal
        self.game: PeerGame | None = None
        self.own_bots = dict(own_bots or {})
        self.player = HumanPlayer(terminal, self._refresh)
        self.looks = self.player.looks
        self.prompt = terminal.prompt(self._toolbar, GameCompleter(self._view), self._status)
        self.player.on_finish = self._interrupt
        self._leaving = False  # "leave" was typed once
        self._question: Question | None = None  # the last line asked; a number answers it
        self._warned_clock = False  # plain mode: the last seconds of this duty were said

    @property
    def session(self) -> PromptSession[str]:
        """The prompt_toolkit session (not in plain mode)."""
        assert isinstance(self.prompt, RichPrompt)
        return self.prompt.session

    def _view(self) -> PlayerView | None:
        return None if self.game is None else self.player.view(self.game)

    def _status(self) -> str | None:
        """Plain mode's status line: the toolbar's words, said again only when they change
        (the turn clock's countdown is said once, at CLOCK_WARNING_SECONDS)."""
        game = self.game
        if game is None:
            return "joining the game"
        progress = _deck_progress(game)
        view = self._view()
        if view is None:
            return progress or "choosing who starts"
        words = status_words(view, game.view.away)
        left = game.turn_seconds_left()
        if left is None:
            self._warned_clock = False
        else:
            words += f"\nyour clock runs: {game.turn_seconds} s a move"
            if left <= CLOCK_WARNING_SECONDS and not self._warned_clock:
                self._warned_clock = True
                self.terminal.say(_clock_words(left, ""), label="clock")
        return words

    def _toolbar(self) -> FormattedText:
        """The toolbar, each line wrapped between words to the terminal's width."""
        return rewrap(self._toolbar_lines(), self.terminal.width())

    def _toolbar_lines(self) -> FormattedText:
        game = self.game
        if game is None:
            return FormattedText([("class:toolbar", "Joining the game...")])
        progress = _deck_progress(game)
        view = self._view()
        if view is None:
            return FormattedText([("class:toolbar", progress or "Choosing who starts...")])
        toolbar = render_toolbar(view, self.terminal.width())
        if game.view.away:  # on top, as the line below: the last stays whom the game waits for
            away = join_words([game.names[seat] for seat in sorted(game.view.away)])
            toolbar = FormattedText([("class:error", f"Away: {away}"), ("", "\n"), *toolbar])
        relayed = toolbar_relayed(game.names, game.view.relayed & game.view.connected)
        if relayed is not None:
            toolbar = FormattedText([("class:hint", relayed), ("", "\n"), *toolbar])
        weak = toolbar_proof_warning(game.roster.options.proofs)
        if weak is not None:
            toolbar = FormattedText([("class:error", weak), ("", "\n"), *toolbar])
        if progress:
            toolbar = FormattedText([*toolbar, ("", "\n"), ("class:toolbar", progress)])
        left = game.turn_seconds_left()
        if left is not None:
            style = "class:error" if left <= CLOCK_WARNING_SECONDS else "class:title"
            toolbar = FormattedText([*toolbar, ("", "\n"), (style, _clock_words(left))])
        return toolbar

    def _refresh(self) -> None:
        self.prompt.redraw()

    def _interrupt(self) -> None:
        self.prompt.end()

    async def play(self, game: PeerGame) -> Outcome:
        """The prompt until the game ends (an asyncio coroutine: run it with `in_twisted`).
        Ctrl-C or Ctrl-D asks as `leave` does, whenever it comes (a SIGINT between prompts,
        or in plain mode, too); input that has ended for good leaves."""
        self.game = game
        self.terminal.warn_if_narrow()
        name = game.names[game.seat]
        clock = game.turn_seconds > 0  # its countdown is redrawn with no key pressed
        with on_ctrl_c(lambda: self._ctrl_c(game)):
            while game.outcome is None:
                try:
                    line = await self.prompt.line(
                        f"{name}> ", refresh_interval=CLOCK_REFRESH_SECONDS if clock else 0
                    )
                except Interrupted:
                    self._leave_asked(game)
                    continue
                except EOFError:
                    if self.terminal.plain:
                        self._input_ended(game)
                        break
                    self._leave_asked(game)
                    continue
                self.enter(line)
        assert game.outcome is not None  # set when the game ended or the player left
        return game.outcome

    def welcome_back(self, game: PeerGame) -> None:
        """After a resume, as at a game's start: who is at the table, the table, the hand."""
        others = join_words([name for seat, name in enumerate(game.names) if seat != game.seat])
        self.terminal.say(f"You are back at the table with {others}.")
        view = self._view()
        if view is None:
            self.terminal.say("The cards are still being dealt.")
            return
        self.player.dealt_already()
        for text in self.looks.table(view, game.table.code, game.roster.options.proofs):
            self.terminal.show(text)
        self.terminal.show(self.looks.hand(view))

    def _ctrl_c(self, game: PeerGame) -> None:
        """A SIGINT while no prompt took Ctrl-C as a key (plain mode, or between prompts)."""
        if game.outcome is None:
            self._leave_asked(game)
            self._refresh()

    def _leave_asked(self, game: PeerGame) -> None:
        """`leave`, Ctrl-C or Ctrl-D: the first asks, the next confirms (any other line in
        between cancels; a question open stays open)."""
        if self._leaving:
            game.stop("the player left")
        else:
            self._leaving = True
            self.terminal.show(self.looks.error(LEAVE_QUESTION))

    def _input_ended(self, game: PeerGame) -> None:
        """Plain mode's input has ended: nothing more can be typed, not even a yes."""
        self.terminal.say(
            "Your input has ended (Ctrl-D, or the end of what was piped in), so nothing more "
            "can be typed here: you leave the game. bean-client resume, or resume at the "
            "lobby prompt, takes you back while the others wait."
        )
        game.stop("the player's input ended")

    def enter(self, line: str) -> None:
        """A line the person typed (tests type some directly, at a moment of their choice)."""
        game = self.game
        if game is not None and game.outcome is None and line.strip():
            self._question = self._command(game, line, self._question)

    def _command(self, game: PeerGame, line: str, question: Question | None) -> Question | None:
        view = self._view()
        looks = self.looks
        if view is None:
            self.terminal.show(looks.error("wait: the cards are still being shuffled and dealt"))
            return question
        try:
            command = parse_game_command(line, view, question)
        except CommandError as error:
            self.terminal.show(looks.error(str(error)))
            return question
        if isinstance(command, Question):
            self.terminal.show(looks.question(command))
            return command
        if isinstance(command, Submit):
            try:
                game.submit(command.actions)
            except RuleError as error:
                self.terminal.show(looks.error(view.readable(error)))
            else:
                self._say_held_up(game)
        elif isinstance(command, ShowView):
            self._show(command, view)
        elif isinstance(command, Say):
            game.chat(command.text)
            self.terminal.show(looks.chat(game.names[game.seat], command.text))
        elif isinstance(command, LeaveGame):
            asked = not self._leaving
            self._leave_asked(game)
            if asked:
                return question
        self._leaving = False
        return None

    def _say_held_up(self, game: PeerGame) -> None:
        """A move is shown once its step is played, which waits for every seat's message: when
        a seat that has not sent its own is not connected, say so now, or the line typed
        would get no answer at all (as after a resume without the bots that were stopped)."""
        absent = _absent(game)
        if absent:
            who = join_words([game.names[seat] for seat in absent])
            self.terminal.show(
                self.looks.notice(
                    f"sent: your move is played when {who} "
                    f"{'is' if len(absent) == 1 else 'are'} back (not connected now), or "
                    "when the others end the game without them"
                )
            )

    def _show(self, command: ShowView, view: PlayerView) -> None:
        game = self.game
        assert game is not None
        looks, show = self.looks, self.terminal.show
        if command.view is View.TABLE:
            for text in looks.table(view, game.table.code, game.roster.options.proofs):
                show(text)
        elif command.view is View.WHO:
            seats = game.roster.seats
            keys = [member.public_key for member in seats]
            labels = [bot_label(s.name, s.public_key, self.own_bots) for s in seats]
            snapshot = game.view
            code = game.table.code
            relayed = snapshot.relayed
            show(looks.who(view, keys, snapshot.connected, snapshot.away, code, labels, relayed))
        elif command.view is View.NETCHECK:
            how = [game.mesh.how_linked(seat) for seat in range(len(view.names))]
            show(looks.netcheck(view, how))
        elif command.view is View.HAND:
            show(looks.hand(view))
        elif command.view is View.BEANS:
            show(looks.beans(view))
        elif command.view is View.LOG:
            for text in self.player.log[-LOG_LINES:]:
                show(text)
        else:
            show(looks.help(command.topic))


@contextmanager
def on_ctrl_c(then: Callable[[], None]) -> Iterator[None]:
    """While in the block, a SIGINT (Ctrl-C that no prompt takes as a key: plain mode, or
    between prompts) calls `then` on the event loop, in place of what it did before
    (prompt_toolkit puts this back after each prompt of its own)."""
    from twisted.internet import reactor

    before = signal.signal(signal.SIGINT, lambda *_: reactor.callFromThread(then))
    try:
        yield
    finally:
        if before is not None:  # (None: a handler not set from Python, left as it was)
            signal.signal(signal.SIGINT, before)


def redraw(session: PromptSession[str]) -> None:
    """Draw the prompt and its toolbar again: what they show has changed."""
    app = session.app
    if app.is_running:
        app.invalidate()


def end_prompt(session: PromptSession[str]) -> None:
    """End the prompt being awaited (it returns an empty line): something else takes over,
    so the prompt is erased, not left on the screen between what is said next (a "you>"
    between the game's last move and its outcome)."""
    app = session.app
    if app.is_running and not app.future.done():  # type: ignore[union-attr]
        app.erase_when_done = True  # this once: RichPrompt.line puts it back
        app.exit(result="")


def in_twisted(coroutine: Coroutine[Any, Any, T]) -> Deferred[T]:
    """Await an asyncio coroutine (prompt_toolkit's) from Twisted code on the same loop."""
    return Deferred.fromFuture(asyncio.ensure_future(coroutine))


def _absent(game: PeerGame) -> list[int]:
    """The seats the step waits for that are not connected: away, or not back yet."""
    view = game.view
    gone = view.away | (frozenset(range(len(view.names))) - view.connected - {view.seat})
    return sorted(view.missing & gone)


def _clock_words(left: float, whose: str = "Your clock: ") -> str:
    return f"{whose}{math.ceil(left)} s left, then the default moves are made for you"


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
    terms: RoomTerms | None,
    screen: GameScreen,
    own_bots: Mapping[str, bytes] | None = None,
    confirm_gate: Callable[[bytes], Deferred[None]] | None = None,
) -> Outcome:
    """Agree on the table with the others, then play its game at this screen until it ends;
    returns once every link is closed (the peer port may then serve the next game).
    `own_bots`, `confirm_gate`: the checks of the bots this client started for the room
    (TableSetup). TableRefused, saying why, if the table does not start."""
    say = screen.terminal.say
    setup = await agree_on_table(
        reactor, seat, identity, listener, roster, terms, say, own_bots, confirm_gate=confirm_gate
    )
    with deck_workers() as executor:
        game = start_game(reactor, seat, identity, listener, setup, screen.player, executor)
        screen.game = game
        outcome = await in_twisted(screen.play(game))
        await game.done
    return outcome


async def play_resumed(
    reactor: Any,
    path: Path,
    screen: GameScreen,
    step_deadline: float,
    abandon_after: float,
    listener: PeerListener | None = None,
) -> Outcome:
    """A game this seat left unfinished (a crash), back at this screen until it ends; its story
    starts with the steps the game file replays. GameFileError if it cannot be resumed."""
    started: Deferred[PeerGame] = Deferred()
    playing = Deferred.fromCoroutine(
        resume_game(
            reactor,
            path,
            screen.player,
            step_deadline,
            abandon_after,
            started.callback,
            listener=listener,
            each_step=screen.player.story.add,
        )
    )

    def before_the_start(failure: Any) -> Any:
        """A game that could not be resumed fails `started` (what is awaited first)."""
        if started.called:
            return failure
        started.errback(failure)
        return None

    playing.addErrback(before_the_start)
    screen.game = await started
    screen.welcome_back(screen.game)
    await in_twisted(screen.play(screen.game))
    _, outcome = await playing
    return outcome


async def take_a_bots_seat(terminal: Terminal, path: Path, profile: str, own: Path | None) -> bool:
    """Ask before the person takes over the seat of a bot of their own (`bean-client resume`
    on the bot's game file, which lies beside theirs); True for yes."""
    yours = f"; your own seat's file is {own}" if own is not None else ""
    terminal.say(
        f"{path} is the game file of a bot you started (its key is {profile}), not of your "
        f"own seat{yours}. A seat is played by one of you at a time: take it only if the "
        "bot has stopped."
    )
    try:
        answer = await in_twisted(
            terminal.prompt(asks=True).line("Take the bot's seat yourself (yes or no)? ")
        )
    except (Interrupted, EOFError):
        answer = ""
    if answer.strip().casefold() in ("y", "yes"):
        return True
    terminal.say("Not resumed." + (f" bean-client resume {own} is your own seat." if own else ""))
    return False


def terminal_for(args: argparse.Namespace) -> Terminal:
    """The terminal a command line asks for: plain mode (`--plain`, TERM=dumb, or output that
    is not a terminal: lines from standard input, never a cursor-position request), or the
    full screen, in colour unless told otherwise."""
    bell = not getattr(args, "no_bell", False)
    if plain_wanted(getattr(args, "plain", False)):
        os.environ["PROMPT_TOOLKIT_NO_CPR"] = "1"  # for anything of prompt_toolkit's
        return Terminal(colour=False, lines=PlainLines(sys.stdin), bell=bell)
    return Terminal(colour_wanted(no_colour=getattr(args, "no_color", False)), bell=bell)


def screen_for(args: argparse.Namespace) -> GameScreen:
    return GameScreen(terminal_for(args))


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
    screen = screen or screen_for(args)
    terminal = screen.terminal
    name = args.name or getpass.getuser()
    listen = f"tcp:0:interface={host}"
    # The person chose the proofs of a table of their own bots: that is the local choice.
    weak = args.allow_weak_proofs or not args.proofs
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
        terms = RoomTerms(seats, options)
        return await play_roster(reactor, seat, identity, listener, roster, terms, screen)
    finally:
        await listener.stop()


async def ask_play_again(terminal: Terminal) -> bool:
    """After a game's story: "Play again? [y/N]". Only y or yes is a yes; an empty line,
    anything else, Ctrl-C, Ctrl-D or the end of input is a no."""

    async def asking() -> str:
        prompt = terminal.prompt(asks=True)
        try:
            with on_ctrl_c(prompt.end):  # a SIGINT in plain mode ends the line: a no
                return await prompt.line("Play again? [y/N] ")
        except (EOFError, Interrupted):
            return ""

    answer = await in_twisted(asking())
    return answer.strip().casefold() in ("y", "yes")
