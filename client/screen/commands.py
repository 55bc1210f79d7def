"""The REPL's command language: typed lines in, rules actions (or a view, a chat line, a
question, a lobby request) out. docs/repl.md is the player's guide to it.

Game mode: `parse_game_command(line, view)` turns a line into a `GameCommand`. Actions come out
already checked: they are applied in order to the current state with `protocol.rules.apply`
(a dry run), so a line that would break a rule raises `CommandError` with the rule's own
sentence, and nothing invalid is ever sent. Where a line leaves a real choice open (which of
several matching cards to give), the result is a `Question` whose choices each resolve to
actions; nothing is ever picked on the player's behalf. Several commands may be joined with `;`
into one lockstep step (`h 2; p 2`): each is read against the table as the ones before it leave
it, as if typed one by one with each already played, and a choice one of them leaves open is
asked about before the rest of the line is read.

Lobby mode has its own commands (client.screen.lobby_commands) built from the same parts.

The rules are asked, never restated: what fits where, which offers are open and which cards
meet them come from `legal_actions`, `offer_options` and `accepters`.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from itertools import combinations, product
from typing import Generic, TypeVar

from client.screen.player_view import PlayerView, bean_list, field_words, join_words
from protocol.cards import Bean, Card, bean_of, parse_bean
from protocol.messages import CHAT_MAX_CHARS
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
    RuleError,
    Slot,
    Take,
    Withdraw,
    accepters,
    harvest_value,
    legal_actions,
)

MAX_CHOICES = 9  # a question offers at most this many numbered answers
STOP_WORDS = ("end", "stop", "done")
GIVE_WORDS = ("give", "gives")
WANT_WORDS = ("want", "wants", "for")
FACE_WORD = "face"
EVERYONE_WORDS = ("all", "everyone", "*")
RESERVED_WORDS = (*EVERYONE_WORDS, *STOP_WORDS, *GIVE_WORDS, *WANT_WORDS, FACE_WORD)


class CommandError(Exception):
    """A line that cannot be done; the message says why, in words a player reads."""


# --- Results ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Submit:
    """Actions to send as this seat's part of one lockstep step, in order; already checked."""

    actions: tuple[Action, ...]


class View(StrEnum):
    TABLE = "table"
    HAND = "hand"
    LOG = "log"
    HELP = "help"
    WHO = "who"
    BEANS = "beans"
    NETCHECK = "netcheck"


@dataclass(frozen=True)
class ShowView:
    view: View
    topic: str | None = None  # help: the command asked about (its full name)


@dataclass(frozen=True)
class Say:
    text: str


@dataclass(frozen=True)
class LeaveGame:
    pass


@dataclass(frozen=True)
class Choice:
    label: str  # what the choice means: "#2 soy and #5 soy"
    command: str  # the line that makes this choice directly
    actions: tuple[Action, ...]
    typed: tuple[str, ...] = ()  # the commands of the line up to and including this choice


@dataclass(frozen=True)
class Question:
    """A line that left a choice open: answer with a choice's number. `rest`: the commands of
    the line after the one that asked, read once the choice is made."""

    prompt: str
    choices: tuple[Choice, ...]
    rest: tuple[str, ...] = ()

    def choose(self, answer: str, view: PlayerView) -> GameCommand:
        """The chosen actions, checked again against the state as it is now, and then the rest
        of the line (which may ask again)."""
        text = answer.strip().lstrip("#")
        if not text.isdigit() or not 1 <= int(text) <= len(self.choices):
            raise CommandError(f"answer with a number from 1 to {len(self.choices)}")
        choice = self.choices[int(text) - 1]
        current = _dry_run(view, choice.actions)
        if not self.rest:
            return Submit(choice.actions)
        return _read_line(list(self.rest), view, current, list(choice.actions), choice.typed)


GameCommand = Submit | ShowView | Say | LeaveGame | Question


# --- The command table -----------------------------------------------------------------------

HandlerT = TypeVar("HandlerT", covariant=True)


@dataclass(frozen=True)
class Command(Generic[HandlerT]):
    name: str
    aliases: tuple[str, ...]
    usage: str
    summary: str
    examples: tuple[str, ...]
    handler: HandlerT
    joinable: bool = False  # game actions can be joined with ';' into one step
    takes_text: bool = False  # the rest of the line is free text (chat), ';' included

    @property
    def short(self) -> str:
        return self.aliases[0] if self.aliases else self.name


def find_command(word: str, commands: Sequence[Command[HandlerT]]) -> Command[HandlerT] | None:
    """The command a word names: its name or an alias, or a unique prefix of a name."""
    word = word.casefold()
    for command in commands:
        if word == command.name or word in command.aliases:
            return command
    starting = [c for c in commands if c.name.startswith(word)]
    return starting[0] if len(starting) == 1 else None


def command_of(text: str, commands: Sequence[Command[HandlerT]]) -> tuple[Command[HandlerT], str]:
    """The command a line starts with and the rest of the line; `'text` is `say text`."""
    if text.startswith("'"):
        word, rest = "say", text[1:]
    else:
        word = re.split(r"[\s;]", text, maxsplit=1)[0]
        rest = text[len(word) :]
    command = find_command(word, commands)
    if command is None:
        starting = [c.name for c in commands if c.name.startswith(word.casefold())]
        if starting:
            raise CommandError(f"'{word}' could be {join_words(starting, 'or')}; type more of it")
        near = nearest_command_word(word, commands)
        guess = f" did you mean {near}?" if near is not None else ""
        raise CommandError(f"'{word}' is not a command;{guess} type help for the list")
    return command, rest.strip()


def nearest_command_word(word: str, commands: Sequence[Command[HandlerT]]) -> str | None:
    """The name or alias a mistyped word most likely meant ("hravest": harvest, "lsit": list),
    if one is close enough to say so; a person then sees what to type, not only what not to."""
    words = [spelled for c in commands for spelled in (c.name, *c.aliases)]
    near = difflib.get_close_matches(word.casefold(), words, n=1, cutoff=0.75)
    return near[0] if near else None


# --- Game mode: the entry point --------------------------------------------------------------


@dataclass(frozen=True)
class _Ask:
    """A handler's open choice: options of (label, actions); `narrow` says how to name one
    (the lines that make the first options follow it as examples). With `confirm`, even a
    single option is asked about (a harvest sells a whole field)."""

    prompt: str
    options: list[tuple[str, list[Action]]]
    narrow: str
    confirm: bool = False


Plan = list[Action] | _Ask
GameHandler = Callable[[str, PlayerView], "Plan | GameCommand"]


def parse_game_command(
    line: str, view: PlayerView, question: Question | None = None
) -> GameCommand:
    """What a typed line asks for, or CommandError. With an open `question`, a bare number
    answers it; any other line is a new command (and the question lapses)."""
    text = line.strip()
    if question is not None and text.lstrip("#").isdigit():
        return question.choose(text, view)
    if not text:
        raise CommandError("type a command (help lists them)")
    command, rest = command_of(text, GAME_COMMANDS)
    if not command.joinable:
        if ";" in rest and not command.takes_text:
            raise CommandError(f"'{command.name}' cannot be joined with ';'; only game actions can")
        result = command.handler(rest, view)
        assert not isinstance(result, list | _Ask)
        return result
    segments = [s.strip() for s in text.split(";") if s.strip()]
    return _read_line(segments, view, view, [], ())


def _read_line(
    segments: list[str],
    start: PlayerView,
    current: PlayerView,
    before: list[Action],
    typed: tuple[str, ...],
) -> GameCommand:
    """The commands of a line, each read against `current`: the view once the ones before it
    (`typed`, whose actions are `before`) are played, as typing them one by one would see it.
    Together they are checked from `start`, in the order one step applies them."""
    actions = list(before)
    joined = len(typed) + len(segments) > 1
    for number, segment in enumerate(segments):
        command, rest = command_of(segment, GAME_COMMANDS)
        if not command.joinable:
            raise CommandError(f"'{command.name}' cannot be joined with ';'; only game actions can")
        try:
            planned = command.handler(rest, current)
            if isinstance(planned, _Ask):
                allowed = _allowed(planned, actions, current, start)
                _not_too_many(planned, allowed, current)
            else:
                after = _dry_run(current, planned)
        except _NotOneStep:
            raise
        except CommandError as error:  # in a line of several, say which command it was
            raise CommandError(f"'{segment}': {error}" if joined else str(error)) from None
        if isinstance(planned, _Ask):
            done = (*typed, *segments[:number])
            rest_of_line = segments[number + 1 :]
            return _settle(planned, allowed, actions, done, rest_of_line, current, start)
        current = after
        actions += planned
    _in_one_step(start, actions)
    return Submit(tuple(actions))


def _dry_run(view: PlayerView, actions: Sequence[Action]) -> PlayerView:
    try:
        return view.after(actions)
    except RuleError as error:
        raise CommandError(view.readable(error)) from None


class _NotOneStep(CommandError):
    """A line whose commands are each allowed, but not all in one step."""


def _in_one_step(start: PlayerView, actions: Sequence[Action]) -> None:
    """Check a line's actions, each allowed once those before it are played, together, in the
    order one step applies them; refused, the person is told to send them apart."""
    try:
        start.after(actions)
    except RuleError as error:
        raise _NotOneStep(
            f"{start.readable(error)}; one step cannot hold this whole line, so type its "
            "commands in separate lines"
        ) from None


def _refusal(view: PlayerView, action: Action) -> CommandError:
    """The rule's sentence for an action the rules are known to refuse now."""
    try:
        view.after([action])
    except RuleError as error:
        return CommandError(view.readable(error))
    raise AssertionError(f"{action} was expected to break a rule")


def _allowed(
    ask: _Ask, before: list[Action], current: PlayerView, start: PlayerView
) -> list[tuple[str, list[Action]]]:
    """The options the rules allow, or the first one's refusal. `before` are the actions of
    the commands ahead of the question, which `current` shows done; each option is checked
    with them from `start`, as the step will apply it."""
    allowed: list[tuple[str, list[Action]]] = []
    first_error: CommandError | None = None
    for label, actions in ask.options:
        try:
            _dry_run(current, actions)
            _in_one_step(start, before + actions)
        except CommandError as error:
            first_error = first_error or error
            continue
        allowed.append((label, actions))
    if not allowed:
        raise first_error or CommandError(ask.narrow)
    return allowed


def _not_too_many(ask: _Ask, allowed: list[tuple[str, list[Action]]], current: PlayerView) -> None:
    """Too many options to ask about: the person is told how to say which instead."""
    if len(allowed) > MAX_CHOICES:
        examples = join_words([_typed(actions, current) for _, actions in allowed[:2]], "or")
        raise CommandError(
            f"{ask.prompt} There are {len(allowed)} ways; {ask.narrow}, e.g. {examples}"
        )


def _typed(actions: list[Action], view: PlayerView) -> str:
    """The command line that does `actions`."""
    return "; ".join(command_for(action, view) for action in actions)


def _settle(
    ask: _Ask,
    allowed: list[tuple[str, list[Action]]],
    before: list[Action],
    typed: tuple[str, ...],
    rest: list[str],
    current: PlayerView,
    start: PlayerView,
) -> GameCommand:
    """One allowed option is done (and the `rest` of the line read after it), several are
    asked; `before` are the actions of the `typed` commands ahead of the question."""
    own = [_typed(actions, current) for _, actions in allowed]
    if len(allowed) == 1 and not ask.confirm:
        actions = allowed[0][1]
        return _read_line(rest, start, current.after(actions), before + actions, (*typed, own[0]))
    choices = []
    for (label, actions), line in zip(allowed, own, strict=True):
        made = (*typed, line)
        command = "; ".join((*made, *rest))
        choices.append(Choice(label, command, tuple(before + actions), made))
    return Question(ask.prompt, tuple(choices), tuple(rest))


# --- Words -----------------------------------------------------------------------------------


def _words(text: str) -> list[str]:
    return text.replace(",", " ").casefold().split()


def number_in(word: str) -> int | None:
    """The number a word is, or None."""
    return int(word) if word.isdigit() else None


def _position(word: str) -> int | None:
    """A hand position: `#3` or `3`."""
    return number_in(word[1:] if word.startswith("#") else word)


def bean_word(word: str) -> Bean | None:
    """The bean a word names (a unique prefix; "chilis" too), None if it names none; an
    ambiguous prefix is a CommandError that lists the beans it could be."""
    for candidate in (word, word[:-1] if word.endswith("s") and len(word) > 3 else None):
        if not candidate or candidate.startswith("#") or candidate.isdigit():
            continue
        try:
            return parse_bean(candidate)
        except ValueError as error:
            if " could be " in str(error):
                raise CommandError(str(error)) from None
    return None


def _field_index(word: str) -> int:
    number = number_in(word)
    if number is None:
        raise CommandError(f"'{word}' is not a field; fields are numbered from 1")
    return number - 1


def handle(name: str) -> str:
    """A player's name as typed: case-folded, without spaces."""
    return "".join(name.split()).casefold()


def player_token(view: PlayerView, seat: int) -> str:
    """What to type for a seat: its name without spaces when that finds it and cannot be read
    as anything else, else its seat number."""
    token = handle(view.names[seat])
    try:
        readable = (
            token != ""
            and not token.isdigit()
            and token not in RESERVED_WORDS
            and bean_word(token) is None
            and resolve_player(token, view) == seat
        )
    except CommandError:
        readable = False
    return token if readable else str(seat + 1)


def resolve_player(word: str, view: PlayerView) -> int | None:
    """A seat from a name prefix or a seat number (from 1); None for all/everyone."""
    if word in EVERYONE_WORDS:
        return None
    players = len(view.names)
    number = number_in(word)
    if number is not None:
        if not 1 <= number <= players:
            raise CommandError(f"there is no player {number}; players are numbered 1 to {players}")
        return number - 1
    handles = [handle(name) for name in view.names]
    exact = [seat for seat, h in enumerate(handles) if h == word]
    found = exact or [seat for seat, h in enumerate(handles) if h.startswith(word)]
    if len(found) == 1:
        return found[0]
    if found:
        named = join_words([view.names[s] for s in found], "or")
        raise CommandError(f"'{word}' could be {named}; type more of the name")
    raise CommandError(f"no player is called '{word}'; the players are {join_words(view.names)}")


def _hand_card(view: PlayerView, position: int) -> tuple[Slot, Card]:
    """My hand card at a position (from 1), as the rules actions carry it."""
    cards = view.my_cards()
    if not 1 <= position <= len(cards):
        raise CommandError(f"you hold {len(cards)} cards; there is no card #{position}")
    _, slot, card = cards[position - 1]
    if card is None:
        raise CommandError(f"your card #{position} is not known to you yet; try again in a moment")
    return slot, card


# --- Game mode: planting ---------------------------------------------------------------------


def _plant(rest: str, view: PlayerView) -> Plan:
    words = _words(rest)
    if view.state.phase is Phase.PLANT_PENDING:
        return _plant_pending(words, view)
    return _plant_front(words, view)


def _front_card(view: PlayerView) -> Card:
    """The card step 1 plants next; outside my step 1, the rule's sentence."""
    state = view.state
    if state.phase is Phase.PLANT and view.seat == state.active and view.me.hand:
        return _hand_card(view, 1)[1]
    raise _refusal(view, Plant(0, 0))  # the rules refuse before reading the card


def _plant_front(words: list[str], view: PlayerView) -> Plan:
    """Step 1: `plant [FIELD [FIELD]] [end]`; a bean word may name the card being planted."""
    actions: list[Action] = []
    current = view
    for word in words:
        if word in STOP_WORDS:
            actions.append(EndPlanting())
            continue
        bean = bean_word(word)
        if bean is not None:
            front = bean_of(_front_card(current))
            if bean is not front:
                raise CommandError(f"your front card is {front}, not {bean}")
            continue
        action = Plant(_field_index(word), _front_card(current))
        current = _dry_run(current, [action])
        actions.append(action)
    if not actions:
        return _where_to_plant(view)
    return actions


def _where_to_plant(view: PlayerView) -> Plan:
    front = _front_card(view)
    fits = [a for a in _legal(view) if isinstance(a, Plant)]
    if not fits:
        raise _refusal(view, Plant(0, front))
    options: list[tuple[str, list[Action]]] = [
        (f"field {a.field + 1} ({field_words(view.me.fields[a.field])})", [a]) for a in fits
    ]
    return _Ask(f"Plant your {bean_of(front)} in which field?", options, "say which field")


@dataclass
class _PendingGroup:
    count: int
    bean: Bean | None
    field: int | None


def _pending_groups(words: list[str]) -> list[_PendingGroup]:
    """Step 3 words as groups `[N] [BEAN] [FIELD]`: a number before a bean counts cards, a
    number after a bean (or alone) is a field."""
    groups = []
    i = 0
    while i < len(words):
        count, bean = 1, None
        number = number_in(words[i])
        following = bean_word(words[i + 1]) if i + 1 < len(words) else None
        if number is not None and following is not None:
            if number < 1:
                raise CommandError(f"plant at least one {following}")
            count, bean, i = number, following, i + 2
        elif number is None:
            bean = bean_word(words[i])
            if bean is None:
                raise CommandError(f"'{words[i]}' is neither a bean nor a field")
            i += 1
        target = None
        if i < len(words) and number_in(words[i]) is not None:
            target = _field_index(words[i])
            i += 1
        groups.append(_PendingGroup(count, bean, target))
    return groups


def _pending_card(view: PlayerView, bean: Bean | None) -> Card:
    """A card of mine to plant in step 3 (cards of one bean are alike: the first is taken)."""
    pending = view.me.pending
    if not pending:
        raise CommandError("you have nothing (left) to plant")
    kinds = list(dict.fromkeys(bean_of(c) for c in pending))
    if bean is None:
        if len(kinds) > 1:
            raise CommandError(
                f"say which card: you have {bean_list(map(bean_of, pending))} to plant "
                f"({_pending_example(view)})"
            )
        bean = kinds[0]
    for card in pending:
        if bean_of(card) is bean:
            return card
    raise CommandError(f"you have no {bean} to plant; you have {bean_list(map(bean_of, pending))}")


def _plant_pending(words: list[str], view: PlayerView) -> Plan:
    """Step 3: `plant [N] [BEAN] FIELD ...`; a last group without a field is asked about."""
    groups = _pending_groups(words) or [_PendingGroup(1, None, None)]
    actions: list[Action] = []
    current = view
    for number, group in enumerate(groups, 1):
        if group.field is None:
            if number < len(groups):
                raise CommandError(f"say the field for the {group.bean or 'card'}")
            return _ask_pending_field(group, current, actions)
        for _ in range(group.count):
            action = PlantPending(_pending_card(current, group.bean), group.field)
            current = _dry_run(current, [action])
            actions.append(action)
    return actions


def _pending_example(view: PlayerView) -> str:
    """A step-3 command the rules allow now (the first), to show how to name a card."""
    for action in _legal(view):
        if isinstance(action, PlantPending):
            return f"plant {bean_of(action.card)} {action.field + 1}"
    return f"plant {bean_of(view.me.pending[0])} 1"


def _ask_pending_card(view: PlayerView, before: list[Action]) -> _Ask:
    """`plant` with cards of several beans to plant: which card, and where."""
    options: list[tuple[str, list[Action]]] = []
    for action in _legal(view):
        if isinstance(action, PlantPending):
            field = f"field {action.field + 1} ({field_words(view.me.fields[action.field])})"
            label = f"{bean_of(action.card)} in {field}"
            if label not in (known for known, _ in options):  # cards of one bean are alike
                options.append((label, [*before, action]))
    if not options:
        raise _refusal(view, PlantPending(view.me.pending[0], 0))
    return _Ask("Plant which card, and where?", options, "say which card and field")


def _ask_pending_field(group: _PendingGroup, view: PlayerView, before: list[Action]) -> _Ask:
    kinds = {bean_of(card) for card in view.me.pending}
    if group.bean is None and group.count == 1 and len(kinds) > 1:
        return _ask_pending_card(view, before)
    card = _pending_card(view, group.bean)
    bean = bean_of(card)
    available = sum(1 for c in view.me.pending if bean_of(c) is bean)
    if group.count > available:
        raise CommandError(f"you have {available} {bean} to plant, not {group.count}")
    fits = [a.field for a in _legal(view) if isinstance(a, PlantPending) and a.card == card]
    if not fits:
        raise _refusal(view, PlantPending(card, 0))
    options: list[tuple[str, list[Action]]] = []
    for index in fits:
        planted: list[Action] = []
        current = view
        for _ in range(group.count):
            action = PlantPending(_pending_card(current, bean), index)
            try:
                current = current.after([action])
            except RuleError:
                break
            planted.append(action)
        if len(planted) == group.count:
            label = f"field {index + 1} ({field_words(view.me.fields[index])})"
            options.append((label, before + planted))
    return _Ask(f"Plant the {bean} in which field?", options, "say which field")


# --- Game mode: harvests, the third field, the end of a step ----------------------------------


def _harvest(rest: str, view: PlayerView) -> Plan:
    words = _words(rest)
    if words:
        return [Harvest(_field_index(word)) for word in words]
    options: list[tuple[str, list[Action]]] = []
    for action in _legal(view):
        if isinstance(action, Harvest):
            cards = view.me.fields[action.field]
            pays = _coins_words(view, action.field)
            options.append((f"field {action.field + 1} ({field_words(cards)}, {pays})", [action]))
    if not options:
        refusals = [str(_refusal(view, Harvest(i))) for i in range(len(view.me.fields))]
        raise CommandError("; ".join(refusals))
    return _Ask("Harvest which field?", options, "say which field", confirm=True)


def _coins_words(view: PlayerView, index: int) -> str:
    paid = harvest_value(view.state, view.seat, index)
    return f"pays {paid} coin" + ("" if paid == 1 else "s")


def _buy(rest: str, view: PlayerView) -> Plan:
    _no_arguments("buy", rest)
    return [BuyField()]


def _end(rest: str, view: PlayerView) -> Plan:
    _no_arguments("end", rest)
    return [EndPlanting() if view.state.phase is Phase.PLANT else EndTrading()]


def _no_arguments(name: str, rest: str) -> None:
    if rest:
        raise CommandError(f"{name} takes nothing after it")


# --- Game mode: offers -----------------------------------------------------------------------


@dataclass
class _Terms:
    """What an offer line names, before ambiguous hand cards are settled."""

    to: int | None
    give_hand: list[tuple[Slot, Card]] = field(default_factory=list)
    give_beans: list[tuple[Bean, int]] = field(default_factory=list)  # hand cards by bean
    give_face_up: list[Card] = field(default_factory=list)
    want_cards: list[Card] = field(default_factory=list)
    want_beans: dict[Bean, int] = field(default_factory=dict)

    def offers(self, view: PlayerView) -> _Ask:
        """Every offer these terms can mean: one per way to pick the hand cards named by bean."""
        fixed = {slot for slot, _ in self.give_hand}
        picks: list[list[tuple[tuple[Slot, Card], ...]]] = []
        for bean, count in self.give_beans:
            held = [
                (slot, card)
                for _, slot, card in view.my_cards()
                if card is not None and bean_of(card) is bean and slot not in fixed
            ]
            if len(held) < count:
                besides = " besides those named" if self.give_hand else ""
                raise CommandError(f"you hold {len(held)} {bean}{besides}; you cannot give {count}")
            picks.append(list(combinations(held, count)))
        options: list[tuple[str, list[Action]]] = []
        for chosen in product(*picks):
            extra = [pair for group in chosen for pair in group]
            offer = MakeOffer(
                to=self.to,
                give_hand=tuple(self.give_hand + extra),
                give_face_up=tuple(self.give_face_up),
                want_cards=tuple(self.want_cards),
                want_beans=tuple(self.want_beans.items()),
            )
            options.append((_hand_words(view, [slot for slot, _ in extra]), [offer]))
        beans = join_words([str(bean) for bean, _ in self.give_beans])
        return _Ask(f"Which {beans} do you give?", options, "name the cards by position")


def _hand_words(view: PlayerView, slots: Iterable[Slot]) -> str:
    """My hand cards as "#2 soy and #5 soy"."""
    by_slot = {slot: (position, card) for position, slot, card in view.my_cards()}
    words = []
    for slot in slots:
        position, card = by_slot[slot]
        words.append(f"#{position} {bean_of(card)}" if card is not None else f"#{position}")
    return join_words(words)


def _face_card(
    view: PlayerView, words: list[str], i: int, taken: list[Card]
) -> tuple[list[Card], int]:
    """`face`, `face N` or `face BEAN` at words[i]: the face-up cards meant, and the next index."""
    face_up = view.state.face_up
    if not face_up:
        raise CommandError("no cards are face up")
    following = words[i + 1] if i + 1 < len(words) else ""
    number = number_in(following)
    if number is not None and not (i + 2 < len(words) and bean_word(words[i + 2])):
        if not 1 <= number <= len(face_up):
            raise CommandError(f"{len(face_up)} cards are face up; there is no face {number}")
        return [face_up[number - 1]], i + 2
    bean = bean_word(following) if following else None
    if bean is not None:
        for card in face_up:
            if bean_of(card) is bean and card not in taken:
                return [card], i + 2
        raise CommandError(f"no {bean} is face up (face up: {bean_list(map(bean_of, face_up))})")
    return [card for card in face_up if card not in taken], i + 1


def _read_gives(words: list[str], i: int, view: PlayerView, terms: _Terms) -> int:
    """Read what I give from words[i] up to a want word; the index where it stopped."""
    while i < len(words) and words[i] not in WANT_WORDS:
        word = words[i]
        if word == FACE_WORD:
            cards, i = _face_card(view, words, i, terms.give_face_up)
            terms.give_face_up += cards
            continue
        number = number_in(word)
        following = bean_word(words[i + 1]) if number is not None and i + 1 < len(words) else None
        if following is not None:
            assert number is not None
            if number < 1:
                raise CommandError(f"give at least one {following}")
            terms.give_beans.append((following, number))
            i += 2
            continue
        position = _position(word)
        if position is not None:
            terms.give_hand.append(_hand_card(view, position))
        else:
            bean = bean_word(word)
            if bean is None:
                raise CommandError(
                    f"'{word}' is not a card to give: name hand cards by position (#3) or bean "
                    "(soy), face-up cards by face, face 2 or face chili"
                )
            terms.give_beans.append((bean, 1))
        i += 1
    return i


def _read_wants(words: list[str], i: int, view: PlayerView, terms: _Terms) -> int:
    """Read what I want from words[i] up to a give word; the index where it stopped."""
    while i < len(words) and words[i] not in GIVE_WORDS:
        word = words[i]
        if word == FACE_WORD:
            cards, i = _face_card(view, words, i, terms.want_cards)
            terms.want_cards += cards
            continue
        number = number_in(word)
        following = bean_word(words[i + 1]) if number is not None and i + 1 < len(words) else None
        if following is not None:
            assert number is not None
            terms.want_beans[following] = terms.want_beans.get(following, 0) + number
            i += 2
            continue
        holder_word, hash_mark, position_word = word.rpartition("#")
        if hash_mark and holder_word:
            terms.want_cards.append(
                _open_card(view, resolve_player(holder_word, view), position_word)
            )
        elif _position(word) is not None:
            terms.want_cards.append(_open_card(view, terms.to, word.lstrip("#")))
        else:
            bean = bean_word(word)
            if bean is None:
                raise CommandError(
                    f"'{word}' is not something to want: name beans (2 chili), face-up cards "
                    "(face 2) or open hand cards (#3, or bob#3 in an offer to all)"
                )
            terms.want_beans[bean] = terms.want_beans.get(bean, 0) + 1
        i += 1
    return i


def _open_card(view: PlayerView, holder: int | None, position_word: str) -> Card:
    """Another player's hand card that everyone can see, by its position in that hand."""
    if holder is None:
        raise CommandError("say whose card you want (bob#3), or make the offer to one player")
    position = number_in(position_word)
    hand = view.state.players[holder].hand
    if position is None or not 1 <= position <= len(hand):
        raise CommandError(
            f"{view.names[holder]} holds {len(hand)} cards; there is no #{position_word}"
        )
    card = hand[position - 1].card
    if card is None:
        raise CommandError(
            f"{view.names[holder]}'s card #{position} is hidden; want a bean instead (want soy)"
        )
    return card


def _read_terms(words: list[str], i: int, view: PlayerView, terms: _Terms) -> _Terms:
    """The give and want parts of an offer line from words[i], in either order."""
    while i < len(words):
        if words[i] in GIVE_WORDS:
            i = _read_gives(words, i + 1, view, terms)
        elif words[i] in WANT_WORDS:
            i = _read_wants(words, i + 1, view, terms)
        else:
            raise CommandError(f"say give or want before '{words[i]}'")
    return terms


def default_recipient(view: PlayerView) -> int | None:
    """An offer with nobody named: from the active player to everyone, else to the active
    player (the only one a non-active player may trade with)."""
    return None if view.seat == view.state.active else view.state.active


def _offer(rest: str, view: PlayerView) -> Plan:
    """`offer [PLAYER|all] give CARDS want WANTS` (either part may come first or be left out)."""
    words = _words(rest)
    if not words:
        raise CommandError("offer what? e.g. offer ann give #2 want 2 chili")
    if words[0] in GIVE_WORDS + WANT_WORDS:
        to, start = default_recipient(view), 0
    else:
        to, start = resolve_player(words[0], view), 1
        if start == len(words):
            raise CommandError("say give or want after the player: offer ann give #2 want soy")
    return _read_terms(words, start, view, _Terms(to)).offers(view)


def _looks_like_a_card(word: str) -> bool:
    return word.startswith("#") or word in (FACE_WORD, *GIVE_WORDS) or bean_word(word) is not None


def _gift(rest: str, view: PlayerView) -> Plan:
    """`gift [PLAYER] CARDS`: an offer that wants nothing."""
    words = _words(rest)
    if not words:
        raise CommandError("gift what? e.g. gift bob #4")
    if _looks_like_a_card(words[0]):
        to, start = default_recipient(view), 0
    else:
        to, start = resolve_player(words[0], view), 1
        if start == len(words):
            raise CommandError(
                f"say what to give: gift {words[0]} #3 (a lone word after gift names a player)"
            )
    terms = _Terms(to)
    stop = _read_gives(words, start + (words[start] in GIVE_WORDS), view, terms)
    if stop < len(words):
        raise CommandError("a gift wants nothing; use offer to ask for something")
    return terms.offers(view)


def _counter(rest: str, view: PlayerView) -> Plan:
    """`counter OFFER [give CARDS] [want WANTS]`: a new offer to the maker of OFFER; without a
    want part it wants the cards OFFER gives."""
    words = _words(rest)
    number = number_in(words[0]) if words else None
    if number is None:
        raise CommandError("counter which offer? e.g. counter 7 give #1 want face 2")
    offer = _open_offer(view, number)
    if offer.maker == view.seat:
        raise CommandError(f"offer {number} is yours; withdraw it and make a new one")
    if len(words) == 1:
        raise CommandError(f"say what you give or want: counter {number} give #1")
    terms = _read_terms(words, 1, view, _Terms(offer.maker))
    if not terms.want_cards and not terms.want_beans:
        terms.want_cards = _cards_given(view, offer)
    return terms.offers(view)


def _open_offer(view: PlayerView, number: int) -> Offer:
    for offer in view.state.offers:
        if offer.id == number:
            return offer
    raise CommandError(f"there is no open offer {number}")


def _cards_given(view: PlayerView, offer: Offer) -> list[Card]:
    """The cards an offer gives: its maker's opened hand cards and the face-up cards."""
    hand = {h.slot: h.card for h in view.state.players[offer.maker].hand}
    return [c for c in (hand.get(s) for s in offer.give_hand) if c is not None] + list(
        offer.give_face_up
    )


# --- Game mode: answering offers -------------------------------------------------------------


def _legal(view: PlayerView) -> list[Action]:
    return legal_actions(view.state, view.seat, view.hand)


def _accept(rest: str, view: PlayerView) -> Plan:
    """`accept [OFFER] [CARDS]`: the named cards narrow the ways to meet the offer."""
    words = _words(rest)
    number = number_in(words[0]) if words else None
    named = words[1:] if number is not None else words
    choices = [
        a for a in _legal(view) if isinstance(a, Accept) and (number is None or a.offer == number)
    ]
    if not choices:
        raise _no_way_to_accept(view, number)
    positions, beans = _accept_cards(named)
    by_slot = {slot: position for position, slot, _ in view.my_cards()}
    fitting = []
    for choice in choices:
        given = {by_slot[slot] for slot, _ in choice.give_hand}
        kinds = [bean_of(card) for _, card in choice.give_hand]
        if positions <= given and all(kinds.count(b) >= n for b, n in beans.items()):
            fitting.append(choice)
    if not fitting:
        if number is None:
            open_ids = dict.fromkeys(choice.offer for choice in choices)
            asks = [_asks_words(_open_offer(view, n)) for n in open_ids]
            raise CommandError(
                f"no offer open to you can be met with those cards; {join_words(asks)}"
            )
        raise _refusal(view, Accept(number, tuple(_hand_card(view, p) for p in sorted(positions))))
    options: list[tuple[str, list[Action]]] = []
    for choice in fitting:
        label = f"offer {choice.offer}"
        if choice.give_hand:
            label += ", giving " + _hand_words(view, [slot for slot, _ in choice.give_hand])
        options.append((label, [choice]))
    offers = {choice.offer for choice in fitting}
    if len(offers) == 1:
        offer = _open_offer(view, fitting[0].offer)
        asked = join_words([f"{n} {bean}" for bean, n in offer.want_beans])
        prompt = f"Offer {offer.id} asks for {asked}; which of your cards do you give?"
    else:
        prompt = "Accept which offer?"
    return _Ask(prompt, options, "say which offer and cards")


def _asks_words(offer: Offer) -> str:
    """What an offer asks of the one who accepts it: "offer 7 asks for 1 chili"."""
    asked = join_words([f"{n} {bean}" for bean, n in offer.want_beans])
    return f"offer {offer.id} asks for {asked or 'nothing of your hand'}"


def _accept_cards(words: list[str]) -> tuple[set[int], dict[Bean, int]]:
    """Cards named in an accept line: positions and beans with counts."""
    positions: set[int] = set()
    beans: dict[Bean, int] = {}
    i = 0
    while i < len(words):
        number = number_in(words[i])
        following = bean_word(words[i + 1]) if number is not None and i + 1 < len(words) else None
        if number is not None and following is not None:
            beans[following] = beans.get(following, 0) + number
            i += 2
            continue
        position = _position(words[i])
        bean = bean_word(words[i]) if position is None else None
        if position is not None:
            positions.add(position)
        elif bean is not None:
            beans[bean] = beans.get(bean, 0) + 1
        else:
            raise CommandError(f"'{words[i]}' is not a card: name hand cards by position or bean")
        i += 1
    return positions, beans


def _no_way_to_accept(view: PlayerView, number: int | None) -> CommandError:
    """Why nothing can be accepted: nothing open, or my hand cannot meet the offer."""
    if number is None:
        return CommandError("no offer is open to you now")
    offer = next((o for o in view.state.offers if o.id == number), None)
    if offer is None or view.seat not in accepters(view.state, offer):
        return _refusal(view, Accept(number))
    held = [card for _, _, card in view.my_cards() if card is not None]
    have = join_words([f"{sum(bean_of(c) is b for c in held)} {b}" for b, _ in offer.want_beans])
    return CommandError(f"{_asks_words(offer)}; you hold {have}")


def _answer(kind: type[Reject] | type[Withdraw], verb: str, nothing: str) -> GameHandler:
    """A handler for `reject`/`withdraw [OFFER ...|all]`."""

    def handle(rest: str, view: PlayerView) -> Plan:
        words = _words(rest)
        open_ids = [a.offer for a in _legal(view) if isinstance(a, kind)]
        if words == ["all"]:
            if not open_ids:
                raise CommandError(nothing)
            return [kind(number) for number in open_ids]
        if words:
            numbers = [number_in(w) for w in words]
            if None in numbers:
                raise CommandError(f"{verb} takes offer numbers (or all)")
            return [kind(number) for number in numbers if number is not None]
        if not open_ids:
            raise CommandError(nothing)
        options: list[tuple[str, list[Action]]] = [
            (f"offer {number}", [kind(number)]) for number in open_ids
        ]
        return _Ask(f"{verb.capitalize()} which offer?", options, "say which offer")

    return handle


def _take(rest: str, view: PlayerView) -> Plan:
    """`take OFFER [PLAYER]`: the maker of an offer to everyone takes one of its bids."""
    words = _words(rest)
    number = number_in(words[0]) if words else None
    takes = [a for a in _legal(view) if isinstance(a, Take)]
    if number is None:
        if words:
            raise CommandError("take which offer? e.g. take 7 bob")
        numbers = list(dict.fromkeys(a.offer for a in takes))
        if len(numbers) != 1:
            raise CommandError(
                "say which offer: take 7 bob"
                if numbers
                else "nobody has taken an offer of yours to everyone yet"
            )
        number = numbers[0]
    if len(words) > 2:
        raise CommandError(f"take names one offer and one player: take {number} bob")
    offer = _open_offer(view, number)
    if offer.maker != view.seat or offer.to is not None:
        raise _refusal(view, Take(number, view.seat))
    choices = [a for a in takes if a.offer == number]
    if len(words) == 2:
        bidder = resolve_player(words[1], view)
        if bidder is None:
            raise CommandError("take one player's bid; the others lapse with it")
        return [Take(number, bidder)]
    if not choices:
        raise CommandError(f"nobody has taken offer {number} yet")
    options: list[tuple[str, list[Action]]] = [(view.names[a.bidder], [a]) for a in choices]
    return _Ask(f"Take whose bid on offer {number}?", options, "say whose bid")


# --- Game mode: everything else --------------------------------------------------------------


def _show(view_name: View) -> GameHandler:
    def handle(rest: str, view: PlayerView) -> GameCommand:
        return ShowView(view_name)

    return handle


def _help(rest: str, view: PlayerView) -> GameCommand:
    return ShowView(View.HELP, help_topic(rest, GAME_COMMANDS))


def help_topic(rest: str, commands: Sequence[Command[HandlerT]]) -> str | None:
    word = rest.strip().casefold()
    if not word:
        return None
    command = find_command(word, commands)
    if command is None:
        near = nearest_command_word(word, commands)
        if near is not None:
            raise CommandError(
                f"there is no command '{word}'; did you mean help {near}? help alone lists them"
            )
        raise CommandError(f"there is no command '{word}'; help lists them")
    return command.name


def chat_text(rest: str) -> str:
    """A chat line as it may be sent: 1 to CHAT_MAX_CHARS printable characters."""
    text = rest.strip()
    if not text:
        raise CommandError("say what? e.g. say good luck")
    if len(text) > CHAT_MAX_CHARS:
        raise CommandError(f"a chat line holds at most {CHAT_MAX_CHARS} characters")
    if not text.isprintable():
        raise CommandError("a chat line holds printable characters only")
    return text


def _say(rest: str, view: PlayerView) -> GameCommand:
    return Say(chat_text(rest))


def _leave(rest: str, view: PlayerView) -> GameCommand:
    return LeaveGame()


GAME_COMMANDS: tuple[Command[GameHandler], ...] = (
    Command(
        "plant",
        ("p",),
        "plant [FIELD [FIELD]] [end]   step 3: plant [N] [BEAN] FIELD ...",
        "Step 1: plant your front card (and the next). Step 3: plant traded and kept cards.",
        ("p 1", "p 1 2", "p 1 end", "p chili 1 soy 3", "p 2 chili 1"),
        _plant,
        joinable=True,
    ),
    Command(
        "harvest",
        ("h",),
        "harvest [FIELD ...]",
        "Harvest a field and sell it, at any time (the one-bean rule applies).",
        ("h 2", "h 2; p 2"),
        _harvest,
        joinable=True,
    ),
    Command("buy", ("b",), "buy", "Buy your third field.", ("b",), _buy, joinable=True),
    Command(
        "offer",
        ("o",),
        "offer [PLAYER|all] give CARDS want WANTS",
        "Offer a trade in step 2; either part may be left out.",
        ("offer ann give #2 soy want 2 chili", "o all give face chili want blue", "o want face 2"),
        _offer,
        joinable=True,
    ),
    Command(
        "gift",
        ("g",),
        "gift [PLAYER] CARDS",
        "Give cards for nothing; the other player still has to accept.",
        ("gift bob #4", "g face"),
        _gift,
        joinable=True,
    ),
    Command(
        "counter",
        ("c",),
        "counter OFFER [give CARDS] [want WANTS]",
        "Answer an offer with your own to its maker; with no want part, want what it gives.",
        ("counter 7 give #1 want face 2", "c 7 give #3"),
        _counter,
        joinable=True,
    ),
    Command(
        "accept",
        ("a",),
        "accept [OFFER] [CARDS]",
        "Accept an offer (to everyone: bid on it, and its maker chooses among the takers); "
        "when several of your cards fit what it asks, you are asked which.",
        ("accept 7", "a 7 #2 #5", "a 7 chili"),
        _accept,
        joinable=True,
    ),
    Command(
        "take",
        (),
        "take OFFER [PLAYER]",
        "Take one player's bid on your offer to everyone; the other bids lapse.",
        ("take 7 bob", "take 7 2", "take 7"),
        _take,
        joinable=True,
    ),
    Command(
        "reject",
        ("r",),
        "reject [OFFER ...|all]",
        "Turn down offers made to you.",
        ("r 7", "r all"),
        _answer(Reject, "reject", "no offer is open to you now"),
        joinable=True,
    ),
    Command(
        "withdraw",
        ("w",),
        "withdraw [OFFER ...|all]",
        "Take back your own offers (their bids lapse), or your bids on offers.",
        ("w 9", "w all"),
        _answer(Withdraw, "withdraw", "you have no open offers or bids"),
        joinable=True,
    ),
    Command(
        "end",
        ("e", *STOP_WORDS[1:]),
        "end",
        "Step 1: stop after one planting. Step 2 (active player): end trading.",
        ("e",),
        _end,
        joinable=True,
    ),
    Command("table", ("t",), "table", "Show the whole table.", ("t",), _show(View.TABLE)),
    Command("hand", ("cards",), "hand", "Show your hand and fields.", ("hand",), _show(View.HAND)),
    Command(
        "beans",
        (),
        "beans",
        "The bean-o-meter: each bean's cards, those you have not seen, and what they pay.",
        ("beans",),
        _show(View.BEANS),
    ),
    Command("log", ("l",), "log", "Show what happened lately.", ("l",), _show(View.LOG)),
    Command(
        "who",
        (),
        "who",
        "Who is at the table: keys, links, and the table code to compare.",
        ("who",),
        _show(View.WHO),
    ),
    Command(
        "netcheck",
        ("net",),
        "netcheck",
        "How you reach each player: directly, or through the lobby's relay, and why.",
        ("netcheck",),
        _show(View.NETCHECK),
    ),
    Command(
        "help", ("?",), "help [COMMAND]", "List the commands, or explain one.", ("? offer",), _help
    ),
    Command(
        "say",
        ("chat",),
        "say TEXT   or   'TEXT",
        "Talk to the table.",
        ("'good luck",),
        _say,
        takes_text=True,
    ),
    Command("leave", ("quit", "exit"), "leave", "Leave the game.", ("leave",), _leave),
)

# What `help beans` adds to the summary: what the columns of `beans` mean.
BEANS_HELP = (
    ("cards", "how many cards of the bean the deck of this game has"),
    (
        "unseen",
        "how many you have not seen yet: never shown to everyone (still in the first "
        "deck or hidden in another hand) and not in your own hand",
    ),
    ("1c 2c 3c 4c", "how many beans in a field pay 1, 2, 3, 4 coins (- is never)"),
)

# What the CARDS and WANTS of offers may be; the help and docs/repl.md show it.
GIVE_HELP = (
    ("#3 or 3", "your hand card 3 (the front card is 1)"),
    ("soy, 2 soy", "hand cards of a bean (you are asked which, if several)"),
    ("face", "all face-up cards (the active player's)"),
    ("face 2, face chili", "one face-up card"),
)
WANT_HELP = (
    ("chili, 2 chili", "beans from their hand"),
    ("face 2, face chili", "a face-up card of the active player"),
    ("#3", "their hand card 3, if everyone can see it"),
    ("bob#3", "Bob's open hand card 3 (in an offer to all)"),
)


# --- The inverse: a command for an action -----------------------------------------------------


def command_for(action: Action, view: PlayerView, short: bool = False) -> str:
    """A line that parses back to this action of mine (cards of one bean to plant in step 3
    are alike, so any of them may come back)."""

    def name(command: str) -> str:
        found = find_command(command, GAME_COMMANDS)
        assert found is not None
        return found.short if short else found.name

    positions = {slot: position for position, slot, _ in view.my_cards()}
    if isinstance(action, Plant):
        return f"{name('plant')} {action.field + 1}"
    if isinstance(action, EndPlanting | EndTrading):
        return name("end")
    if isinstance(action, Harvest):
        return f"{name('harvest')} {action.field + 1}"
    if isinstance(action, BuyField):
        return name("buy")
    if isinstance(action, PlantPending):
        return f"{name('plant')} {bean_of(action.card)} {action.field + 1}"
    if isinstance(action, Accept):
        cards = "".join(f" #{positions[slot]}" for slot, _ in action.give_hand)
        return f"{name('accept')} {action.offer}{cards}"
    if isinstance(action, Reject):
        return f"{name('reject')} {action.offer}"
    if isinstance(action, Withdraw):
        return f"{name('withdraw')} {action.offer}"
    if isinstance(action, Take):
        return f"{name('take')} {action.offer} {player_token(view, action.bidder)}"
    if isinstance(action, MakeOffer):
        return _offer_command(action, view, name, positions)
    raise ValueError(f"{type(action).__name__} is not something a player types")


def _offer_command(
    action: MakeOffer, view: PlayerView, name: Callable[[str], str], positions: dict[Slot, int]
) -> str:
    face_up = view.state.face_up
    to = "all" if action.to is None else player_token(view, action.to)
    gives = [f"#{positions[slot]}" for slot, _ in action.give_hand]
    gives += [f"face {face_up.index(card) + 1}" for card in action.give_face_up]
    wants = []
    for card in action.want_cards:
        if card in face_up:
            wants.append(f"face {face_up.index(card) + 1}")
            continue
        holder, position = _open_card_place(view, card)
        owner = "" if holder == action.to else player_token(view, holder)
        wants.append(f"{owner}#{position}")
    wants += [f"{n} {bean}" for bean, n in action.want_beans]
    if not wants:
        return f"{name('gift')} {to} {' '.join(gives)}"
    give_part = f" give {' '.join(gives)}" if gives else ""
    return f"{name('offer')} {to}{give_part} want {' '.join(wants)}"


def _open_card_place(view: PlayerView, card: Card) -> tuple[int, int]:
    for seat, player in enumerate(view.state.players):
        for position, held in enumerate(player.hand, 1):
            if held.card == card:
                return seat, position
    raise ValueError(f"card {card} is not an open hand card")
