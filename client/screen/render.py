"""What the REPL shows, as prompt_toolkit formatted text: the table, hints, the bottom toolbar,
one line per event for the log, refusals, questions, help and the lobby's rooms.

Everything is built from style classes (`STYLE` gives them colours), so the same text prints
plain when colour is off (`NO_COLOR`, or the client's no-colour flag): `show` prints it either
way. Every function takes a `width` (80 by default) and no line it returns is wider: rows wrap
between cells, over-long words are cut, names are shortened in the players table.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence

from prompt_toolkit import print_formatted_text
from prompt_toolkit.formatted_text import FormattedText, to_plain_text
from prompt_toolkit.output import Output
from prompt_toolkit.styles import Style
from prompt_toolkit.utils import get_cwidth

from client.screen.commands import (
    BEANS_HELP,
    GAME_COMMANDS,
    GIVE_HELP,
    WANT_HELP,
    Command,
    Question,
    command_for,
    find_command,
)
from client.screen.lobby_commands import LOBBY_COMMANDS
from client.screen.player_view import (
    PlayerView,
    bean_list,
    bot_label,
    deck_count,
    field_words,
    join_words,
    pays_words,
    unseen_beans,
)
from protocol.cards import BEANOMETER, BEANS, Bean, Card, bean_of
from protocol.identity import fingerprint
from protocol.messages import RoomOptions, RoomState, RoomSummary
from protocol.rules import (
    Accept,
    Action,
    BuyField,
    EndPlanting,
    EndTrading,
    Harvest,
    MakeOffer,
    Offer,
    Phase,
    Plant,
    PlantPending,
    Reject,
    Result,
    RevealFaceUp,
    State,
    Take,
    Withdraw,
    accepters,
    bids_on,
    harvest_value,
    legal_actions,
    offer_options,
    waiting_for,
)
from protocol.steps import Refusal
from protocol.table import CHECK_CODE, PROOFS_OFF

WIDTH = 80
NAME_COLUMNS = 12  # a name in the players table is cut to this
INDENT = 4  # continuation lines of a wrapped row start here
HELP_COLUMN = 20  # where command summaries start in the help

Fragment = tuple[str, str]
Cell = list[Fragment]  # a piece of a row that is never broken across lines

BEAN_COLOURS = {
    Bean.COFFEE: "#a0522d",
    Bean.WAX: "#daa520",
    Bean.BLUE: "ansiblue",
    Bean.CHILI: "ansired",
    Bean.STINK: "#808000",
    Bean.GREEN: "ansigreen",
    Bean.SOY: "#d2b48c",
    Bean.BLACK_EYED: "ansiwhite",
    Bean.RED: "#b22222",
    Bean.GARDEN: "ansibrightgreen",
    Bean.COCOA: "#8b4513",
}

STYLE = Style.from_dict(
    {
        "title": "bold",
        "me": "bold ansicyan",
        "active": "bold ansiyellow",
        "muted": "ansibrightblack",
        "offer": "bold ansimagenta",
        "coins": "ansiyellow",
        "hint": "ansigreen",
        "error": "bold ansired",
        "chat": "ansicyan",
        **{f"bean.{bean.name.lower()}": colour for bean, colour in BEAN_COLOURS.items()},
    }
)


# --- Printing --------------------------------------------------------------------------------


def colour_wanted(environ: Mapping[str, str] | None = None, no_colour: bool = False) -> bool:
    """Colour unless the no-colour flag is given or NO_COLOR is set and not empty."""
    env = os.environ if environ is None else environ
    return not no_colour and not env.get("NO_COLOR")


def show(text: FormattedText, colour: bool, output: Output | None = None) -> None:
    """Print formatted text above the prompt: styled, or with colour off as plain text with
    no escape codes at all. `output` defaults to the terminal (stdout, patched or not)."""
    if colour:
        print_formatted_text(text, style=STYLE, output=output)
    elif output is None:
        print(to_plain_text(text), flush=True)  # a pipe or a file sees each line at once
    else:
        output.write_raw(to_plain_text(text) + "\n")
        output.flush()


# --- Laying out cells within a width ----------------------------------------------------------


def _width(cell: Cell) -> int:
    return sum(get_cwidth(text) for _, text in cell)


def _cut(cell: Cell, limit: int) -> list[Cell]:
    """A cell in pieces no wider than `limit` (only over-long words need it)."""
    if _width(cell) <= limit:
        return [cell]
    pieces: list[Cell] = [[]]
    used = 0
    for style, text in cell:
        for char in text:
            size = get_cwidth(char)
            if used + size > limit:
                pieces.append([])
                used = 0
            pieces[-1].append((style, char))
            used += size
    return pieces


def _flow(cells: Iterable[Cell], width: int, indent: int = INDENT) -> list[Cell]:
    """Cells joined by spaces into lines no wider than `width`; continuation lines indented."""
    lines: list[Cell] = []
    line: Cell = []
    used, fresh = 0, True
    for cell in cells:
        for piece in _cut(cell, width - indent):
            size = _width(piece)
            if not fresh and used + 1 + size > width:
                lines.append(line)
                line, used, fresh = [("", " " * indent)], indent, True
            if not fresh:
                line.append(("", " "))
                used += 1
            line += piece
            used += size
            fresh = False
    if line:
        lines.append(line)
    return lines


def _words(text: str, style: str = "") -> list[Cell]:
    return [[(style, word)] for word in text.split()]


def _paragraph(text: str, width: int, style: str = "") -> list[Cell]:
    return _flow(_words(text, style), width)


def _lines(lines: Iterable[Cell]) -> FormattedText:
    """Lines as one formatted text, a newline between lines."""
    joined: list[Fragment] = []
    for number, line in enumerate(lines):
        if number:
            joined.append(("", "\n"))
        joined += line
    return FormattedText(joined)


def rewrap(text: FormattedText, width: int = WIDTH) -> FormattedText:
    """Text with each line wider than `width` wrapped between its words (continuation lines
    indented), so that nothing is cut silently: a toolbar on a narrow terminal."""
    lines: list[Cell] = [[]]
    for fragment in text:
        style, chunk = fragment[0], fragment[1]
        for number, part in enumerate(chunk.split("\n")):
            if number:
                lines.append([])
            if part:
                lines[-1].append((style, part))
    wrapped: list[Cell] = []
    for line in lines:
        if _width(line) <= width:
            wrapped.append(line)
            continue
        words: list[Cell] = []
        word: Cell = []
        for style, part in line:
            for piece in re.split(r"(\s+)", part):
                if piece and piece.isspace():
                    words += [word] if word else []
                    word = []
                elif piece:
                    word.append((style, piece))
        words += [word] if word else []
        wrapped += _flow(words, width, indent=2)
    return _lines(wrapped)


def _clip(text: str, columns: int) -> str:
    """Text cut to `columns` (ending with … when cut), padded to exactly that width."""
    if get_cwidth(text) > columns:
        while get_cwidth(text) > columns - 1:
            text = text[:-1]
        text += "…"
    return text + " " * (columns - get_cwidth(text))


def _bean(card_or_bean: Card | Bean) -> Fragment:
    bean = card_or_bean if isinstance(card_or_bean, Bean) else bean_of(card_or_bean)
    return (f"class:bean.{bean.name.lower()}", str(bean))


def _title(text: str) -> Cell:
    return [("class:title", text)]


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _opening(view: PlayerView, text: str) -> str:
    """A sentence's first words: capitalised, unless they are another player's name, which
    keeps the case it was typed in ("bot1 planted ...", "You planted ..."; the reader is
    "you" whatever their name)."""
    others = [name for seat, name in enumerate(view.names) if seat != view.seat and name]
    if any(re.match(rf"{re.escape(name)}(?!\w)", text) for name in others):
        return text
    return _capital(text)


def _coins(count: int) -> str:
    return f"{count} coin" + ("" if count == 1 else "s")


# --- The table -------------------------------------------------------------------------------

PHASE_WORDS = {
    Phase.PLANT: "step 1, planting",
    Phase.REVEAL: "step 2, turning cards",
    Phase.TRADE: "step 2, trading",
    Phase.PLANT_PENDING: "step 3, planting traded cards",
    Phase.OVER: "game over",
}
# The same, short enough for the toolbar's first line to fit 80 columns.
TOOLBAR_PHASE_WORDS = {
    Phase.PLANT: "step 1, plant",
    Phase.REVEAL: "step 2, face-up cards",
    Phase.TRADE: "step 2, trade",
    Phase.PLANT_PENDING: "step 3, plant traded",
    Phase.OVER: "game over",
}


def render_table(view: PlayerView, width: int = WIDTH) -> FormattedText:
    """The whole table: turn and deck, every player, face-up cards, offers, my hand, hints."""
    lines = _header(view, width)
    for seat in range(len(view.state.players)):
        lines += _player_rows(view, seat, width)
    lines += _face_up_rows(view, width)
    lines += _offer_rows(view, width)
    lines += _hand_rows(view, width)
    lines += _hint_rows(view, width)
    return _lines(lines)


def render_hand(view: PlayerView, width: int = WIDTH) -> FormattedText:
    """My hand, my fields and what I may do now."""
    return _lines(
        _hand_rows(view, width) + _player_rows(view, view.seat, width) + _hint_rows(view, width)
    )


def _header(view: PlayerView, width: int) -> list[Cell]:
    state = view.state
    left = [
        ("class:title", f"Turn {state.turn}"),
        ("", " · "),
        (
            "class:active",
            "your turn" if state.active == view.seat else f"{view.who(state.active)}'s turn",
        ),
        ("", f" · {PHASE_WORDS[state.phase]}"),
    ]
    right = [("", _deck_words(state))]
    gap = width - _width(left) - _width(right)
    if gap >= 2:
        return [[*left, ("", " " * gap), *right]]
    return _flow([left, right], width)


def _deck_words(state: State) -> str:
    end = state.setup.exhaustions_to_end
    return (
        f"deck {state.deck.remaining} · discard {len(state.discard)} · "
        f"exhausted {state.exhaustions} of {end}"
    )


def _field_cell(state: State, seat: int, index: int) -> Cell:
    cards = state.players[seat].fields[index]
    number = ("class:muted", f"{index + 1}:")
    if not cards:
        return [number, ("class:muted", "empty")]
    return [
        number,
        _bean(cards[0]),
        ("", f" {len(cards)}"),
        ("class:coins", f" ({pays_words(cards)})"),
    ]


def _player_rows(view: PlayerView, seat: int, width: int) -> list[Cell]:
    """One player: name, coins, hand size, fields (cards and what a harvest pays now); then
    the hand cards everyone can see and the cards waiting to be planted."""
    state = view.state
    player = state.players[seat]
    active = seat == state.active
    name = view.names[seat]
    if seat == view.seat and name.casefold() != "you":  # `bean-client play` names you "you"
        name += " (you)"
    head: Cell = [
        ("class:active" if active else "", ">" if active else " "),
        ("", f" {seat + 1} "),
        ("class:me" if seat == view.seat else "", _clip(name, NAME_COLUMNS)),
    ]
    cells = [head, [("class:coins", _coins(len(player.earnings)).rjust(8))]]
    cells += [[("", f"hand {len(player.hand)}".ljust(7))]]
    cells += [_field_cell(state, seat, index) for index in range(len(player.fields))]
    rows = _flow(cells, width)
    shown = [(p, h.card) for p, h in enumerate(player.hand, 1) if h.card is not None]
    if shown and seat != view.seat:
        items = [[("", f"#{p}"), ("", " "), _bean(card)] for p, card in shown]
        rows += _flow([[("", " " * INDENT + "shows")], *items], width)
    if player.pending:
        items = [[_bean(card)] for card in player.pending]
        rows += _flow([[("", " " * INDENT + "to plant:")], *items], width)
    return rows


def _face_up_rows(view: PlayerView, width: int) -> list[Cell]:
    state = view.state
    if state.phase is Phase.REVEAL:
        return _paragraph(f"Turning {len(state.reveal_slots)} cards face up…", width, "class:muted")
    if not state.face_up:
        return []
    cells = [_title("Face up:")]
    cells += [[("class:muted", f"{i}:"), _bean(card)] for i, card in enumerate(state.face_up, 1)]
    return _flow(cells, width)


def _offer_rows(view: PlayerView, width: int) -> list[Cell]:
    if not view.state.offers:
        return []
    rows = _flow([_title("Offers:")], width)
    for offer in view.state.offers:
        rows += _flow(_offer_cells(view, offer), width)
    return rows


def _offer_cells(view: PlayerView, offer: Offer) -> list[Cell]:
    """ "7 Ann to everyone: gives soy (Ann's #2) and chili (face 1), wants 2 blue   open to you";
    "8 bot1: gives you green, wants your stink" (the words of the event that made it)."""
    state = view.state
    cells: list[Cell] = [[("class:offer", f"{offer.id:>3}")]]
    cells += _words(f"{_opening(view, offer_heading(view, offer))}:")
    cells += _terms_cells(view, offer)
    bidders = [bid.bidder for bid in bids_on(state, offer.id)]
    if offer.maker == view.seat:
        cells.append([("class:muted", "(yours)")])
    elif view.seat in bidders:
        cells.append([("class:hint", f"(your bid stands: {view.who(offer.maker)} chooses)")])
    elif view.seat in accepters(state, offer):
        cells.append([("class:hint", "(open to you)")])
    if bidders:
        names = join_words([view.who(seat) for seat in bidders])
        cells += _words(f"takers: {names}")
    return cells


def offer_heading(view: PlayerView, offer: Offer) -> str:
    """Whose offer, and to whom when its terms do not say: "Ann to everyone", "bot1"."""
    return view.who(offer.maker) + (" to everyone" if offer.to is None else "")


def _offer_gives(view: PlayerView, offer: Offer) -> list[Cell]:
    state = view.state
    hand = state.players[offer.maker].hand
    position = {h.slot: (p, h.card) for p, h in enumerate(hand, 1)}
    whose = _whose(view, offer.maker)  # a bare "#2" reads as the reader's own #2
    cells: list[Cell] = []
    for slot in offer.give_hand:
        p, card = position[slot]
        where = f"{whose} #{p}"
        cells.append([_bean(card), ("class:muted", f" ({where})")] if card else [("", where)])
    for card in offer.give_face_up:
        cells.append([_bean(card), ("class:muted", f" (face {state.face_up.index(card) + 1})")])
    return cells


def _offer_wants(view: PlayerView, offer: Offer) -> list[Cell]:
    state = view.state
    cells: list[Cell] = []
    for card in offer.want_cards:
        if card in state.face_up:
            where = f"face {state.face_up.index(card) + 1}"
        else:
            holder, p = next(
                (s, p)
                for s, player in enumerate(state.players)
                for p, h in enumerate(player.hand, 1)
                if h.card == card
            )
            where = f"{_whose(view, holder)} #{p}"
        cells.append([_bean(card), ("class:muted", f" ({where})")])
    for bean, count in offer.want_beans:
        cells.append([("", f"{count} "), _bean(bean)] if count > 1 else [_bean(bean)])
    return cells


def _hand_rows(view: PlayerView, width: int) -> list[Cell]:
    """My hand in order, with positions; the front card marked."""
    cards = view.my_cards()
    if not cards:
        return _flow([_title("Your hand is empty.")], width)
    cells = [_title("Your hand:")]
    for position, _, card in cards:
        cell: Cell = [("class:muted", f"#{position} ")]
        cell.append(_bean(card) if card is not None else ("class:muted", "?"))
        if position == 1:
            cell.append(("class:muted", " (front)"))
        if view.me.hand[position - 1].card is not None:
            cell.append(("class:muted", " (shown)"))
        cells.append(cell)
    return _flow(cells, width)


# --- The bean-o-meter ------------------------------------------------------------------------

BEAN_COLUMNS = 12  # the bean's name in the bean-o-meter


def bean_rows(view: PlayerView) -> list[tuple[Bean, int, int | None, tuple[str, ...]]]:
    """Each bean: the cards of it in this game's deck, how many this seat has not seen (None:
    not in this game), and how many beans pay 1, 2, 3, 4 coins ("-": never)."""
    unseen = unseen_beans(view)
    return [
        (
            bean,
            deck_count(view, bean),
            unseen.get(bean),
            tuple("-" if need is None else str(need) for need in BEANOMETER[bean]),
        )
        for bean in BEANS
    ]


def render_beans(view: PlayerView, width: int = WIDTH) -> FormattedText:
    """The bean-o-meter as a table: a row a bean, every bean of the game."""
    head = "Bean".ljust(BEAN_COLUMNS) + "cards  unseen    1c  2c  3c  4c"
    lines: list[Cell] = [[("class:title", head)]]
    players = len(view.state.players)
    for bean, cards, unseen, needs in bean_rows(view):
        name: Fragment = (_bean(bean)[0], str(bean).ljust(BEAN_COLUMNS))
        if unseen is None:
            lines.append([name, ("class:muted", f"not in a game of {players}")])
            continue
        meter = "".join(need.rjust(4) for need in needs)
        lines.append([name, ("", f"{cards:>5}  {unseen:>6}  {meter}")])
    note = "unseen: not yet shown to everyone and not in your hand (help beans)."
    return _lines(lines + _paragraph(note, width, "class:muted"))


# --- Hints -----------------------------------------------------------------------------------


def render_hints(view: PlayerView, width: int = WIDTH) -> FormattedText:
    return _lines(_hint_rows(view, width))


def _hint_rows(view: PlayerView, width: int) -> list[Cell]:
    """What the game wants from me, where my front card fits, what harvests pay now, and the
    commands that are legal now."""
    state = view.state
    legal = legal_actions(state, view.seat, view.hand)
    rows: list[Cell] = []
    mine = {what: [view.seat] for seat, what in waiting_for(state) if seat == view.seat}
    if mine:
        rows += _paragraph(f"Your move: {_duties_by_seat(mine)[view.seat]}.", width, "class:hint")
    plants = [a for a in legal if isinstance(a, Plant)]
    front = view.my_cards()[0][2] if view.me.hand else None
    if state.phase is Phase.PLANT and state.active == view.seat and state.planted < 2 and front:
        fields = [f"{a.field + 1} ({field_words(view.me.fields[a.field])})" for a in plants]
        fits = f"fits field {join_words(fields, 'or')}" if fields else "fits no field now"
        rows += _paragraph(f"Your front {bean_of(front)} {fits}.", width, "class:hint")
    for offer in state.offers:
        if any(bid.bidder == view.seat for bid in bids_on(state, offer.id)):
            maker = view.who(offer.maker)
            text = f"Your bid on offer {offer.id} stands: waiting for {maker} to choose."
            rows += _paragraph(text, width, "class:hint")
    harvests = [a.field for a in legal if isinstance(a, Harvest)]
    if harvests:
        pays = [f"field {i + 1}: {_coins(harvest_value(state, view.seat, i))}" for i in harvests]
        rows += _paragraph(f"A harvest now pays: {', '.join(pays)}.", width, "class:muted")
    commands = list(dict.fromkeys(_hint_command(view, action) for action in legal))
    if offer_options(state, view.seat) is not None:
        commands.append("o …")
    if commands:
        cells = [[("", f"{c} ·" if n < len(commands) else c)] for n, c in enumerate(commands, 1)]
        rows += _flow([[("class:muted", "You may:")], *cells], width)
    return rows


def _hint_command(view: PlayerView, action: Action) -> str:
    if isinstance(action, Accept):
        return f"a {action.offer}"  # the cards are asked for when there is a choice
    return command_for(action, view, short=True)


# --- The table's identity: its code, its keys, its proofs (issue 13) ---------------------------


def render_table_code(code: str, proofs: bool) -> FormattedText:
    """The line under the table: the code to compare aloud, and proofs weaker than the floor."""
    lines: list[Cell] = [
        [("class:title", "Table code "), ("class:active", code), ("", " (all should see it)")]
    ]
    if not proofs:
        lines.append([("class:error", f"Weak {PROOFS_OFF}.")])
    return _lines(lines)


def render_who(
    view: PlayerView,
    keys: Sequence[bytes],
    connected: frozenset[int],
    code: str,
    away: frozenset[int] = frozenset(),
    labels: Sequence[str] = (),
    width: int = WIDTH,
    relayed: frozenset[int] = frozenset(),
) -> FormattedText:
    """Everyone at the table: name, key fingerprint, whether this seat's link to them is up
    (directly, or through the lobby's relay: `relayed`), or they are away (their link
    dropped), what is known of a bot (`labels`, by seat); then the table code, with the line
    asking the table to compare it."""
    lines: list[Cell] = []
    for seat, name in enumerate(view.names):
        link = "you" if seat == view.seat else link_words(seat, connected, away, relayed)
        label = f" {labels[seat]}" if seat < len(labels) and labels[seat] else ""
        cells: list[Cell] = [
            [("class:active", f"{seat + 1} {name}")],
            [("", f" key {fingerprint(keys[seat])}")],
            [("", f" {link}")],
        ]
        lines += _flow(cells + ([[("class:muted", label)]] if label else []), width)
    lines.append([("class:title", "Table code "), ("class:active", code)])
    lines += _paragraph(CHECK_CODE, width)
    return _lines(lines)


def link_words(
    seat: int, connected: frozenset[int], away: frozenset[int], relayed: frozenset[int]
) -> str:
    """How this seat's link to `seat` stands, in a few words."""
    if seat in away:
        return "away"
    if seat not in connected:
        return "no link"
    return "linked through the lobby" if seat in relayed else "linked"


def toolbar_relayed(names: Sequence[str], relayed: frozenset[int]) -> str | None:
    """The toolbar's line naming the players reached through the lobby's relay (None: all
    directly)."""
    if not relayed:
        return None
    return "Through the lobby: " + join_words([names[seat] for seat in sorted(relayed)])


def render_netcheck(view: PlayerView, how: Sequence[str], width: int = WIDTH) -> FormattedText:
    """How this seat reaches each other player (`how`, by seat), and why."""
    lines: list[Cell] = []
    for seat, name in enumerate(view.names):
        if seat != view.seat:
            lines += _flow([[("class:active", f"{seat + 1} {name}")], *_words(how[seat])], width)
    return _lines(lines)


def toolbar_proof_warning(proofs: bool) -> str | None:
    """The toolbar's line for a table dealt without proofs (None with them)."""
    return None if proofs else PROOFS_OFF


# --- The bottom toolbar ----------------------------------------------------------------------


def render_toolbar(view: PlayerView, width: int = WIDTH) -> FormattedText:
    """Two lines: the turn, step, deck and my coins; then whom the game waits for and for
    what (or who won). Between them, while trades wait on a choice, my offers' takers and my
    bids ("Offer 7: 2 takers · your bid on offer 9: waiting for Ann to choose")."""
    state = view.state
    end = state.setup.exhaustions_to_end
    turn = "your turn" if state.active == view.seat else f"{view.names[state.active]}'s turn"
    rest: Cell = [
        ("", f" · {TOOLBAR_PHASE_WORDS[state.phase]} · deck {state.deck.remaining}"),
        ("", f", exhausted {state.exhaustions}/{end} · "),
        ("class:coins", _coins(len(view.me.earnings))),
    ]
    status: Cell = [("class:title", f"Turn {state.turn} · "), ("class:active", turn), *rest]
    if state.result is not None:
        winners = _opening(view, join_words([view.who(s) for s in state.result.winners]))
        won = " won."
        if get_cwidth(winners) + len(won) > width:  # a tie of long names
            winners = _clip(winners, width - len(won)).rstrip()
        waiting: Cell = [("class:active", winners + won)]
    else:
        label = "Waiting: "
        waiting = [("class:title", label), *_waiting_cell(view, width - len(label))]
    lines = [status, waiting]
    bids = _bids_words(view)
    if bids:  # above: the last line stays whom the game waits for
        lines.insert(1, [("class:hint", _clip(bids, width).rstrip())])
    return rewrap(_lines(lines), width)


def _bids_words(view: PlayerView) -> str:
    """My offers' takers ("Offer 7: 2 takers") and my own bids ("your bid on offer 9: waiting
    for Ann to choose"), for the toolbar."""
    state = view.state
    parts = []
    for offer in state.offers:
        bids = bids_on(state, offer.id)
        if offer.maker == view.seat and bids:
            parts.append(f"offer {offer.id}: {len(bids)} taker{'s' if len(bids) > 1 else ''}")
        elif any(bid.bidder == view.seat for bid in bids):
            maker = view.who(offer.maker)
            parts.append(f"your bid on offer {offer.id}: waiting for {maker} to choose")
    return _capital(" · ".join(parts))


def render_takers(view: PlayerView, offer_id: int, width: int = WIDTH) -> FormattedText:
    """For the maker of an offer to everyone: who takes it and the line that takes each one
    ("Bob and cy take offer 7: take 7 bob or take 7 cy; withdraw 7 lets them lapse.")."""
    bids = bids_on(view.state, offer_id)
    names = _opening(view, join_words([view.who(bid.bidder) for bid in bids]))
    verb = "takes" if len(bids) == 1 else "take"
    commands = join_words([command_for(Take(offer_id, bid.bidder), view) for bid in bids], "or")
    lapse = "it lapse" if len(bids) == 1 else "them lapse"
    text = f"{names} {verb} offer {offer_id}: {commands}; withdraw {offer_id} lets {lapse}."
    return _lines(_paragraph(text, width, "class:hint"))


def _waiting_cell(view: PlayerView, room: int) -> Cell:
    """Whom the game waits for and for what ("Ann: trade, or end trading; answer offer 7:
    you, Bob"); when that does not fit in `room` columns, each seat's duties together; by
    name only when even that does not fit, cut when even that does not."""
    waiting: dict[str, list[int]] = {}
    for seat, what in waiting_for(view.state):
        waiting.setdefault(what, []).append(seat)
    if not waiting:
        return [("class:muted", "the table is turning cards")]

    def names(seats: list[int]) -> Cell:
        cell: Cell = []
        for number, seat in enumerate(seats):
            cell += [("", ", ")] if number else []
            cell.append(("class:me" if seat == view.seat else "class:active", view.who(seat)))
        return cell

    full: Cell = []
    for number, (what, seats) in enumerate(waiting.items()):
        full += [("", "; ")] if number else []
        full += (
            [*names(seats), ("", f": {what}")]
            if len(seats) == 1
            else [
                ("", f"{what}: "),
                *names(seats),
            ]
        )
    if _width(full) <= room:
        return full
    by_seat = _duties_by_seat(waiting)
    shorter: Cell = []
    for number, (seat, duties) in enumerate(by_seat.items()):
        shorter += [("", "; ")] if number else []
        shorter += [*names([seat]), ("", f": {duties}")]
    if _width(shorter) <= room:
        return shorter
    short = names(list(by_seat))
    return short if _width(short) <= room else [*_cut(short, max(room - 1, 1))[0], ("", "…")]


def waiting_words(view: PlayerView) -> str:
    """Whom the game waits for, each seat's duties together, as the toolbar says them when
    they do not fit ("bot1: trade, or end trading; you: answer offers 22-29"), whatever the
    width: plain mode's status."""
    waiting: dict[str, list[int]] = {}
    for seat, what in waiting_for(view.state):
        waiting.setdefault(what, []).append(seat)
    if not waiting:
        return "the table is turning cards"
    duties = _duties_by_seat(waiting)
    return "; ".join(f"{view.who(seat)}: {what}" for seat, what in duties.items())


def _duties_by_seat(waiting: dict[str, list[int]]) -> dict[int, str]:
    """Each waited-for seat's duties in one phrase, its offers to answer merged ("trade, or
    end trading, answer offers 20, 21")."""
    duties: dict[int, list[str]] = {}
    offers: dict[str, dict[int, list[str]]] = {ANSWER: {}, CHOOSE: {}}
    for what, seats in waiting.items():
        for seat in seats:
            duties.setdefault(seat, [])
            prefix = next((p for p in offers if what.startswith(p)), None)
            if prefix is not None:
                offers[prefix].setdefault(seat, []).append(what.removeprefix(prefix))
            else:
                duties[seat].append(what)
    for prefix, by_seat in offers.items():
        verb = "answer" if prefix == ANSWER else "choose for"
        for seat, ids in by_seat.items():
            duties[seat].append(f"{verb} offer{'s' if len(ids) > 1 else ''} {_runs(ids)}")
    return {seat: ", ".join(phrases) for seat, phrases in duties.items()}


def _runs(ids: list[str]) -> str:
    """Offer numbers with every run of three or more said as one ("3, 7–12, 15")."""
    numbers = sorted(int(number) for number in ids)
    said, start = [], 0
    for end in range(1, len(numbers) + 1):
        if end == len(numbers) or numbers[end] != numbers[end - 1] + 1:
            run = numbers[start:end]
            if len(run) >= 3:
                said.append(f"{run[0]}–{run[-1]}")
            else:
                said += [str(number) for number in run]
            start = end
    return ", ".join(said)


ANSWER, CHOOSE = "answer offer ", "choose a taker for offer "  # as protocol.rules.waiting_for


# --- Events, refusals, chat, errors, questions -----------------------------------------------


def render_event(
    before: State,
    seat: int | None,
    action: Action,
    after: State,
    names: Sequence[str],
    me: int,
    width: int = WIDTH,
) -> FormattedText:
    """What an applied action did, in one line (wrapped to the width), then what followed from
    it: offers that lapsed, the deck running out, the next turn, the end of the game. Hand
    cards being shown (ShowHandCards) say nothing: the action that showed them tells."""
    view = PlayerView(before, me, {}, names)
    sentence = _action_sentence(view, seat, action, after)
    lines = _paragraph(sentence, width) if sentence else []
    for consequence in consequences(view, seat, action, after):
        lines += _paragraph(consequence, width, "class:muted")
    return _lines(lines)


def _action_sentence(view: PlayerView, seat: int | None, action: Action, after: State) -> str:
    phrase = action_phrase(view, seat, action, after)
    if not phrase:
        return ""
    subject = view.who(seat) if seat is not None else ""
    return _opening(view, f"{subject} {phrase}." if subject else f"{phrase}.")


def action_phrase(view: PlayerView, seat: int | None, action: Action, after: State) -> str:
    """What an action did, said after its player ("planted chili in field 1 (chili 3)"; the
    table's own: "face up: chili, soy"); empty for what says nothing by itself."""
    before = view.state
    if isinstance(action, RevealFaceUp):
        return f"face up: {bean_list(map(bean_of, action.cards))}"
    if seat is None:
        return ""
    if isinstance(action, Plant | PlantPending):
        card = action.card
        # The field as planted (`after` may already be the end, with every field sold).
        field_now = field_words((*before.players[seat].fields[action.field], card))
        return f"planted {bean_of(card)} in field {action.field + 1} ({field_now})"
    if isinstance(action, EndPlanting):
        return "stopped planting"
    if isinstance(action, Harvest):
        sold = field_words(before.players[seat].fields[action.field])
        paid = _coins(harvest_value(before, seat, action.field))
        return f"harvested field {action.field + 1} ({sold}) for {paid}"
    if isinstance(action, BuyField):
        return "bought a third field"
    if isinstance(action, MakeOffer):
        made = next(o for o in after.offers if o.id == before.next_offer_id)
        to = " to everyone" if made.to is None else ""
        return f"made offer {made.id}{to}: {offer_terms(view._replace(state=after), made)}"
    if isinstance(action, Accept):
        offer = next(o for o in before.offers if o.id == action.offer)
        given = [card for _, card in action.give_hand]
        if offer.to is not None:
            return f"{_trade(view, offer, given)} (offer {offer.id})"
        waiting = f". Waiting for {view.who(offer.maker)} to choose" if seat == view.seat else ""
        return f"bid on offer {offer.id}: would {_trade(view, offer, given, bid=True)}{waiting}"
    if isinstance(action, Take):
        offer = next(o for o in before.offers if o.id == action.offer)
        bid = next(b for b in bids_on(before, offer.id) if b.bidder == action.bidder)
        hand = {h.slot: h.card for h in before.players[action.bidder].hand}
        given = [card for card in (hand[slot] for slot in bid.give_hand) if card is not None]
        trade = f"{view.who(action.bidder)} {_trade(view, offer, given)}"
        return f"took {_whose(view, action.bidder)} bid on offer {offer.id}: {trade}"
    if isinstance(action, Reject):
        return f"rejected offer {action.offer}"
    if isinstance(action, Withdraw):
        offer = next(o for o in before.offers if o.id == action.offer)
        if offer.maker != seat:
            return f"withdrew {'your' if seat == view.seat else 'the'} bid on offer {offer.id}"
        return f"withdrew offer {action.offer}"
    if isinstance(action, EndTrading):
        kept = join_words(bean_list(map(bean_of, before.face_up)).split(", "))
        kept = f", keeping {kept} to plant" if kept else ""
        return f"ended trading{kept}"
    return ""


def offer_terms(view: PlayerView, offer: Offer) -> str:
    """An offer's two sides from the reader's side, its maker doing the verbs: "gives you
    green, wants your stink", "gives you green as a gift", "asks for your stink, gives
    nothing" (the reader's own: "give bot1 green, want bot1's stink")."""
    return to_plain_text(
        FormattedText([part for cell in _terms_cells(view, offer) for part in [*cell, ("", " ")]])
    ).strip()


def _terms_cells(view: PlayerView, offer: Offer) -> list[Cell]:
    """offer_terms' words as cells, the beans in their colours."""
    mine = offer.maker == view.seat
    give, want, ask = ("give", "want", "ask") if mine else ("gives", "wants", "asks")
    gives, wants = _joined(_offer_gives(view, offer)), _joined(_offer_wants(view, offer))
    from_hand = offer.to is not None and not set(offer.want_cards) & set(view.state.face_up)
    whose = _words(_whose(view, offer.to)) if from_hand and offer.to is not None else []
    to = _words(view.who(offer.to)) if offer.to is not None else []
    if gives and wants:
        gives[-1] = [*gives[-1], ("", ",")]
        return [*_words(give), *to, *gives, *_words(want), *whose, *wants]
    if gives:
        return [*_words(give), *to, *gives, *_words("as a gift")]
    asked = [] if whose or offer.to is None else to  # "asks bot1 for wax (face 2)"
    wants[-1] = [*wants[-1], ("", ",")]
    return [*_words(ask), *asked, *_words("for"), *whose, *wants, *_words(f"{give} nothing")]


def _joined(cells: list[Cell]) -> list[Cell]:
    """Cells as words are joined: "a", "a and b", "a, b and c"."""
    if len(cells) <= 1:
        return list(cells)
    listed = [[*cell, ("", ",")] for cell in cells[:-2]]
    return [*listed, cells[-2], [("", "and")], cells[-1]]


def _trade(view: PlayerView, offer: Offer, given: Sequence[Card], bid: bool = False) -> str:
    """A trade of an offer, said after the player who answered it (who gave `given` and the
    cards the offer wants by name): "gave bot1 stink for green", "took bot1's green as a
    gift", "gave bot1 wax for nothing"; a bid says "give" and "take" ("would give ...")."""
    hand = {h.slot: h.card for h in view.state.players[offer.maker].hand}
    gets = [card for card in (hand.get(slot) for slot in offer.give_hand) if card is not None]
    got = bean_list(map(bean_of, [*gets, *offer.give_face_up]))
    gave = bean_list(map(bean_of, [*given, *offer.want_cards]))
    give, take = ("give", "take") if bid else ("gave", "took")
    if not gave:
        return f"{take} {_whose(view, offer.maker)} {got} as a gift"
    return f"{give} {view.who(offer.maker)} {gave} for {got or 'nothing'}"


def _whose(view: PlayerView, seat: int) -> str:
    return "your" if seat == view.seat else f"{view.names[seat]}'s"


def consequences(view: PlayerView, seat: int | None, action: Action, after: State) -> list[str]:
    before = view.state
    said: list[str] = []
    answered = {action.offer} if isinstance(action, Accept | Reject | Withdraw | Take) else set()
    if after.phase is Phase.TRADE:
        lapsed = {o.id for o in before.offers} - {o.id for o in after.offers} - answered
        said += [f"Offer {number} lapsed: nobody can accept it now." for number in sorted(lapsed)]
    done = set()  # the bid taken, or withdrawn by its bidder, says so itself
    if isinstance(action, Take):
        done.add((action.offer, action.bidder))
    elif isinstance(action, Withdraw) and seat is not None:
        done.add((action.offer, seat))
    for bid in before.bids:
        if bid not in after.bids and (bid.offer, bid.bidder) not in done:
            said.append(
                _opening(view, f"{_whose(view, bid.bidder)} bid on offer {bid.offer} lapsed.")
            )
    if after.exhaustions > before.exhaustions:
        end = after.setup.exhaustions_to_end
        reshuffled = (
            "; the discard pile is the new deck" if after.deck.epoch > before.deck.epoch else ""
        )
        said.append(f"The deck ran out ({after.exhaustions} of {end}){reshuffled}.")
    if after.turn != before.turn:
        drawn = len(after.players[before.active].hand) - len(before.players[before.active].hand)
        said.append(
            _opening(view, f"{view.who(before.active)} drew {drawn} cards. ")
            + f"Turn {after.turn}: {view.who(after.active)} to play."
        )
    if after.result is not None and before.result is None:
        said.append(game_over(view, after.result))
    return said


def game_over(view: PlayerView, result: Result) -> str:
    """The one line that says how a game ended: who won, why a tie on coins went their way,
    and everyone's coins, best first ("Game over: you won with 20 coins and more cards left in
    hand than bot2. Coins: you 20, bot2 20, bot1 15.")."""
    scores, winners = result.scores, result.winners
    ranking = sorted(range(len(scores)), key=lambda s: (-scores[s], -result.hand_counts[s]))
    best = scores[winners[0]]
    names = join_words([view.who(s) for s in winners])
    if len(winners) > 1:
        head = f"{names} share the win with {_coins(best)} each"
    else:
        head = f"{names} won with {_coins(best)}"
    tied = [view.who(s) for s in ranking if scores[s] == best and s not in winners]
    if tied:
        head += f" and more cards left in hand than {join_words(tied)}"
    coins = ", ".join(f"{view.who(s)} {scores[s]}" for s in ranking)
    return f"Game over: {head}. Coins: {coins}."


_VERBS: dict[type, str] = {
    Plant: "plant",
    EndPlanting: "stop planting",
    Harvest: "harvest",
    BuyField: "buy a field",
    MakeOffer: "make an offer",
    EndTrading: "end trading",
    PlantPending: "plant a traded card",
}


def render_refusal(
    refusal: Refusal, state: State, names: Sequence[str], me: int, width: int = WIDTH
) -> FormattedText:
    """An action the step refused (an earlier action in the same step spoiled it)."""
    view = PlayerView(state, me, {}, names)
    action = refusal.action
    if isinstance(action, Accept | Reject | Withdraw):
        verb = f"{type(action).__name__.lower()} offer {action.offer}"
    elif isinstance(action, Take):
        verb = f"take a bid on offer {action.offer}"
    else:
        verb = _VERBS.get(type(action), "do that")
    who = view.who(refusal.seat)
    text = _opening(view, f"{who} could not {verb}: {view.readable(refusal.reason)}.")
    return _lines(_paragraph(text, width, "class:error"))


def render_error(message: str, width: int = WIDTH) -> FormattedText:
    """A command that cannot be done, with the reason."""
    return _lines(_paragraph(message, width, "class:error"))


def render_chat(name: str, text: str, width: int = WIDTH) -> FormattedText:
    return _lines(_flow([[("class:chat", f"{name}:")], *_words(text)], width))


def render_question(question: Question, width: int = WIDTH) -> FormattedText:
    """The question and its numbered choices, each with the line that makes it directly."""
    lines = _paragraph(question.prompt, width, "class:title")
    for number, choice in enumerate(question.choices, 1):
        cells = [[("class:offer", f"{number:>3})")], *_words(choice.label)]
        cells.append([("class:muted", f"({choice.command})")])
        lines += _flow(cells, width)
    lines += _paragraph("Type a number, or another command.", width, "class:muted")
    return _lines(lines)


# --- Help ------------------------------------------------------------------------------------


def render_help(topic: str | None = None, lobby: bool = False, width: int = WIDTH) -> FormattedText:
    """Every command in a line each, or one command with its examples."""
    commands: Sequence[Command[object]] = LOBBY_COMMANDS if lobby else GAME_COMMANDS
    if topic is None:
        lines: list[Cell] = []
        for command in commands:
            aliases = f" ({', '.join(command.aliases)})" if command.aliases else ""
            padding = " " * max(HELP_COLUMN - len(command.name + aliases), 1)
            head = [("class:title", command.name), ("class:muted", aliases + padding)]
            lines += _flow([head, *_words(command.summary)], width, indent=HELP_COLUMN + 1)
        note = "help COMMAND explains one; join game actions with ; to send them together."
        return _lines(lines + _paragraph(note, width, "class:muted"))
    found = find_command(topic, commands)
    if found is None:
        return render_error(f"there is no command '{topic}'", width)
    lines = _flow([[("class:title", found.usage)]], width)
    lines += _paragraph(found.summary, width)
    if not lobby and found.name == "beans":
        lines += _table("The columns:", BEANS_HELP, width)
    if not lobby and found.name in ("offer", "gift", "counter"):
        lines += _table("CARDS you give:", GIVE_HELP, width)
        if found.name != "gift":
            lines += _table("WANTS:", WANT_HELP, width)
    if found.aliases:
        lines += _paragraph(f"Also: {', '.join(found.aliases)}", width, "class:muted")
    lines += _flow([[("class:muted", "e.g.")], *(_words("  ·  ".join(found.examples)))], width)
    return _lines(lines)


def _table(title: str, rows: Iterable[tuple[str, str]], width: int) -> list[Cell]:
    lines = _flow([_title(title)], width)
    for words, meaning in rows:
        lines += _flow(
            [[("", f"  {words:<{HELP_COLUMN}}")], *_words(meaning)], width, HELP_COLUMN + 3
        )
    return lines


# --- The lobby -------------------------------------------------------------------------------


def render_rooms(rooms: Sequence[RoomSummary], width: int = WIDTH) -> FormattedText:
    if not rooms:
        return _lines(
            _paragraph("No open rooms. create SEATS NAME opens one.", width, "class:muted")
        )
    lines: list[Cell] = []
    for room in rooms:
        cells = [
            [("class:offer", f"{room.room_id:>5}")],
            [("", f"{room.taken}/{room.seats}")],
            [("class:title", room.name)],
            *_words(options_words(room.options)),
        ]
        lines += _flow(cells, width)
    return _lines(lines)


def options_words(options: RoomOptions) -> str:
    words = ["literal one-bean rule"] if options.singleton_rule.endswith("literal") else []
    words += [f"{options.turn_seconds}s a turn"] if options.turn_seconds else []
    return ", ".join(words)


def render_room(
    room: RoomState, own_bots: Mapping[bytes, str] | None = None, width: int = WIDTH
) -> FormattedText:
    """The room I am in: who is there, who is ready, and which are bots (`own_bots`: the keys
    of the bots this client started, with their strategy; player_view.bot_label)."""
    head = f"Room {room.room_id} {room.name}: {len(room.members)} of {room.seats} seats"
    lines = _paragraph(head, width, "class:title")
    for member in room.members:
        ready = [("class:hint", "ready")] if member.ready else [("class:muted", "not ready")]
        label = bot_label(member.name, member.public_key, own_bots or {})
        bot = [[("class:muted", f"({label})")]] if label else []
        lines += _flow([[("", "  " + member.name)], ready, *bot], width)
    return _lines(lines)
