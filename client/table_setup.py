"""Before the first card: the seats agree on the table over the sealed mesh, trusting the lobby
for nothing (protocol/table.py says what is agreed and why).

1. This client checks the roster against the room it joined and readied for (the lobby may not
   change its seat count or options), against its own proof floor, and against the keys of
   the bots it started for the room (each must be at its bot's seat: a lobby that puts its own
   client there would otherwise play that seat, and the real bot a table of its own); a roster
   it refuses is refused before any link is dialled, and the others are told why
   (`table_refusal`).
2. Every seat sends `table_commit`: the roster as it got it, and a commitment to a fresh random
   contribution. A roster that differs from this seat's ends the setup at once, naming each
   difference (the lobby gave the players different rosters).
3. Holding every commitment, a seat reveals (`table_reveal`); holding every contribution, it
   derives the game's identity and says it (`table_confirm`); once every seat said the same
   identity, the table is agreed: its code is shown, and the keys of the people at it are
   checked against the last game with them. A client that started bots for the room says its
   own confirmation only once each of them reported the same roster and identity
   (`confirm_gate`; a bot reports through `derived`): nobody can complete the table without
   it, so a bot given another table by the lobby stops the deal.

Nothing here blames anyone: what goes wrong before the deal stops the table with a sentence
that says what happened, and no verdict. A lie of the lobby is said as soon as this seat sees
one: a roster that differs, or a machine that shows another key than the roster gives the
seat it is at or claims (the lobby gave someone another key). The refusal is signed with this
seat's roster (`TableRefusal`), relayed by every seat that verified it, and said first on
every link the mesh tries for `REFUSAL_GRACE` seconds, also to the machines whose key does not
match: the players who can never link with each other hear why, and nobody is left waiting
for the deadline. The mesh stays with the game: `attach` hands it to the game driver, and
this object keeps answering the setup on every link that comes up (a peer that lost its link,
or crashed, before it saw every confirmation).
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Callable, Mapping
from typing import Any

from twisted.internet.defer import Deferred
from twisted.logger import Logger

from client.net import (
    LinkLoss,
    Mesh,
    MeshHandler,
    PeerListener,
    RememberedKeys,
    changed_player_keys,
)
from protocol.cards import MAX_PLAYERS
from protocol.identity import Identity, fingerprint
from protocol.messages import LOBBY_EVENTS, GameStart, Message, MessageError, clip_text
from protocol.peer_messages import TableCommit, TableConfirm, TableRefusal, TableReveal, sign
from protocol.sealed import describe_key
from protocol.table import (
    CHECK_CODE,
    CONTRIBUTION_BYTES,
    PROOFS_OFF,
    AgreedTable,
    RoomTerms,
    below_the_floor,
    commitment,
    game_identity,
    read_refusal,
    roster_bytes,
    roster_differences,
    table_code,
    term_differences,
)

log = Logger()

SETUP_DEADLINE = 60.0
#: Game messages peers may send before this seat's game has started: a few steps and
#: heartbeats at most; each is at most a frame, so at most 16 MiB wait in all.
MAX_EARLY_MESSAGES = 64
#: Seconds a refusing client keeps its mesh (dialling, relaying, saying its refusals first on
#: every link) for the others to hear why: the redials of the first seconds (0.2, 0.5, 1, 2 s)
#: reach every seat that listens.
REFUSAL_GRACE = 5.0
#: Refusals this seat reads before the table starts: each costs a roster's decoding and a
#: signature check (a copy of one already read costs neither). An honest table sends one a
#: seat; a peer that floods refusals stops the table, as one refusal would, and costs no more.
MAX_REFUSALS_READ = 4 * MAX_PLAYERS


class TableRefused(Exception):
    """The table will not start; the text says why, for a person. Nobody is blamed. `said`:
    the reason as signed for the other players, where it differs (it names this player)."""

    def __init__(self, reason: str, said: str | None = None) -> None:
        super().__init__(reason)
        self.said = said


class TableSetup(MeshHandler):
    def __init__(
        self,
        reactor: Any,
        identity: Identity,
        roster: GameStart,
        seat: int,
        listener: PeerListener,
        *,
        terms: RoomTerms | None,
        allow_weak_proofs: bool,
        deadline: float = SETUP_DEADLINE,
        refusal_grace: float = REFUSAL_GRACE,
        known_players: RememberedKeys | None = None,
        agreed: AgreedTable | None = None,
        mesh_options: dict[str, Any] | None = None,
        own_bots: Mapping[str, bytes] | None = None,
        derived: Callable[[GameStart, bytes], None] | None = None,
        confirm_gate: Callable[[bytes], Deferred[None]] | None = None,
    ) -> None:
        """`own_bots`: the name and key of each bot this client started for this room.
        `derived` hears the roster and the identity as soon as this seat derives it (a bot
        tells the client that started it). `confirm_gate(identity)` fires once this seat may
        confirm that identity, or fails with TableRefused (the client that started bots:
        each must have reported the same)."""
        self.reactor = reactor
        self.identity = identity
        self.roster = roster
        self.seat = seat
        self.players = len(roster.seats)
        self.names = tuple(member.name for member in roster.seats)
        self.terms = terms
        self.allow_weak_proofs = allow_weak_proofs
        self.deadline = deadline
        self.refusal_grace = refusal_grace
        self.known_players = known_players
        self.own_bots = dict(own_bots or {})
        self.derived = derived
        self.confirm_gate = confirm_gate
        self.mesh = Mesh(reactor, identity, roster, seat, self, listener, **(mesh_options or {}))
        self.done: Deferred[AgreedTable] = Deferred()
        self.game: MeshHandler | None = None
        self.warnings: list[str] = []  # players whose key changed since the last game
        contribution = secrets.token_bytes(CONTRIBUTION_BYTES)
        self._contributions: dict[int, bytes] = {seat: contribution}
        self._commitments: dict[int, bytes] = {seat: commitment(roster, seat, contribution)}
        self._confirms: dict[int, bytes] = {}
        self._rosters: dict[int, GameStart] = {}  # the roster each seat said it got
        self._link_problems: dict[int, str] = {}  # the last, by seat
        self._identity: bytes | None = None
        self._refusal: str | None = None  # why this seat will not play, for this player
        self._also: list[str] = []  # what this player heard after that
        self._said: list[TableRefusal] = []  # own and verified others', said on every link
        self._read: set[TableRefusal] = set()  # own, and those read (a copy is dropped unread)
        self._reads = 0
        self._refused_by: set[int] = set()  # seats whose own refusal verified here
        self._early: list[tuple[int, Message]] = []
        self._timer: Any = None
        self.agreed = agreed
        if agreed is not None:  # resumed from the game file: answer the setup, nothing more
            self._contributions = dict(enumerate(agreed.contributions))
            self._commitments = {
                s: commitment(roster, s, c) for s, c in enumerate(agreed.contributions)
            }
            self._identity = agreed.identity
            self._confirms[seat] = agreed.identity

    # --- starting, and handing over --------------------------------------------------------

    def start(self) -> Deferred[AgreedTable]:
        """Check the roster here, then agree on it with the others; fires with the agreed
        table, or fails with TableRefused."""
        problem = self._local_problem()
        if problem is not None:
            self._refuse(*problem)
            return self.done
        self._timer = self.reactor.callLater(self.deadline, self._too_late)
        self.mesh.start()
        return self.done

    def attach(self, game: MeshHandler) -> None:
        """The game has started: it hears the mesh from now on (with what came early)."""
        self.game = game
        early, self._early = self._early, []
        for seat in sorted(self.mesh.connected):
            game.link_up(seat)
        for seat, message in early:
            game.received(seat, message)

    def _local_problem(self) -> tuple[str, str] | None:
        """Why this client refuses the roster by itself, before any link: for this player,
        and as signed for the others."""
        problems = []
        keys = [member.public_key for member in self.roster.seats]
        if len(set(keys)) < len(keys):
            problems.append("the roster gives two seats the same key")
        if self.terms is not None:
            problems += term_differences(self.terms, self.roster)
        floor = below_the_floor(self.roster.options.proofs, self.allow_weak_proofs)
        if floor is not None:
            problems.append(floor)
        said = list(problems)
        for here, there in self._bots_misplaced():
            problems.append(here)
            said.append(there)
        if not problems:
            return None
        here, there = (
            "This client refuses the game: " + ". Also, ".join(words) + "."
            for words in (problems, said)
        )
        return here, there

    def _bots_misplaced(self) -> list[tuple[str, str]]:
        """Each bot of this client's that the roster does not seat with its own key: for this
        player, and for the others."""
        me = self.names[self.seat]
        found = []
        for name, key in sorted(self.own_bots.items()):
            at = [member.public_key for member in self.roster.seats if member.name == name]
            if at == [key]:
                continue
            if at:
                lie = f"the lobby put another key at {{}} bot {name}'s seat"
                shown = f" (roster: {fingerprint(at[0])}; your bot: {fingerprint(key)})"
                found.append((lie.format("your") + shown, lie.format(f"{me}'s")))
            else:
                lie = f"the lobby left {{}} bot {name} out of the roster"
                found.append((lie.format("your"), lie.format(f"{me}'s")))
        return found

    # --- the mesh ---------------------------------------------------------------------------

    def link_up(self, seat: int) -> None:
        for message in self._mine():
            self.mesh.send(seat, message)
        if self.game is not None:
            self.game.link_up(seat)

    def link_down(self, seat: int, reason: str, loss: LinkLoss) -> None:
        self._link_problems[seat] = reason
        if self.game is not None:
            self.game.link_down(seat, reason, loss)

    def wrong_key(self, seat: int, shown: bytes | None, dialled: bool) -> None:
        """A machine showed another key than the roster gives `seat`: at that seat's address
        (`dialled`), or dialling this seat as that seat. Only the lobby's rosters put it
        there (an honest peer shows its own key for the seat its own roster gives it)."""
        if self.agreed is not None:
            return
        name, me = self.names[seat], self.names[self.seat]
        ours = fingerprint(self.roster.seats[seat].public_key)
        keys = [member.public_key for member in self.roster.seats]
        if dialled:
            lie = "the lobby gave {} another key for {} than the machine at {}'s address shows"
            here = lie.format("you", name, name)
            here += f" ({describe_key(shown)}; your roster gives {name} key {ours})"
            said = lie.format(me, name, name)
        elif shown in keys:
            other = self.names[keys.index(shown)]
            lie = (
                f"{other} dialled {{}} as seat {seat}, where {{}} roster has {name}: the lobby "
                f"gave {other} another roster than {{}}"
            )
            here, said = lie.format("you", "your", "yours"), lie.format(me, f"{me}'s", f"{me}'s")
        else:
            lie = (
                "a machine dialled {} as {} with another key than {} roster gives {}: the lobby "
                "gave {} another key for {}, or gave {} another roster"
            )
            here = lie.format("you", name, "your", name, "you", name, name)
            here += f" ({describe_key(shown)}; your roster: {ours})"
            said = lie.format(me, name, f"{me}'s", name, me, name, name)
        self._refuse(here, said=said)

    def said_first(self) -> list[Message]:
        return list(self._said)

    def misbehaved(self, seat: int, reason: str) -> None:
        if self.game is not None:
            self.game.misbehaved(seat, reason)
        elif self.agreed is None:
            self._refuse(f"{self.names[seat]}'s client broke the link protocol: {reason}")

    def is_copy(self, seat: int, payload: bytes) -> bool:
        return self.game is not None and self.game.is_copy(seat, payload)

    def received(self, seat: int, message: Message) -> None:
        if isinstance(message, TableCommit):
            self._commit(seat, message)
        elif isinstance(message, TableReveal):
            self._reveal(seat, message)
        elif isinstance(message, TableConfirm):
            self._confirm(seat, message)
        elif isinstance(message, TableRefusal):
            self._refusal_heard(message)
        elif self.game is not None:
            self.game.received(seat, message)
        elif len(self._early) < MAX_EARLY_MESSAGES:
            self._early.append((seat, message))  # the game starts in a moment; else resent

    def _mine(self) -> list[Message]:
        """What this seat has said in the setup so far, to say again on a new link."""
        if self._refusal is not None:
            return self.said_first()
        said: list[Message] = [TableCommit(roster_bytes(self.roster), self._commitments[self.seat])]
        if len(self._commitments) == self.players:
            said.append(TableReveal(self._contributions[self.seat]))
        if self.seat in self._confirms:
            said.append(TableConfirm(self._confirms[self.seat]))
        return said

    # --- the three rounds -------------------------------------------------------------------

    def _commit(self, seat: int, commit: TableCommit) -> None:
        if self.agreed is not None or self._refusal is not None:
            return
        known = self._commitments.get(seat)
        if known is not None:
            if known != commit.commitment:
                self._refuse(f"{self.names[seat]} sent two different commitments")
            return
        try:
            theirs = LOBBY_EVENTS.decode(commit.roster)
        except MessageError as error:
            self._refuse(f"{self.names[seat]} sent a roster that cannot be read: {error}")
            return
        if not isinstance(theirs, GameStart):
            self._refuse(f"{self.names[seat]} sent something else than a roster")
            return
        if theirs != self.roster:
            name, me = self.names[seat], self.names[self.seat]
            found = "; ".join(roster_differences(self.roster, theirs)) or "something else"
            lie = f"the lobby gave {name} another roster than {{}}: {found}"
            self._refuse(lie.format("yours"), said=lie.format(f"{me}'s"))
            return
        self._commitments[seat] = commit.commitment
        self._rosters[seat] = theirs  # what its commitment is bound to
        if len(self._commitments) == self.players:
            self.mesh.broadcast(TableReveal(self._contributions[self.seat]))
            self._maybe_derive()

    def _reveal(self, seat: int, reveal: TableReveal) -> None:
        if self.agreed is not None or self._refusal is not None or seat in self._contributions:
            return
        promised = self._commitments.get(seat)
        if promised is None:
            return  # said again after its commitment on the next link
        bound = self._rosters.get(seat, self.roster)
        if not hmac.compare_digest(promised, commitment(bound, seat, reveal.contribution)):
            self._refuse(f"{self.names[seat]} revealed a contribution it had not committed to")
            return
        self._contributions[seat] = reveal.contribution
        self._maybe_derive()

    def _maybe_derive(self) -> None:
        if self._identity is not None or len(self._contributions) < self.players:
            return
        ordered = [self._contributions[seat] for seat in range(self.players)]
        identity = self._identity = game_identity(self.roster, ordered)
        if self.derived is not None:
            self.derived(self.roster, identity)
        if self.confirm_gate is None:
            self._confirm_own(identity)
            return
        self.confirm_gate(identity).addCallbacks(
            lambda _: self._confirm_own(identity), self._gate_refused
        )

    def _confirm_own(self, identity: bytes) -> None:
        if self.agreed is not None or self._refusal is not None:
            return
        self._confirms[self.seat] = identity
        self.mesh.broadcast(TableConfirm(identity))
        self._maybe_agree()

    def _gate_refused(self, failure: Any) -> None:
        failure.trap(TableRefused)
        self._refuse(str(failure.value), said=failure.value.said)

    def _confirm(self, seat: int, confirm: TableConfirm) -> None:
        if self.agreed is not None or self._refusal is not None:
            return
        self._confirms[seat] = confirm.identity
        self._maybe_agree()

    def _maybe_agree(self) -> None:
        if self._identity is None:
            return
        code = f"Your table code was {table_code(self._identity)}; theirs differ"
        differ = [s for s, identity in self._confirms.items() if identity != self._identity]
        if differ:
            names = ", ".join(self.names[s] for s in differ)
            self._refuse(
                f"{names} derived another game identity than you from the same roster: a "
                "player sent different contributions to different players, or someone sits "
                f"in the middle of a link. {code}"
            )
            return
        if len(self._confirms) < self.players:
            return
        contributions = tuple(self._contributions[seat] for seat in range(self.players))
        self.agreed = AgreedTable(self.roster, self.seat, contributions)
        self._cancel_timer()
        self.warnings = changed_player_keys(self.roster, self.seat, self.known_players)
        self.done.callback(self.agreed)

    # --- refusals ---------------------------------------------------------------------------

    def _too_late(self) -> None:
        self._timer = None
        if self._identity is not None and self.seat not in self._confirms:
            late = f"{{}} bots did not report the table they got within {self.deadline:g} seconds"
            self._refuse(late.format("your"), said=late.format(f"{self.names[self.seat]}'s"))
            return
        missing: list[int] = []
        for heard in (self._commitments, self._contributions, self._confirms):
            missing = [s for s in range(self.players) if s not in heard]
            if missing:  # the first round someone has not answered in
                break
        problems = [
            f"the link to {self.names[s]}: {self._link_problems[s]}"
            for s in missing
            if s in self._link_problems
        ]
        self._refuse(
            f"the table did not come together within {self.deadline:g} seconds: no word from "
            f"{', '.join(self.names[s] for s in missing)} (their client may have refused the "
            "game, stopped, or cannot be reached)"
            + (". Last, " + "; ".join(problems) if problems else "")
        )

    def _refusal_heard(self, refusal: TableRefusal) -> None:
        """Another seat's refusal, from its author, relayed, or said before a link's hellos:
        read once (within MAX_REFUSALS_READ), shown, and relayed once if its author's key is
        in this roster; one signed by a key this roster does not hold is shown as what it
        shows, the lobby's lie about that key."""
        if self.agreed is not None or refusal in self._read:
            return
        if self._reads >= MAX_REFUSALS_READ:
            return
        self._reads += 1
        self._read.add(refusal)
        heard = read_refusal(self.roster, refusal)
        if heard is None or heard.author == self.seat:
            return
        if heard.author is not None:
            if heard.author in self._refused_by:
                return
            self._refused_by.add(heard.author)
            self._said.append(refusal)
            self.mesh.broadcast(refusal)
        self._refuse(heard.words, said=heard.said)

    def _refuse(self, reason: str, said: str | None = None) -> None:
        """Stop the setup (no cards were dealt, nobody is blamed): `reason` for this player,
        `said` (by default the same) signed for the others with this seat's roster, sent on
        every link up now and said first on every link tried for `refusal_grace` seconds; then
        `done` fails with all this player heard. The grace is kept whole even once every
        seat has refused: a seat cannot know that the others heard it (one that refused on
        hearing another may not have reached the first yet). A second reason is only added
        to what the player reads (up to MAX_REFUSALS_READ of them)."""
        if self.agreed is not None:
            return
        if self._refusal is not None:
            fresh = reason != self._refusal and reason not in self._also
            if fresh and len(self._also) < MAX_REFUSALS_READ:
                self._also.append(reason)
            return
        self._refusal = reason
        self._cancel_timer()
        log.info("the table will not start: {reason}", reason=reason)
        words = clip_text(said or reason)
        own = TableRefusal(self.roster.game_id, self.seat, words, roster_bytes(self.roster))
        own = sign(self.identity, own)
        self._read.add(own)
        self._said.append(own)
        self.mesh.broadcast(own)
        self.mesh.start()  # refused before any link: dial the others just to say why
        self.reactor.callLater(self.refusal_grace, self._fail_done)

    def _fail_done(self) -> None:
        assert self._refusal is not None
        heard = " ".join(sentence(text) for text in (self._refusal, *self._also))
        self.mesh.close().addBoth(lambda _: self.done.errback(TableRefused(heard)))

    def _cancel_timer(self) -> None:
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self._timer = None


def sentence(text: str) -> str:
    return text if text.endswith(".") else text + "."


def table_lines(agreed: AgreedTable, warnings: list[str]) -> list[str]:
    """What every player is told as the table starts."""
    lines = [f"Table code: {agreed.code}. {CHECK_CODE}"]
    if not agreed.roster.options.proofs:
        lines.append(f"Weak proofs at this table: {PROOFS_OFF}.")
    lines += [f"WARNING: {warning}" for warning in warnings]
    return lines
