"""Plain mode: the lobby and the game as lines of text, for screen readers, `TERM=dumb`, and
output read by a program or kept in a file (STYLE.md, "Plain output").

It is another renderer over the same events, not the full screen with its colour taken out:

- every event is one line that can be understood alone, labelled with what it is about
  ("turn 12, bob: planted chili in field 1 (chili 3)"; "chat, bob: hi"; "error: ...");
- nothing is ever redrawn: no toolbar, no prompt, no cursor moves and no colour; what the
  toolbar shows is printed as a `status:` line, only when it changes;
- lines are read as the terminal delivers them (its own line editing, or a pipe), by a thread,
  so no cursor-position request is ever sent; every command is the same as in the full screen.

`plain_wanted` chooses the mode: `--plain`, `TERM=dumb`, or standard output that is not a
terminal. `NO_COLOR` only takes the colour out of the full screen (no-color.org).
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import TextIO

from prompt_toolkit.formatted_text import FormattedText, to_plain_text

from client.presence import PresenceNews
from client.screen.commands import Question
from client.screen.player_view import (
    PlayerView,
    bean_list,
    bot_label,
    field_words,
    join_words,
    next_coins,
)
from client.screen.render import (
    PHASE_WORDS,
    action_phrase,
    bean_rows,
    consequences,
    link_words,
    offer_heading,
    offer_terms,
    options_words,
    render_help,
    render_hints,
    render_refusal,
    render_takers,
    render_toolbar,
    waiting_words,
)
from client.story import GameStory, Sale
from protocol.cards import bean_of
from protocol.identity import fingerprint
from protocol.messages import RoomState, RoomSummary
from protocol.rules import (
    Action,
    State,
    accepters,
    harvest_value,
)
from protocol.steps import Refusal
from protocol.table import CHECK_CODE, PROOFS_OFF

UNWRAPPED = 10_000  # the width plain mode gives render's paragraphs: a line is never wrapped


def plain_wanted(
    flag: bool = False, environ: Mapping[str, str] | None = None, stdout: TextIO | None = None
) -> bool:
    """Plain mode: asked for, a dumb terminal, or output that is not a terminal."""
    env = os.environ if environ is None else environ
    out = sys.stdout if stdout is None else stdout
    return flag or env.get("TERM") == "dumb" or not out.isatty()


def lines_of(lines: Sequence[str]) -> FormattedText:
    """Lines as one text to show (nothing at all for no lines)."""
    return FormattedText([("", "\n".join(lines))] if lines else [])


# --- Reading lines ----------------------------------------------------------------------------


class PlainLines:
    """Lines from a stream (the terminal in its own line mode, a pipe or a file), read by a
    thread of their own and awaited on the event loop; None once the stream has ended."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._lines: deque[str | None] = deque()
        self._waiting: asyncio.Future[str | None] | None = None
        self._interrupted = False
        self._loop: asyncio.AbstractEventLoop | None = None

    async def read(self) -> str | None:
        """The next line (without its end of line); "" at once after `interrupt`."""
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
            threading.Thread(target=self._read_all, name="plain lines", daemon=True).start()
        if self._interrupted:
            self._interrupted = False
            return ""
        if self._lines:
            return self._lines.popleft()
        self._waiting = self._loop.create_future()
        try:
            return await self._waiting
        finally:
            self._waiting = None

    def interrupt(self) -> None:
        """End the read being awaited with an empty line (or the next one, if none is)."""
        if self._waiting is not None and not self._waiting.done():
            self._waiting.set_result("")
        else:
            self._interrupted = True

    def _read_all(self) -> None:
        assert self._loop is not None
        try:
            for line in self.stream:
                self._loop.call_soon_threadsafe(self._arrived, line.rstrip("\r\n"))
        except ValueError:  # the stream closed under the reader (at exit): its end too, and
            pass  # no traceback from this thread on the screen
        self._loop.call_soon_threadsafe(self._arrived, None)

    def _arrived(self, line: str | None) -> None:
        if self._waiting is not None and not self._waiting.done():
            self._waiting.set_result(line)
        else:
            self._lines.append(line)
        if line is None:
            self._lines.append(None)  # the end stays the end for every later read


class PlainPrompt:
    """A line at a time, with no prompt drawn; what a toolbar would show is said as a
    `status:` line when it has changed since it was last said. A prompt that `asks` says
    its question as a line of its own."""

    def __init__(
        self,
        lines: PlainLines,
        say: Callable[[str], None],
        status: Callable[[], str | None] = lambda: None,
        asks: bool = False,
    ) -> None:
        self.lines = lines
        self.say = say
        self.status = status
        self.asks = asks
        self._said: str | None = None

    async def line(
        self,
        message: str,
        pre_run: Callable[[], None] | None = None,
        refresh_interval: float = 0.0,
    ) -> str:
        """The next line; EOFError when input has ended. `message` is said only by a prompt
        that asks ("question: Your name:"); a command prompt's status line says the rest."""
        if pre_run is not None:
            pre_run()
        self.redraw()
        if self.asks:
            self.say(f"question: {message.strip()}")
        ticking = asyncio.ensure_future(self._tick(refresh_interval)) if refresh_interval else None
        try:
            line = await self.lines.read()
        finally:
            if ticking is not None:
                ticking.cancel()
        if line is None:
            raise EOFError
        return line

    async def _tick(self, seconds: float) -> None:
        while True:
            await asyncio.sleep(seconds)
            self.redraw()

    def redraw(self) -> None:
        """Say the parts of the status (a line each) that are new since it was last said; all
        of them when parts have only gone."""
        text = self.status()
        if text is None or text == self._said:
            return
        parts = text.splitlines()
        before = self._said.splitlines() if self._said is not None else []
        new = [part for part in parts if part not in before] or parts
        self._said = text
        self.say("status: " + " ".join(_sentence(part) for part in new))

    def end(self) -> None:
        self.lines.interrupt()


def _sentence(text: str) -> str:
    """A part of the status as a sentence: a capital first, a full stop last."""
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "?", "!")) else text + "."


# --- The game, one line per thing -------------------------------------------------------------


def _coins(count: int) -> str:
    return f"{count} coin" + ("" if count == 1 else "s")


def _who(view: PlayerView, seat: int) -> str:
    """A seat as a label names it: its name, or "you"."""
    return "you" if seat == view.seat else view.names[seat]


def _table_words(state: State) -> str:
    end = state.setup.exhaustions_to_end
    return (
        f"{PHASE_WORDS[state.phase]}; deck {state.deck.remaining}, discard {len(state.discard)}, "
        f"exhausted {state.exhaustions} of {end}"
    )


def _field_list(state: State, seat: int) -> str:
    fields = []
    for index, cards in enumerate(state.players[seat].fields):
        pays = ""
        if cards:
            pays = f", pays {harvest_value(state, seat, index)}"
            following = next_coins(bean_of(cards[0]), len(cards))
            pays += f" now, {following[0]} at {following[1]}" if following else ""
        fields.append(f"field {index + 1} {field_words(cards)}{pays}")
    return "; ".join(fields)


def hand_words(view: PlayerView) -> str:
    cards = []
    for position, _, card in view.my_cards():
        name = str(bean_of(card)) if card is not None else "not open to you yet"
        front = " (front)" if position == 1 else ""
        shown = " (shown)" if view.me.hand[position - 1].card is not None else ""
        cards.append(f"#{position} {name}{front}{shown}")
    return ", ".join(cards) or "empty"


class PlainLooks:
    """What game mode shows, as plain lines (the full screen's are repl.RichLooks)."""

    def event(
        self,
        before: State,
        seat: int | None,
        action: Action,
        after: State,
        names: Sequence[str],
        me: int,
    ) -> FormattedText:
        view = PlayerView(before, me, {}, names)
        turn = f"turn {before.turn}"
        lines = []
        said = action_phrase(view, seat, action, after)
        if said:
            lines.append(
                f"{turn}: {said}" if seat is None else f"{turn}, {_who(view, seat)}: {said}"
            )
        lines += [f"{turn}: {sentence}" for sentence in consequences(view, seat, action, after)]
        return lines_of(lines)

    def refusal(
        self, refusal: Refusal, state: State, names: Sequence[str], me: int
    ) -> FormattedText:
        text = to_plain_text(render_refusal(refusal, state, names, me, UNWRAPPED))
        return lines_of([f"refused: {text}"])

    def error(self, text: str) -> FormattedText:
        return lines_of([f"error: {text}"])

    def notice(self, text: str) -> FormattedText:
        return lines_of([f"notice: {text}"])

    def takers(self, view: PlayerView, offer_id: int) -> FormattedText:
        text = to_plain_text(render_takers(view, offer_id, UNWRAPPED))
        return lines_of([f"takers: {text}"])

    def presence(self, news: PresenceNews, names: Sequence[str]) -> FormattedText:
        label = "back" if news.here else "away"
        return lines_of([f"{label}, {names[news.seat]}: {news.sentence}"])

    def chat(self, name: str, text: str) -> FormattedText:
        return lines_of([f"chat, {name}: {text}"])

    def question(self, question: Question) -> FormattedText:
        lines = [f"question: {question.prompt}"]
        lines += [
            f"choice {number}: {choice.label} (or type: {choice.command})"
            for number, choice in enumerate(question.choices, 1)
        ]
        lines.append("question: type a number, or another command")
        return lines_of(lines)

    def started(self, starter: str) -> str:
        return f"{starter}; the deck is being shuffled by everyone together"

    def dealt(self, view: PlayerView, first: bool) -> list[FormattedText]:
        said = ["dealt: the cards are dealt"] if first else []
        return [lines_of([*said, *self._hand_lines(view)])]

    def hand(self, view: PlayerView) -> FormattedText:
        return lines_of(self._hand_lines(view))

    def your_turn(self, view: PlayerView) -> FormattedText:
        return lines_of([f"your turn: turn {view.state.turn} starts"])

    def _hand_lines(self, view: PlayerView) -> list[str]:
        hints = to_plain_text(render_hints(view, UNWRAPPED)).splitlines()
        return [
            f"hand: {hand_words(view)}",
            f"your fields: {_field_list(view.state, view.seat)}",
            *(f"hint: {hint}" for hint in hints if hint),
        ]

    def table(self, view: PlayerView, code: str, proofs: bool) -> list[FormattedText]:
        state = view.state
        whose = "your turn" if state.active == view.seat else f"{view.names[state.active]}'s turn"
        lines = [f"table: turn {state.turn}, {whose}, {_table_words(state)}"]
        for seat, player in enumerate(state.players):
            said = [_coins(len(player.earnings)), f"{len(player.hand)} cards in hand"]
            said.append(_field_list(state, seat))
            shown = [(p, h.card) for p, h in enumerate(player.hand, 1) if h.card is not None]
            if shown and seat != view.seat:
                said.append("shows " + ", ".join(f"#{p} {bean_of(c)}" for p, c in shown))
            if player.pending:
                said.append(f"to plant: {bean_list(map(bean_of, player.pending))}")
            playing = ", playing now" if seat == state.active else ""
            lines.append(f"player {seat + 1}, {_who(view, seat)}{playing}: {'; '.join(said)}")
        if state.face_up:
            cards = ", ".join(f"{i} {bean_of(c)}" for i, c in enumerate(state.face_up, 1))
            lines.append(f"face up: {cards}")
        for offer in state.offers:
            mine = offer.maker == view.seat
            note = (
                "; yours"
                if mine
                else "; open to you"
                if view.seat in accepters(state, offer)
                else ""
            )
            who = offer_heading(view, offer)
            lines.append(f"offer {offer.id}, {who}: {offer_terms(view, offer)}{note}")
        lines += self._hand_lines(view)
        lines.append(f"table code: {code}")
        if not proofs:
            lines.append(f"weak: {PROOFS_OFF}")
        return [lines_of(lines)]

    def beans(self, view: PlayerView) -> FormattedText:
        lines = []
        for bean, cards, unseen, needs in bean_rows(view):
            if unseen is None:
                lines.append(f"beans, {bean}: not in a game of {len(view.state.players)}")
                continue
            pays = ", ".join(
                f"{coins} at {need}" for coins, need in enumerate(needs, 1) if need != "-"
            )
            lines.append(f"beans, {bean}: {cards} cards, {unseen} unseen; pays {pays}")
        return lines_of(lines)

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
        lines = []
        for seat, name in enumerate(view.names):
            link = "you" if seat == view.seat else link_words(seat, connected, away, relayed)
            label = f", {labels[seat]}" if labels[seat] else ""
            lines.append(
                f"who, seat {seat + 1}: {name}, key {fingerprint(keys[seat])}, {link}{label}"
            )
        lines.append(f"table code: {code}. {CHECK_CODE}")
        return lines_of(lines)

    def netcheck(self, view: PlayerView, how: Sequence[str]) -> FormattedText:
        return lines_of(
            [
                f"netcheck, seat {seat + 1}: {name}, {how[seat]}"
                for seat, name in enumerate(view.names)
                if seat != view.seat
            ]
        )

    def help(self, topic: str | None, lobby: bool = False) -> FormattedText:
        lines = to_plain_text(render_help(topic, lobby, UNWRAPPED)).splitlines()
        return lines_of([f"help: {line.strip()}" for line in lines if line.strip()])

    def story(self, story: GameStory, names: Sequence[str], me: int) -> FormattedText:
        return lines_of(story_lines(story, names, me))


def status_words(view: PlayerView, away: frozenset[int]) -> str:
    """The toolbar's content as the parts of a status, a line each (PlainPrompt says those
    that changed): the turn, the step, the deck, my coins, my offers' takers and my bids,
    whom the game waits for (each seat's duties together, as the full screen shortens them),
    who is away."""
    first, *between, last = to_plain_text(render_toolbar(view, UNWRAPPED)).splitlines()
    turn, whose, *rest = first.split(" · ")
    parts = [f"{turn}, {whose}", *rest]
    for line in between:
        parts += line.split(" · ")
    parts.append(f"Waiting: {waiting_words(view)}" if last.startswith("Waiting: ") else last)
    if away:
        parts.append("away: " + join_words([view.names[seat] for seat in sorted(away)]))
    return "\n".join(parts)


# Punctuation a screen reader reads aloud by name, and what plain mode writes instead.
ASCII_PUNCTUATION = (
    ("  ·  ", "; "),
    (" · ", ", "),
    ("·", ","),
    ("…", "..."),
    ("→", " to "),
    ("×", "x"),
    ("–", "-"),
    ("—", "-"),
    ("‘", "'"),
    ("’", "'"),
    ("“", '"'),
    ("”", '"'),
)


def ascii_punctuation(text: str) -> str:
    """Text with plain ASCII punctuation (names and words as they are)."""
    for fancy, plain in ASCII_PUNCTUATION:
        text = text.replace(fancy, plain)
    return text


# --- The lobby -------------------------------------------------------------------------------


def room_lines(room: RoomState, own_bots: Mapping[bytes, str]) -> FormattedText:
    """The room I am in, a line for the room and one for each member."""
    lines = [f"room {room.room_id} {room.name}: {len(room.members)} of {room.seats} seats"]
    for member in room.members:
        label = bot_label(member.name, member.public_key, own_bots)
        ready = "ready" if member.ready else "not ready"
        lines.append(
            f"room {room.room_id}, {member.name}: {ready}" + (f", {label}" if label else "")
        )
    return lines_of(lines)


def rooms_lines(rooms: Sequence[RoomSummary]) -> FormattedText:
    """The open rooms, a line each."""
    if not rooms:
        return lines_of(["rooms: none open; create SEATS NAME opens one"])
    return lines_of(
        [
            f"room {room.room_id}: {room.name}, {room.taken} of {room.seats} seats taken"
            + "".join(f", {words}" for words in [options_words(room.options)] if words)
            for room in rooms
        ]
    )


# --- The game's story ------------------------------------------------------------------------


def _sale_words(sale: Sale) -> str:
    cards = f"{sale.cards} card" + ("" if sale.cards == 1 else "s")
    when = "at the end" if sale.at_end else f"turn {sale.turn}"
    return f"{when} {sale.bean} {cards} for {_coins(sale.coins)}"


def story_lines(story: GameStory, names: Sequence[str], me: int | None) -> list[str]:
    """The end-of-game summary in lines a screen reader reads one by one: each player's
    coins and harvests, then their coins over the turns (where they changed). `me` None:
    every player by name (a game file shown offline, whoever reads it)."""
    lines = [f"summary: {story.turns} turns"]
    for seat, name in enumerate(names):
        who = "you" if seat == me else name
        final = story.result.scores[seat] if story.result is not None else None
        coins = f"{_coins(final)}; " if final is not None else ""
        sales = story.sales_of(seat)
        paid = "; ".join(_sale_words(sale) for sale in sales if sale.coins) or "none paid"
        unpaid = sum(sale.cards for sale in sales if not sale.coins)
        nothing = f"; {unpaid} more card{'' if unpaid == 1 else 's'} sold for nothing"
        lines.append(f"summary, {who}: {coins}harvests: {paid}" + (nothing if unpaid else ""))
    for seat, name in enumerate(names):
        who = "you" if seat == me else name
        changes = []
        last = 0
        for turn, count in enumerate(story.coins_of(seat), 1):
            if count != last:
                changes.append(f"{count} after turn {turn}")
                last = count
        lines.append(f"coins, {who}: {', '.join(changes) or 'none'}")
    return lines
