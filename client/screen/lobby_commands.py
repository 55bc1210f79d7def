"""The lobby's commands: typed lines in, small typed requests out, for the REPL to pass to
`client.net.lobby_client.LobbyClient` (docs/repl.md lists them).

    rooms · create SEATS [NAME] [rule=protect|literal] [proofs=on|off] [clock=SECONDS] · join ROOM
    quick SEATS [OPTIONS] · ready [off] · unready · leave · who · say TEXT · connect HOST[:PORT]
    bot [STRATEGY] · unbot NAME (kick NAME) · resume [N] · rematch · quit · help [COMMAND]

Everything a request carries is checked here (seats 3 to 7, option ranges through
`RoomOptions`, name and chat lengths), so the lobby never has to refuse a typo.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from client.bots import STRATEGIES
from client.net import parse_lobby_address
from client.screen.commands import (
    Command,
    CommandError,
    chat_text,
    command_of,
    help_topic,
    number_in,
)
from client.screen.player_view import join_words
from protocol.messages import (
    MAX_SEATS,
    MIN_SEATS,
    ROOM_NAME_MAX_CHARS,
    SINGLETON_RULES,
    MessageError,
    RoomOptions,
)


@dataclass(frozen=True)
class LobbyListRooms:
    pass


@dataclass(frozen=True)
class LobbyCreate:
    name: str
    seats: int
    options: RoomOptions


@dataclass(frozen=True)
class LobbyJoin:
    room_id: int


@dataclass(frozen=True)
class LobbyQuickMatch:
    seats: int
    options: RoomOptions


@dataclass(frozen=True)
class LobbyReady:
    ready: bool


@dataclass(frozen=True)
class LobbyLeave:
    pass


@dataclass(frozen=True)
class LobbyWho:
    pass


@dataclass(frozen=True)
class LobbyNetcheck:
    """How this client is reached: the lobby's relay, the address the lobby sees."""


@dataclass(frozen=True)
class LobbySay:
    text: str


@dataclass(frozen=True)
class LobbyConnect:
    host: str
    port: int


@dataclass(frozen=True)
class LobbyAddBot:
    """A bot of this strategy into my room, as a process of its own."""

    strategy: str


@dataclass(frozen=True)
class LobbyRemoveBot:
    """Take one of my bots out of my room (by a prefix of its name)."""

    name: str


@dataclass(frozen=True)
class LobbyResume:
    """Back into unfinished game `number` of the list (None: show the list)."""

    number: int | None


@dataclass(frozen=True)
class LobbyRematch:
    """Quick match again with the seats and options of the game just played."""


@dataclass(frozen=True)
class LobbyQuit:
    pass


@dataclass(frozen=True)
class LobbyHelp:
    topic: str | None


LobbyRequest = (
    LobbyListRooms
    | LobbyCreate
    | LobbyJoin
    | LobbyQuickMatch
    | LobbyReady
    | LobbyLeave
    | LobbyWho
    | LobbyNetcheck
    | LobbySay
    | LobbyConnect
    | LobbyAddBot
    | LobbyRemoveBot
    | LobbyResume
    | LobbyRematch
    | LobbyQuit
    | LobbyHelp
)
LobbyHandler = Callable[[str], LobbyRequest]


def parse_lobby_command(line: str) -> LobbyRequest:
    """The lobby request a typed line asks for, or CommandError."""
    text = line.strip()
    if not text:
        raise CommandError("type a command (help lists them)")
    command, rest = command_of(text, LOBBY_COMMANDS)
    return command.handler(rest)


# Room options as typed (`rule=literal proofs=off clock=60`) and their RoomOptions fields.
ROOM_OPTION_FIELDS = {"rule": "singleton_rule", "proofs": "proofs", "clock": "turn_seconds"}
PROOF_WORDS = {"on": True, "off": False}
RULE_WORDS = {"protect": SINGLETON_RULES[0], "literal": SINGLETON_RULES[1]}


def _seats(word: str) -> int:
    seats = number_in(word)
    if seats is None or not MIN_SEATS <= seats <= MAX_SEATS:
        raise CommandError(f"a game has {MIN_SEATS} to {MAX_SEATS} seats, not '{word}'")
    return seats


def _room_options(words: Iterable[str]) -> RoomOptions:
    chosen: dict[str, str | int | bool] = {}
    for word in words:
        key, _, value = word.partition("=")
        if key not in ROOM_OPTION_FIELDS:
            raise CommandError(f"'{key}' is not a room option; the options are rule, proofs, clock")
        if key == "rule":
            rules = [
                rule for typed, rule in RULE_WORDS.items() if value and typed.startswith(value)
            ]
            if len(rules) != 1:
                raise CommandError("rule is protect (the default) or literal")
            chosen[ROOM_OPTION_FIELDS[key]] = rules[0]
        elif key == "proofs":
            if value not in PROOF_WORDS:
                raise CommandError("proofs is on (the default) or off")
            chosen[ROOM_OPTION_FIELDS[key]] = PROOF_WORDS[value]
        elif value.isdigit():
            chosen[ROOM_OPTION_FIELDS[key]] = int(value)
        else:
            raise CommandError(f"{key} takes a number: {key}=20")
    try:
        return RoomOptions(**chosen)  # type: ignore[arg-type]
    except MessageError as error:
        typed = {f: k for k, f in ROOM_OPTION_FIELDS.items()}.get(error.field or "", "an option")
        sentence = str(error).split(f"field '{error.field}' ", 1)[-1]
        raise CommandError(f"{typed} {sentence}") from None


def _split_options(words: list[str]) -> tuple[list[str], list[str]]:
    """Plain words and `key=value` option words."""
    return [w for w in words if "=" not in w], [w for w in words if "=" in w]


def _lobby_create(rest: str) -> LobbyRequest:
    """`create SEATS [NAME ...] [OPTION=VALUE ...]`."""
    words = rest.split()
    if not words:
        raise CommandError("create SEATS NAME, e.g. create 5 friday beans")
    seats = _seats(words[0])
    plain, options = _split_options(words[1:])
    name = " ".join(plain) or f"{seats} players"
    if len(name) > ROOM_NAME_MAX_CHARS or not name.isprintable():
        raise CommandError(f"a room name is 1 to {ROOM_NAME_MAX_CHARS} printable characters")
    return LobbyCreate(name, seats, _room_options(w.casefold() for w in options))


def _lobby_quick(rest: str) -> LobbyRequest:
    """`quick SEATS [OPTION=VALUE ...]`."""
    words = rest.casefold().split()
    if not words:
        raise CommandError("quick SEATS, e.g. quick 4")
    plain, options = _split_options(words[1:])
    if plain:
        raise CommandError(f"'{plain[0]}' is not a room option; write option=value")
    return LobbyQuickMatch(_seats(words[0]), _room_options(options))


def _lobby_join(rest: str) -> LobbyRequest:
    number = number_in(rest.strip().lstrip("#"))
    if number is None:
        raise CommandError("join which room? give its number, e.g. join 3 (rooms lists them)")
    return LobbyJoin(number)


def _lobby_connect(rest: str) -> LobbyRequest:
    if not rest:
        raise CommandError("connect HOST[:PORT], e.g. connect 192.168.1.20")
    try:
        host, port = parse_lobby_address(rest)
    except ValueError as error:
        raise CommandError(str(error)) from None
    return LobbyConnect(host, port)


def _lobby_bot(rest: str) -> LobbyRequest:
    word = rest.strip().casefold()
    if not word:
        return LobbyAddBot(STRATEGIES[0])
    chosen = [name for name in STRATEGIES if name.startswith(word)]
    if len(chosen) != 1:
        raise CommandError(f"a bot plays {join_words(list(STRATEGIES), 'or')}, not '{word}'")
    return LobbyAddBot(chosen[0])


def _lobby_unbot(rest: str) -> LobbyRequest:
    name = rest.strip()
    if not name:
        raise CommandError("unbot NAME: which of your bots? who shows their names")
    return LobbyRemoveBot(name)


def _lobby_resume(rest: str) -> LobbyRequest:
    word = rest.strip().lstrip("#")
    if not word:
        return LobbyResume(None)
    number = number_in(word)
    if number is None or number < 1:
        raise CommandError(f"resume takes the number of a game in the list, not '{word}'")
    return LobbyResume(number)


def _lobby_ready(ready: bool) -> LobbyHandler:
    def handle(rest: str) -> LobbyRequest:
        word = rest.strip().casefold()
        if word in ("off", "no"):
            return LobbyReady(not ready)
        return LobbyReady(ready)

    return handle


def _lobby_plain(request: LobbyRequest) -> LobbyHandler:
    def handle(rest: str) -> LobbyRequest:
        return request

    return handle


LOBBY_COMMANDS: tuple[Command[LobbyHandler], ...] = (
    Command(
        "rooms",
        ("ls", "list"),
        "rooms",
        "List the open rooms.",
        ("rooms",),
        _lobby_plain(LobbyListRooms()),
    ),
    Command(
        "create",
        ("new",),
        "create SEATS [NAME] [rule=protect|literal] [proofs=on|off] [clock=SECONDS]",
        "Open a room for 3 to 7 players and join it.",
        ("create 5 friday beans", "create 4 rule=literal clock=60"),
        _lobby_create,
    ),
    Command("join", ("j",), "join ROOM", "Join a room by its number.", ("join 3",), _lobby_join),
    Command(
        "quick",
        ("qm", "match"),
        "quick SEATS [OPTION=VALUE ...]",
        "Join the oldest open room of that size, or open one; you are marked ready.",
        ("quick 4",),
        _lobby_quick,
    ),
    Command(
        "ready",
        ("rd",),
        "ready [off]",
        "Say you are ready to start.",
        ("ready",),
        _lobby_ready(True),
    ),
    Command(
        "unready",
        ("notready", "not"),
        "unready",
        "Say you are not ready.",
        ("unready",),
        _lobby_ready(False),
    ),
    Command("leave", (), "leave", "Leave the room.", ("leave",), _lobby_plain(LobbyLeave())),
    Command(
        "who",
        ("w",),
        "who",
        "Who is in the room, who is ready, and which are bots.",
        ("who",),
        _lobby_plain(LobbyWho()),
    ),
    Command(
        "netcheck",
        ("net",),
        "netcheck",
        "How other players reach you: the address the lobby sees, your peer port, and "
        "whether the lobby relays the links of players who cannot reach each other (in a "
        "game, netcheck says how each player is reached).",
        ("netcheck",),
        _lobby_plain(LobbyNetcheck()),
    ),
    Command(
        "say",
        ("chat",),
        "say TEXT   or   'TEXT",
        "Talk to the room.",
        ("'hi all",),
        lambda rest: LobbySay(chat_text(rest)),
    ),
    Command(
        "connect",
        ("open",),
        "connect HOST[:PORT]",
        "Connect to a lobby (port 7777 unless given).",
        ("connect 192.168.1.20", "connect lobby.local:7000"),
        _lobby_connect,
    ),
    Command(
        "bot",
        ("addbot",),
        f"bot [{'|'.join(STRATEGIES)}]",
        "Add a bot to your room: a program of its own, with its own key, started by this "
        "client; it leaves when you leave the room, and plays the game when it starts.",
        ("bot", f"bot {STRATEGIES[-1]}"),
        _lobby_bot,
    ),
    Command(
        "unbot",
        ("kick",),
        "unbot NAME",
        "Take one of your bots out of the room before the game starts (kick works on bots "
        "only: the lobby cannot put a person out).",
        ("unbot bot-1f3a",),
        _lobby_unbot,
    ),
    Command(
        "resume",
        ("continue",),
        "resume [N]",
        "List your unfinished games (a crash, or a game you left), or go back into game N.",
        ("resume", "resume 1"),
        _lobby_resume,
    ),
    Command(
        "rematch",
        ("again",),
        "rematch",
        "After a game: quick match again with the same seats and options.",
        ("rematch",),
        _lobby_plain(LobbyRematch()),
    ),
    Command(
        "quit",
        ("exit", "q"),
        "quit",
        "Leave the lobby and close the program.",
        ("quit",),
        _lobby_plain(LobbyQuit()),
    ),
    Command(
        "help",
        ("?",),
        "help [COMMAND]",
        "List the commands, or explain one.",
        ("? create",),
        lambda rest: LobbyHelp(help_topic(rest, LOBBY_COMMANDS)),
    ),
)
