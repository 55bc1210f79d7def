"""The table the players agree on before the deal (protocol/table.py, client/table_setup.py):
the identity binds the whole roster and every contribution; the seats agree over real sealed
links on 127.0.0.1, and refuse, saying why and blaming nobody, a roster that differs between
them, terms the lobby changed, or proofs below the floor."""

from __future__ import annotations

import dataclasses
import json
import re
import secrets
from typing import Any

import pytest
import pytest_twisted
from hypothesis import given
from hypothesis import strategies as st
from twisted.internet import reactor
from twisted.internet.defer import Deferred, DeferredList
from twisted.internet.task import deferLater

from client import table_setup
from client.bots import RoomBot
from client.net import PeerListener, RememberedKeys, changed_player_keys
from client.screen.lobby import bots_agree
from client.table_setup import MAX_REFUSALS_READ, TableRefused, TableSetup
from protocol.identity import Identity, fingerprint
from protocol.messages import GameStart, RoomOptions, Seat
from protocol.peer_messages import TableRefusal, sign
from protocol.table import (
    PROOFS_OFF,
    AgreedTable,
    RoomTerms,
    below_the_floor,
    game_identity,
    option_differences,
    read_refusal,
    roster_bytes,
    roster_differences,
    roster_digest,
    swapped_seats,
    table_code,
    term_differences,
)
from tests.waiting import within


def a_roster(identities: list[Identity], ports: list[int], **options: Any) -> GameStart:
    return GameStart(
        room_id=7,
        game_id=bytes(16),
        seats=tuple(
            Seat(f"p{n}", identity.public_key, "127.0.0.1", port)
            for n, (identity, port) in enumerate(zip(identities, ports, strict=True))
        ),
        options=RoomOptions(**options),
    )


# --- the identity and the code (pure) ---------------------------------------------------------

ROSTER = a_roster([Identity.generate() for _ in range(3)], [4000, 4001, 4002])
CONTRIBUTIONS = tuple(bytes([n]) * 32 for n in range(3))


def changed_rosters(roster: GameStart) -> list[GameStart]:
    """The roster with any one thing changed: ids, a seat's name, key, host or port, the seat
    order, or any option."""
    seats = list(roster.seats)
    other_key = Identity.generate().public_key
    swaps = [
        dataclasses.replace(seats[1], name="mallory"),
        dataclasses.replace(seats[1], public_key=other_key),
        dataclasses.replace(seats[1], host="127.0.0.2"),
        dataclasses.replace(seats[1], port=5000),
    ]
    found = [
        dataclasses.replace(roster, room_id=8),
        dataclasses.replace(roster, game_id=bytes([1]) * 16),
        dataclasses.replace(roster, seats=(seats[1], seats[0], seats[2])),
        dataclasses.replace(roster, options=RoomOptions(proofs=False)),
        dataclasses.replace(roster, options=RoomOptions(turn_seconds=30)),
        dataclasses.replace(roster, options=RoomOptions(singleton_rule="rio_grande_literal")),
    ]
    found += [dataclasses.replace(roster, seats=(seats[0], swap, seats[2])) for swap in swaps]
    return found


def test_the_identity_binds_every_part_of_the_roster() -> None:
    identity = game_identity(ROSTER, CONTRIBUTIONS)
    others = {game_identity(changed, CONTRIBUTIONS) for changed in changed_rosters(ROSTER)}
    assert identity not in others and len(others) == len(changed_rosters(ROSTER))


@given(st.integers(0, 2), st.binary(min_size=32, max_size=32))
def test_the_identity_binds_every_contribution(seat: int, contribution: bytes) -> None:
    changed = list(CONTRIBUTIONS)
    changed[seat] = contribution
    same = tuple(changed) == CONTRIBUTIONS
    assert (game_identity(ROSTER, changed) == game_identity(ROSTER, CONTRIBUTIONS)) == same


def test_a_table_code_is_twelve_digits_in_groups_of_three() -> None:
    codes = {table_code(secrets.token_bytes(16)) for _ in range(200)}
    assert len(codes) == 200
    for code in codes:
        groups = code.split(" ")
        assert [len(g) for g in groups] == [3, 3, 3, 3] and all(g.isdigit() for g in groups)


def test_differences_are_named_field_by_field() -> None:
    assert option_differences(RoomOptions(), RoomOptions(proofs=False, turn_seconds=5)) == [
        "proofs is off, not on",
        "turn_seconds is 5, not 0",
    ]
    swapped_key = changed_rosters(ROSTER)[-3]
    (found,) = roster_differences(ROSTER, swapped_key)
    assert found.startswith("p1's key is ") and fingerprint(ROSTER.seats[1].public_key) in found


def seats_swapped(roster: GameStart, i: int = 0, j: int = 1) -> GameStart:
    seats = list(roster.seats)
    seats[i], seats[j] = seats[j], seats[i]
    return dataclasses.replace(roster, seats=tuple(seats))


@given(st.integers(3, 7), st.data())
def test_two_seats_swapped_are_named_as_a_swap_and_nothing_else(players: int, data) -> None:
    identities = [Identity.generate() for _ in range(players)]
    roster = a_roster(identities, list(range(4000, 4000 + players)))
    i, j = sorted(data.draw(st.sets(st.integers(0, players - 1), min_size=2, max_size=2)))
    theirs = seats_swapped(roster, i, j)
    assert swapped_seats(roster, theirs) == [(i, j)] == swapped_seats(theirs, roster)
    assert roster_differences(roster, theirs) == [f"seats {i} and {j} swapped (p{i} and p{j})"]
    assert swapped_seats(roster, roster) == []
    # Not a swap: p_j moved to p_i's seat, and p_i's seat has another port.
    moved = list(theirs.seats)
    moved[j] = dataclasses.replace(moved[j], port=9999)
    assert swapped_seats(roster, dataclasses.replace(roster, seats=tuple(moved))) == []


# --- refusals, read (pure) ---------------------------------------------------------------------

IDENTITIES = [Identity.generate() for _ in range(3)]
KEYED = a_roster(IDENTITIES, [4000, 4001, 4002])


def refusal_of(seat: int, roster: GameStart, identity: Identity, why: str = "no") -> TableRefusal:
    return sign(identity, TableRefusal(roster.game_id, seat, why, roster_bytes(roster)))


def test_a_refusal_is_read_by_the_key_that_signed_it_and_its_roster_compared() -> None:
    plain = read_refusal(KEYED, refusal_of(1, KEYED, IDENTITIES[1], "my floor"))
    assert plain is not None and plain.author == 1
    assert plain.words == "p1 will not play this table: my floor"
    assert plain.said == "p1 refused it"
    # From a roster with seats 0 and 1 swapped: p0 signs as seat 1 of its own roster.
    swapped = read_refusal(KEYED, refusal_of(1, seats_swapped(KEYED), IDENTITIES[0]))
    assert swapped is not None and swapped.author == 0
    assert swapped.words == (
        "p0 will not play this table: no (the lobby gave p0 another roster than yours: "
        "seats 0 and 1 swapped (p0 and p1))"
    )


def test_a_refusal_this_roster_cannot_verify_is_the_lobbys_lie_about_a_key() -> None:
    """p1's real key signs, but the lobby gave this seat another key for p1."""
    lied = dataclasses.replace(
        KEYED,
        seats=(
            KEYED.seats[0],
            dataclasses.replace(KEYED.seats[1], public_key=Identity.generate().public_key),
            KEYED.seats[2],
        ),
    )
    heard = read_refusal(lied, refusal_of(1, KEYED, IDENTITIES[1], "the lobby lies"))
    assert heard is not None and heard.author is None
    assert heard.words.startswith(
        "a refusal in p1's name that your roster's key for p1 does not verify: the lobby gave "
        "you another key for p1 (p1's roster: p1's key is "
    )
    assert heard.words.endswith("it says: the lobby lies)")


def test_a_refusal_nobody_signed_or_of_another_game_is_not_read() -> None:
    good = refusal_of(1, KEYED, IDENTITIES[1])
    assert read_refusal(KEYED, dataclasses.replace(good, reason="yes")) is None  # forged
    assert read_refusal(KEYED, refusal_of(1, KEYED, IDENTITIES[2])) is None  # another's key
    other = dataclasses.replace(KEYED, game_id=bytes([9]) * 16)
    assert read_refusal(KEYED, refusal_of(1, other, IDENTITIES[1])) is None  # another game
    assert read_refusal(KEYED, dataclasses.replace(good, seat=5)) is None  # no such seat
    unreadable = sign(IDENTITIES[1], TableRefusal(KEYED.game_id, 1, "no", b"\xc1"))
    assert read_refusal(KEYED, unreadable) is None


def test_the_proof_floor_and_its_words() -> None:
    assert "audit" in PROOFS_OFF
    assert below_the_floor(True, False) is None and below_the_floor(False, True) is None
    refusal = below_the_floor(False, False)
    assert refusal is not None and "--allow-weak-proofs" in refusal and "without proofs" in refusal


def test_a_roster_with_one_key_at_two_seats_is_refused_before_any_link() -> None:
    twice = dataclasses.replace(
        ROSTER,
        seats=(
            ROSTER.seats[0],
            ROSTER.seats[1],
            dataclasses.replace(ROSTER.seats[2], public_key=ROSTER.seats[1].public_key),
        ),
    )
    identity = Identity.generate()
    setup = TableSetup(
        reactor,
        identity,
        twice,
        0,
        PeerListener(reactor, identity),
        terms=None,
        allow_weak_proofs=False,
    )
    here, _ = setup._local_problem() or ("", "")
    assert "the roster gives two seats the same key" in here


def test_a_roster_with_more_or_fewer_seats_than_the_room_is_refused_in_words() -> None:
    """The room's seat count is part of the terms a client joined for: a roster of 4 for a
    room of 3 (a seat the lobby added, its own perhaps) is refused before any link."""
    identities = [Identity.generate() for _ in range(4)]
    four = a_roster(identities, [4000, 4001, 4002, 4003])
    for roster, room, words in [
        (four, 3, "the lobby's roster has 4 seats; the room you joined has 3"),
        (ROSTER, 4, "the lobby's roster has 3 seats; the room you joined has 4"),
    ]:
        setup = TableSetup(
            reactor,
            identities[0],
            roster,
            0,
            PeerListener(reactor, identities[0]),
            terms=RoomTerms(room, RoomOptions()),
            allow_weak_proofs=False,
        )
        here, _ = setup._local_problem() or ("", "")
        assert words in here
    assert term_differences(RoomTerms(4, RoomOptions()), four) == []


def test_a_changed_key_is_warned_about_by_name(tmp_path) -> None:
    known = RememberedKeys(tmp_path / "players.json")
    assert changed_player_keys(ROSTER, 0, known) == []  # first game: nothing to compare
    assert changed_player_keys(ROSTER, 0, known) == []  # the same keys again
    new_key = dataclasses.replace(ROSTER.seats[2], public_key=Identity.generate().public_key)
    later = dataclasses.replace(ROSTER, seats=(*ROSTER.seats[:2], new_key))
    (warning,) = changed_player_keys(later, 0, known)
    assert warning.startswith("p2's key has changed since your last game with p2")
    assert fingerprint(ROSTER.seats[2].public_key) in warning
    assert fingerprint(new_key.public_key) in warning
    assert changed_player_keys(later, 0, known) == []  # told once; the new key is remembered


# --- agreeing over real sealed links ----------------------------------------------------------

GRACE = 1.5  # a refusing seat's grace here: the first redials (0.2, 0.5 s) fit in it


async def setups(
    players: int, rosters: Any = None, per_seat: dict[int, dict[str, Any]] | None = None
) -> tuple[list[TableSetup], Any]:
    identities = [Identity.generate() for _ in range(players)]
    listeners = [PeerListener(reactor, identity, unknown_game_wait=2) for identity in identities]
    ports = [await within(listener.listen("tcp:0:interface=127.0.0.1")) for listener in listeners]
    roster = a_roster(identities, ports)
    given = rosters(roster) if rosters else [roster] * players
    made = []
    for seat in range(players):
        options = {
            "terms": RoomTerms(players, RoomOptions()),
            "allow_weak_proofs": False,
            "deadline": 10.0,
            "refusal_grace": GRACE,
        }
        options.update((per_seat or {}).get(seat, {}))
        made.append(
            TableSetup(reactor, identities[seat], given[seat], seat, listeners[seat], **options)
        )

    async def close() -> None:
        for setup in made:
            await within(setup.mesh.close())
        for listener in listeners:
            await within(listener.stop())

    return made, close


async def outcomes(made: list[TableSetup]) -> list[tuple[bool, Any]]:
    results = await within(DeferredList([s.start() for s in made], consumeErrors=True), 20)
    return [(ok, value if ok else value.value) for ok, value in results]


@pytest_twisted.ensureDeferred
async def test_the_seats_agree_on_one_identity_and_one_code() -> None:
    made, close = await setups(4)
    try:
        found = await outcomes(made)
        assert all(ok for ok, _ in found), found
        tables: list[AgreedTable] = [value for _, value in found]
        assert len({table.identity for table in tables}) == 1
        assert len({table.code for table in tables}) == 1
        assert [table.seat for table in tables] == [0, 1, 2, 3]
        assert len(set(tables[0].contributions)) == 4  # each seat's own, fresh
    finally:
        await close()


def one_key_swapped(roster: GameStart) -> list[GameStart]:
    """Seat 0's roster gives seat 1 a key that is not seat 1's."""
    seats = list(roster.seats)
    seats[1] = dataclasses.replace(seats[1], public_key=Identity.generate().public_key)
    return [dataclasses.replace(roster, seats=tuple(seats)), roster, roster]


@pytest_twisted.ensureDeferred
async def test_a_swapped_key_with_nobody_in_the_middle_is_named_to_every_seat_at_once() -> None:
    """Seat 0 dials p1 and meets another key: it refuses in words at once, signed, and says
    so first on every link, the one to p1 as well (which never comes up). The deadline (10 s)
    is never what ends it."""
    made, close = await setups(3, one_key_swapped)
    began = reactor.seconds()
    try:
        found = await outcomes(made)
        assert reactor.seconds() - began < GRACE + 3
        assert not any(ok for ok, _ in found)
        said = [str(error) for _, error in found]
        assert said[0].startswith(
            "the lobby gave you another key for p1 than the machine at p1's address shows"
        )
        for text in said[1:]:
            assert "p0 will not play this table: the lobby gave p0 another key for p1" in text
        assert all("no word from" not in text and "blame" not in text for text in said)
    finally:
        await close()


@pytest_twisted.ensureDeferred
async def test_rosters_that_differ_stop_every_seat_at_once_naming_the_difference() -> None:
    def other_room(roster: GameStart) -> list[GameStart]:
        return [roster, dataclasses.replace(roster, room_id=99), roster]

    made, close = await setups(3, other_room)
    began = reactor.seconds()
    try:
        found = await outcomes(made)
        assert reactor.seconds() - began < GRACE + 3
        assert not any(ok for ok, _ in found)
        said = [str(error) for _, error in found]
        assert (
            "the lobby gave p1 another roster than yours: another room or lobby game id"
            in (said[0])
        )
        assert "the lobby gave p0 another roster than yours: another room" in said[1]
    finally:
        await close()


@pytest_twisted.ensureDeferred
async def test_seats_swapped_in_one_roster_are_named_as_a_swap_to_every_seat() -> None:
    """p2's roster has seats 0 and 1 swapped: no link to p2 can come up (each dialler claims
    a seat whose key in p2's roster is the other's), yet every seat reads the swap, from the
    rosters the refusals carry, said before the hellos."""
    made, close = await setups(3, lambda roster: [roster, roster, seats_swapped(roster)])
    try:
        found = await outcomes(made)
        assert not any(ok for ok, _ in found)
        for _, error in found:
            assert re.search(r"seats 0 and 1 swapped \(p[01] and p[01]\)", str(error)), error
            assert "no word from" not in str(error)
    finally:
        await close()


@pytest_twisted.ensureDeferred
async def test_a_flood_of_refusals_costs_a_bounded_number_of_reads() -> None:
    """A peer may send refusals without end, each another: this seat reads (decodes a
    roster, checks a signature) at most MAX_REFUSALS_READ of them, drops copies unread, and
    keeps a bounded list of what it shows."""
    made, close = await setups(3)
    setup = made[0]
    reads = []
    real = table_setup.read_refusal

    def counted(*args: Any) -> Any:
        reads.append(1)
        return real(*args)

    try:
        table_setup.read_refusal = counted
        first = refusal_of(1, KEYED, IDENTITIES[1])  # by a key this roster does not hold
        for n in range(MAX_REFUSALS_READ * 10):
            setup.received(1, first)
            junk = dataclasses.replace(first, reason=f"flood {n}", signature=bytes(64))
            setup.received(1, junk)
        assert len(reads) == MAX_REFUSALS_READ
        assert setup._refusal is not None and "a refusal in p1's name" in setup._refusal
        assert setup._also == []  # the junk verified against no key: nobody said it
        for _ in range(MAX_REFUSALS_READ * 2):  # machines with ever new keys, as seat 2
            setup.wrong_key(2, Identity.generate().public_key, dialled=False)
        assert len(setup._also) == MAX_REFUSALS_READ
        await within(setup.done.addErrback(lambda failure: failure.value), GRACE + 3)
    finally:
        table_setup.read_refusal = real
        await close()


@pytest_twisted.ensureDeferred
async def test_terms_lowered_for_one_client_are_refused_by_it_and_the_others_hear_why() -> None:
    def lowered(roster: GameStart) -> list[GameStart]:
        cheap = dataclasses.replace(roster, options=RoomOptions(proofs=False))
        return [roster, cheap, roster]

    made, close = await setups(3, lowered)
    try:
        found = await outcomes(made)
        assert not any(ok for ok, _ in found)
        victim = str(found[1][1])
        assert "the lobby changed the terms of the room you joined" in victim
        assert "proofs is off, not on" in victim
        for _, error in (found[0], found[2]):
            assert "p1" in str(error)  # told by the victim, or their own roster comparison
    finally:
        await close()


@pytest_twisted.ensureDeferred
async def test_a_bot_of_this_client_at_its_seat_with_its_key_passes_the_check() -> None:
    made, close = await setups(3)
    made[0].own_bots = {f"p{n}": made[0].roster.seats[n].public_key for n in (1, 2)}
    try:
        found = await outcomes(made)
        assert all(ok for ok, _ in found), found
    finally:
        await close()


@pytest_twisted.ensureDeferred
async def test_another_key_at_the_seat_of_a_bot_of_this_client_is_refused_before_any_link() -> None:
    """p0 started the bot p2 (it knows its key); the lobby seated another key under p2's
    name. p0 refuses before dialling, saying so, and the others hear it."""
    made, close = await setups(3)
    made[0].own_bots = {"p2": Identity.generate().public_key}
    try:
        found = await outcomes(made)
        assert not any(ok for ok, _ in found)
        said = [str(error) for _, error in found]
        assert said[0].startswith(
            "This client refuses the game: the lobby put another key at your bot p2's seat "
            "(roster: "
        )
        for text in said[1:]:
            assert (
                "p0 will not play this table: This client refuses the game: the lobby put "
                + ("another key at p0's bot p2's seat")
                in text
            ), text
    finally:
        await close()


def a_room_bot(room: int = 7) -> RoomBot:
    bot = RoomBot("planner", room, "ann-bot1")
    bot.heard(json.dumps({"seated": room, "name": "p2", "key": "00" * 32}))
    return bot


def test_a_bot_reports_its_table_to_the_client_that_started_it() -> None:
    bot = a_room_bot()
    bot.heard(json.dumps({"table": 8, "roster": "11" * 32, "identity": "22" * 16}))  # elsewhere
    bot.heard("p2 planted red in field 1")
    bot.heard(json.dumps({"table": 7, "roster": "zz", "identity": "22" * 16}))
    assert not bot.reported.called
    bot.heard(json.dumps({"table": 7, "roster": "11" * 32, "identity": "22" * 16}))
    bot.heard(json.dumps({"table": 7, "roster": "33" * 32, "identity": "44" * 16}))  # once
    assert bot.reported.called and bot.table == (bytes([0x11]) * 32, bytes([0x22]) * 16)


@pytest_twisted.ensureDeferred
async def test_a_client_with_bots_confirms_only_once_they_reported_the_same_table() -> None:
    """p0 started the bot p2: p0's own confirmation waits for p2's report, so nobody's table
    is agreed before it; the same roster and identity let it through."""
    made, close = await setups(3)
    bot = a_room_bot()
    made[0].confirm_gate = bots_agree([bot], made[0].roster, "p0")
    made[2].derived = lambda roster, identity: bot.heard(
        json.dumps({"table": 7, "roster": roster_digest(roster).hex(), "identity": identity.hex()})
    )
    reported = bot.heard
    bot.heard = lambda line: reactor.callLater(0.5, reported, line)  # the bot is slow to say
    try:
        started = DeferredList([s.start() for s in made], consumeErrors=True)
        await within(deferLater(reactor, 0.3, lambda: None))
        assert not any(s.done.called for s in made)
        results = await within(started, 20)
        assert all(ok for ok, _ in results), results
    finally:
        await close()


@pytest_twisted.ensureDeferred
async def test_a_bot_that_never_reports_holds_the_table_until_the_deadline_which_says_so() -> None:
    made, close = await setups(3, per_seat={0: {"deadline": 1.0}})
    made[0].confirm_gate = lambda identity: Deferred()
    try:
        found = await outcomes(made)
        assert str(found[0][1]).startswith(
            "your bots did not report the table they got within 1 seconds."
        )
        assert "p0's bots did not report the table they got" in str(found[1][1])
    finally:
        await close()


@pytest_twisted.ensureDeferred
async def test_a_bot_that_derived_another_table_stops_the_deal_in_words() -> None:
    made, close = await setups(3)
    bot = a_room_bot()
    made[0].confirm_gate = bots_agree([bot], made[0].roster, "p0")
    bot.heard(json.dumps({"table": 7, "roster": "11" * 32, "identity": "22" * 16}))
    try:
        found = await outcomes(made)
        assert not any(ok for ok, _ in found)
        said = [str(error) for _, error in found]
        assert said[0].startswith("the lobby gave your bot p2 another roster than yours.")
        for text in said[1:]:
            assert (
                "p0 will not play this table: the lobby gave p0's bot p2 another roster "
                + ("than p0")
                in text
            ), text
    finally:
        await close()


@pytest_twisted.ensureDeferred
async def test_proofs_off_are_refused_unless_every_client_allows_them() -> None:
    def weak(roster: GameStart) -> list[GameStart]:
        return [dataclasses.replace(roster, options=RoomOptions(proofs=False))] * 3

    lenient = {"terms": RoomTerms(3, RoomOptions(proofs=False)), "allow_weak_proofs": True}
    made, close = await setups(3, weak, {0: lenient, 1: lenient, 2: lenient})
    try:
        found = await outcomes(made)
        assert all(ok for ok, _ in found), found
    finally:
        await close()
    strict = {**lenient, "allow_weak_proofs": False}
    made, close = await setups(3, weak, {0: lenient, 1: lenient, 2: strict})
    try:
        found = await outcomes(made)
        assert not any(ok for ok, _ in found)
        assert "would deal without proofs" in str(found[2][1])
        assert "p2 will not play this table" in str(found[0][1])
    finally:
        await close()


@pytest.mark.parametrize("missing", [2])
@pytest_twisted.ensureDeferred
async def test_a_seat_that_never_comes_stops_the_table_in_time_naming_it(missing: int) -> None:
    made, close = await setups(3, per_seat={0: {"deadline": 1.0}, 1: {"deadline": 1.0}})
    try:
        found = await outcomes(made[:missing])
        for _, error in found:
            assert isinstance(error, TableRefused)
            assert "did not come together within 1 seconds: no word from p2" in str(error)
    finally:
        await close()


# --- what a reused lobby id cannot do -----------------------------------------------------------


def test_a_message_signed_for_another_identity_is_never_taken_in(tmp_path) -> None:
    """The same players and the same lobby ids, another table: a step message of the old
    game is ignored, relayed by a peer or sent by its own author, and nobody is blamed (the
    table was agreed among the seats, so only a replay can carry another identity)."""
    from client.game import PeerGame, Player
    from client.gamefile import GameFileWriter
    from protocol.lockstep import GameConfig, Lockstep
    from protocol.peer_messages import StepFrame, sign

    identities = [Identity.generate() for _ in range(3)]
    roster = a_roster(identities, [4000, 4001, 4002])
    old = AgreedTable(roster, 1, tuple(secrets.token_bytes(32) for _ in range(3)))
    new = AgreedTable(roster, 0, tuple(secrets.token_bytes(32) for _ in range(3)))
    assert old.identity != new.identity and old.code != new.code
    payload = Lockstep(GameConfig.from_roster(roster, old.identity), 1, bytes(32)).compose()
    replayed = sign(identities[1], StepFrame(old.identity, 0, 1, payload))
    in_new_clothes = StepFrame(new.identity, 0, 1, payload, replayed.signature)

    def game() -> Any:
        listener = PeerListener(reactor, identities[0])
        writer = GameFileWriter.create(tmp_path / secrets.token_hex(4), new, bytes(32), "x")
        return PeerGame(reactor, identities[0], new, bytes(32), listener, writer, Player())

    for link in (1, 2):
        played = game()
        played.received(link, replayed)
        played.received(link, in_new_clothes)  # the header changed: the signature fails
        assert played.inbox.get(0, {}) == {} and played.outcome is None
        assert played.ending is None


def test_game_messages_that_come_before_the_game_are_kept_within_a_bound() -> None:
    from client.table_setup import MAX_EARLY_MESSAGES
    from protocol.peer_messages import PeerChat

    identities = [Identity.generate() for _ in range(3)]
    roster = a_roster(identities, [4000, 4001, 4002])
    listener = PeerListener(reactor, identities[0])
    setup = TableSetup(
        reactor, identities[0], roster, 0, listener, terms=None, allow_weak_proofs=False
    )
    for n in range(MAX_EARLY_MESSAGES * 3):
        setup.received(1, PeerChat(f"early {n}"))
    assert len(setup._early) == MAX_EARLY_MESSAGES
