"""Tab completion for the REPL, synchronous over the current state (STYLE.md: no threaded
completer over live state).

`GameCompleter(current)` completes command names, then their arguments from what the rules
allow now: fields that fit, offers open to me, the takers of my offers to everyone, players I
may offer to, my hand positions with their beans, face-up cards, bean names. `current()`
returns the `PlayerView` of this moment (or None before a game). Text before the last `;` is
taken as already done, so `h 2; p ` offers the fields that fit once field 2 is harvested.
`LobbyCompleter(rooms)` does the same for the lobby commands, with `rooms()` returning the
last room list seen (and my bots, my unfinished games).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import NamedTuple

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from client.bots import STRATEGIES
from client.gamefile import GameFile
from client.screen.commands import (
    FACE_WORD,
    GAME_COMMANDS,
    GIVE_WORDS,
    WANT_WORDS,
    Command,
    CommandError,
    Submit,
    bean_word,
    default_recipient,
    find_command,
    parse_game_command,
    player_token,
    resolve_player,
)
from client.screen.lobby_commands import LOBBY_COMMANDS, PROOF_WORDS, RULE_WORDS
from client.screen.player_view import PlayerView, bean_list, field_words, offer_summary
from protocol.cards import Bean, bean_of
from protocol.messages import MAX_SEATS, MIN_SEATS, RoomSummary
from protocol.rules import (
    Accept,
    Action,
    Harvest,
    Offer,
    Phase,
    Plant,
    PlantPending,
    Reject,
    Take,
    Withdraw,
    accepters,
    harvest_value,
    legal_actions,
    offer_options,
)


class Candidate(NamedTuple):
    text: str
    meta: str = ""


ArgumentCompleter = Callable[[list[str], PlayerView], Iterable[Candidate]]


def _completions(candidates: Iterable[Candidate], word: str) -> Iterator[Completion]:
    """The candidates that continue the word being typed, each once."""
    typed = word.casefold()
    seen = set()
    for candidate in candidates:
        if candidate.text.casefold().startswith(typed) and candidate.text not in seen:
            seen.add(candidate.text)
            yield Completion(candidate.text, -len(word), display_meta=candidate.meta)


def _split(text: str) -> tuple[list[str], str]:
    """The finished words of a line and the word being typed ("" after a space)."""
    words = text.replace(",", " ").split()
    if not text or text[-1] in " ,":
        return words, ""
    return words[:-1], words[-1]


def _command_names(commands: Sequence[Command[object]]) -> list[Candidate]:
    return [Candidate(c.name, c.summary) for c in commands]


class GameCompleter(Completer):
    def __init__(self, current: Callable[[], PlayerView | None]) -> None:
        self._current = current

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterator[Completion]:
        text = document.text_before_cursor.lstrip()
        head, space, _ = text.partition(" ")
        chat = find_command(head, GAME_COMMANDS)
        if text.startswith("'") or (space and chat is not None and chat.takes_text):
            return  # a chat line is free text, semicolons and all
        done, _, segment = text.rpartition(";")
        words, word = _split(segment)
        if not words:
            yield from _completions(_command_names(GAME_COMMANDS), word)
            return
        command = find_command(words[0], GAME_COMMANDS)
        view = self._current()
        if command is None or view is None or (done and not command.joinable):
            return
        if done:
            view = _after_line(view, done)
        arguments = GAME_ARGUMENTS.get(command.name)
        if arguments is not None:
            yield from _completions(arguments([w.casefold() for w in words[1:]], view), word)


def _after_line(view: PlayerView, line: str) -> PlayerView:
    """The view once the line's actions are done; the same view if it does none."""
    try:
        result = parse_game_command(line, view)
    except CommandError:
        return view
    return view.after(result.actions) if isinstance(result, Submit) else view


def _legal(view: PlayerView) -> list[Action]:
    return legal_actions(view.state, view.seat, view.hand)


def _field(view: PlayerView, index: int) -> Candidate:
    return Candidate(str(index + 1), field_words(view.me.fields[index]))


def _plant_arguments(args: list[str], view: PlayerView) -> Iterable[Candidate]:
    if view.state.phase is Phase.PLANT_PENDING:
        return _pending_arguments(args, view)
    current = _after_line(view, "plant " + " ".join(args)) if args else view
    candidates = [_field(current, a.field) for a in _legal(current) if isinstance(a, Plant)]
    if current.state.phase is Phase.PLANT and current.state.planted >= 1:
        candidates.append(Candidate("end", "plant no more"))
    return candidates


def _pending_arguments(args: list[str], view: PlayerView) -> list[Candidate]:
    """Step 3: after a bean, the fields it fits; otherwise the beans still to plant."""
    last_bean = _bean_or_none(args[-1]) if args else None
    done = args[:-1] if last_bean is not None else args
    if last_bean is not None and len(done) >= 1 and done[-1].isdigit():
        done = done[:-1]  # the count before the bean
    current = _after_line(view, "plant " + " ".join(done)) if done else view
    plants = [a for a in _legal(current) if isinstance(a, PlantPending)]
    pending = current.me.pending
    kinds = list(dict.fromkeys(bean_of(c) for c in pending))
    if last_bean is not None:
        return [_field(current, a.field) for a in plants if bean_of(a.card) is last_bean]
    candidates = [
        Candidate(str(b), f"{sum(bean_of(c) is b for c in pending)} to plant") for b in kinds
    ]
    if len(kinds) == 1:
        candidates += [_field(current, a.field) for a in plants]
    return candidates


def _bean_or_none(word: str) -> Bean | None:
    try:
        return bean_word(word)
    except CommandError:
        return None


def _harvest_arguments(args: list[str], view: PlayerView) -> list[Candidate]:
    return [
        Candidate(
            str(a.field + 1),
            f"{field_words(view.me.fields[a.field])}, pays "
            f"{harvest_value(view.state, view.seat, a.field)}",
        )
        for a in _legal(view)
        if isinstance(a, Harvest) and str(a.field + 1) not in args
    ]


def _offers_by_id(view: PlayerView) -> dict[int, Offer]:
    return {o.id: o for o in view.state.offers}


def _offer_ids(view: PlayerView, ids: Iterable[int]) -> list[Candidate]:
    offers = _offers_by_id(view)
    return [Candidate(str(i), offer_summary(view, offers[i])) for i in dict.fromkeys(ids)]


def _accept_arguments(args: list[str], view: PlayerView) -> list[Candidate]:
    accepts = [a for a in _legal(view) if isinstance(a, Accept)]
    if not args:
        return _offer_ids(view, (a.offer for a in accepts))
    positions = {slot: (position, card) for position, slot, card in view.my_cards()}
    named = args[1:]
    candidates = []
    for accept in accepts:
        if str(accept.offer) == args[0]:
            for slot, card in accept.give_hand:
                position = positions[slot][0]
                if f"#{position}" not in named and str(position) not in named:
                    candidates.append(Candidate(f"#{position}", str(bean_of(card))))
    return sorted(candidates, key=lambda c: int(c.text[1:]))


def _answer_arguments(kind: type[Reject] | type[Withdraw]) -> ArgumentCompleter:
    def complete(args: list[str], view: PlayerView) -> list[Candidate]:
        ids = [a.offer for a in _legal(view) if isinstance(a, kind) and str(a.offer) not in args]
        return [*_offer_ids(view, ids), Candidate("all", "every one of them")] if ids else []

    return complete


def _take_arguments(args: list[str], view: PlayerView) -> list[Candidate]:
    """My offers to everyone that have takers, then each taker."""
    takes = [a for a in _legal(view) if isinstance(a, Take)]
    if not args:
        return _offer_ids(view, (a.offer for a in takes))
    if len(args) > 1:
        return []
    return [
        Candidate(player_token(view, a.bidder), view.names[a.bidder])
        for a in takes
        if str(a.offer) == args[0]
    ]


def _recipients(view: PlayerView) -> list[Candidate]:
    options = offer_options(view.state, view.seat)
    if options is None:
        return []
    return [
        Candidate("all", "everyone")
        if seat is None
        else Candidate(player_token(view, seat), view.names[seat])
        for seat in options.recipients
    ]


def _offer_arguments(args: list[str], view: PlayerView) -> list[Candidate]:
    if not args:
        return [*_recipients(view), *_keywords()]
    if args[0] in GIVE_WORDS + WANT_WORDS:
        return _terms_arguments(args, view, default_recipient(view))
    try:
        recipient = resolve_player(args[0], view)
    except CommandError:
        return []
    return _terms_arguments(args[1:], view, recipient)


def _keywords() -> list[Candidate]:
    return [Candidate("give", "what you give"), Candidate("want", "what you want")]


def _terms_arguments(args: list[str], view: PlayerView, recipient: int | None) -> list[Candidate]:
    """After give: my cards; after want: what the recipient can give; then the other keyword."""
    keywords = [w for w in args if w in GIVE_WORDS + WANT_WORDS]
    if not keywords:
        return _keywords()
    if args[-1] == FACE_WORD:
        return [Candidate(str(i), str(bean_of(c))) for i, c in enumerate(view.state.face_up, 1)]
    if keywords[-1] in GIVE_WORDS:
        return [*_give_candidates(args, view), Candidate("want", "what you want")]
    return [*_want_candidates(view, recipient), Candidate("give", "what you give")]


def _give_candidates(args: list[str], view: PlayerView) -> list[Candidate]:
    cards = [(p, c) for p, _, c in view.my_cards() if c is not None and f"#{p}" not in args]
    candidates = [Candidate(f"#{p}", str(bean_of(c))) for p, c in cards]
    if view.seat == view.state.active and view.state.face_up:
        candidates.append(Candidate(FACE_WORD, bean_list(map(bean_of, view.state.face_up))))
    return candidates + [Candidate(str(bean_of(c)), "from your hand") for _, c in cards]


def _want_candidates(view: PlayerView, recipient: int | None) -> list[Candidate]:
    options = offer_options(view.state, view.seat)
    if options is None:
        return []
    candidates = []
    if recipient == view.state.active and view.state.face_up:
        candidates.append(Candidate(FACE_WORD, bean_list(map(bean_of, view.state.face_up))))
    for holder, card in options.visible:
        if recipient not in (None, holder):
            continue
        hand = view.state.players[holder].hand
        for position, held in enumerate(hand, 1):
            if held.card == card:
                owner = "" if recipient is not None else player_token(view, holder)
                candidates.append(Candidate(f"{owner}#{position}", f"{bean_of(card)}, open"))
    return candidates + [Candidate(str(b), "from their hand") for b in options.beans]


def _gift_arguments(args: list[str], view: PlayerView) -> list[Candidate]:
    if not args:
        return [*_recipients(view), *_give_candidates(args, view)]
    if args[-1] == FACE_WORD:
        return [Candidate(str(i), str(bean_of(c))) for i, c in enumerate(view.state.face_up, 1)]
    return _give_candidates(args, view)


def _counter_arguments(args: list[str], view: PlayerView) -> list[Candidate]:
    if not args:
        open_to_me = [o.id for o in view.state.offers if view.seat in accepters(view.state, o)]
        return _offer_ids(view, open_to_me)
    offer = _offers_by_id(view).get(int(args[0])) if args[0].isdigit() else None
    return _terms_arguments(args[1:], view, offer.maker) if offer is not None else []


def _help_arguments(args: list[str], view: PlayerView) -> list[Candidate]:
    return [] if args else _command_names(GAME_COMMANDS)


GAME_ARGUMENTS: dict[str, ArgumentCompleter] = {
    "plant": _plant_arguments,
    "harvest": _harvest_arguments,
    "accept": _accept_arguments,
    "reject": _answer_arguments(Reject),
    "withdraw": _answer_arguments(Withdraw),
    "take": _take_arguments,
    "offer": _offer_arguments,
    "gift": _gift_arguments,
    "counter": _counter_arguments,
    "help": _help_arguments,
}


class LobbyCompleter(Completer):
    """`rooms()`: the last room list seen; `bots()`: the names of my bots in my room;
    `unfinished()`: my unfinished games, as `resume` lists them."""

    def __init__(
        self,
        rooms: Callable[[], Sequence[RoomSummary]],
        bots: Callable[[], Sequence[str]] = lambda: (),
        unfinished: Callable[[], Sequence[GameFile]] = lambda: (),
    ) -> None:
        self._rooms = rooms
        self._bots = bots
        self._unfinished = unfinished

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterator[Completion]:
        words, word = _split(document.text_before_cursor.lstrip())
        if not words:
            yield from _completions(_command_names(LOBBY_COMMANDS), word)
            return
        command = find_command(words[0], LOBBY_COMMANDS)
        if command is None:
            return
        yield from _completions(self._arguments(command.name, words[1:]), word)

    def _arguments(self, name: str, args: list[str]) -> list[Candidate]:
        if name == "join" and not args:
            return [
                Candidate(str(r.room_id), f"{r.name} ({r.taken}/{r.seats})") for r in self._rooms()
            ]
        if name in ("create", "quick"):
            if not args:
                return [Candidate(str(n), "seats") for n in range(MIN_SEATS, MAX_SEATS + 1)]
            return [
                *(Candidate(f"rule={w}", "one-bean rule") for w in RULE_WORDS),
                *(Candidate(f"proofs={w}", "shuffle and relock proofs") for w in PROOF_WORDS),
                Candidate("clock=", "seconds per turn, 0 for none"),
            ]
        if name == "help" and not args:
            return _command_names(LOBBY_COMMANDS)
        if name == "bot" and not args:
            return [Candidate(strategy, "strategy") for strategy in STRATEGIES]
        if name == "unbot" and not args:
            return [Candidate(bot, "your bot") for bot in self._bots()]
        if name == "resume" and not args:
            return [
                Candidate(str(number), "with " + ", ".join(_others(game)))
                for number, game in enumerate(self._unfinished(), 1)
            ]
        return []


def _others(game: GameFile) -> list[str]:
    return [seat.name for number, seat in enumerate(game.roster.seats) if number != game.seat]
