"""Before the first card: the seats agree on the table over the sealed mesh, trusting the lobby
for nothing (protocol/table.py says what is agreed and why).

1. This client checks the roster against the room it joined and readied for (the lobby may not
   change its seat count or options) and against its own proof floor; a roster it refuses is
   refused before any link is dialled, and the others are told why (`table_refusal`).
2. Every seat sends `table_commit`: the roster as it got it, and a commitment to a fresh random
   contribution. A roster that differs from this seat's ends the setup once this seat knows
   its own table code, naming each difference and the code (the lobby gave the players
   different rosters: their codes differ).
3. Holding every commitment, a seat reveals (`table_reveal`); holding every contribution, it
   derives the game's identity and says it (`table_confirm`); once every seat said the same
   identity, the table is agreed: its code is shown, and the keys of the people at it are
   checked against the last game with them.

Nothing here blames anyone: what goes wrong before the deal stops the table with a sentence
that says what happened, and no verdict. The mesh stays with the game: `attach` hands it to the
game driver, and this object keeps answering the setup on every link that comes up (a peer
that lost its link, or crashed, before it saw every confirmation).
"""

from __future__ import annotations

import hmac
import secrets
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
from protocol.identity import Identity
from protocol.messages import LOBBY_EVENTS, GameStart, Message, MessageError
from protocol.peer_messages import TableCommit, TableConfirm, TableRefusal, TableReveal
from protocol.table import (
    CHECK_CODE,
    CONTRIBUTION_BYTES,
    MIN_PROOF_ROUNDS,
    AgreedTable,
    RoomTerms,
    below_the_floor,
    commitment,
    game_identity,
    proof_strength,
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
REFUSAL_GRACE = 2.0  # seconds a refusing client keeps its links up for the others to hear why


class TableRefused(Exception):
    """The table will not start; the text says why, for a person. Nobody is blamed."""


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
        known_players: RememberedKeys | None = None,
        agreed: AgreedTable | None = None,
        mesh_options: dict[str, Any] | None = None,
    ) -> None:
        self.reactor = reactor
        self.roster = roster
        self.seat = seat
        self.players = len(roster.seats)
        self.names = tuple(member.name for member in roster.seats)
        self.terms = terms
        self.allow_weak_proofs = allow_weak_proofs
        self.deadline = deadline
        self.known_players = known_players
        self.mesh = Mesh(reactor, identity, roster, seat, self, listener, **(mesh_options or {}))
        self.done: Deferred[AgreedTable] = Deferred()
        self.game: MeshHandler | None = None
        self.warnings: list[str] = []  # players whose key changed since the last game
        contribution = secrets.token_bytes(CONTRIBUTION_BYTES)
        self._contributions: dict[int, bytes] = {seat: contribution}
        self._commitments: dict[int, bytes] = {seat: commitment(roster, seat, contribution)}
        self._confirms: dict[int, bytes] = {}
        self._differences: dict[int, list[str]] = {}  # seat: how its roster differs
        self._rosters: dict[int, GameStart] = {}  # the roster each seat said it got
        self._link_problems: dict[int, str] = {}  # the last, by seat
        self._identity: bytes | None = None
        self._refusal: str | None = None
        self._early: list[tuple[int, Message]] = []
        self._timer: Any = None
        self.agreed = agreed
        if agreed is not None:  # resumed from the game file: answer the setup, nothing more
            self._contributions = dict(enumerate(agreed.contributions))
            self._commitments = {
                s: commitment(roster, s, c) for s, c in enumerate(agreed.contributions)
            }
            self._identity = agreed.identity

    # --- starting, and handing over --------------------------------------------------------

    def start(self) -> Deferred[AgreedTable]:
        """Check the roster here, then agree on it with the others; fires with the agreed
        table, or fails with TableRefused."""
        problem = self._local_problem()
        if problem is not None:
            self._refuse(problem, tell_others=True)
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

    def _local_problem(self) -> str | None:
        """Why this client refuses the roster by itself, before any link."""
        problems = []
        keys = [member.public_key for member in self.roster.seats]
        if len(set(keys)) < len(keys):
            problems.append("the roster gives two seats the same key")
        if self.terms is not None:
            problems += term_differences(self.terms, self.roster)
        floor = below_the_floor(self.roster.options.proof_rounds, self.allow_weak_proofs)
        if floor is not None:
            problems.append(floor)
        if not problems:
            return None
        return "This client refuses the game: " + ". Also, ".join(problems) + "."

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
            if self.agreed is None:
                self._refuse(f"{self.names[seat]} will not play this table: {message.reason}")
        elif self.game is not None:
            self.game.received(seat, message)
        elif len(self._early) < MAX_EARLY_MESSAGES:
            self._early.append((seat, message))  # the game starts in a moment; else resent

    def _mine(self) -> list[Message]:
        """What this seat has said in the setup so far, to say again on a new link."""
        if self._refusal is not None:
            return [TableRefusal(self._refusal[:300])]
        said: list[Message] = [TableCommit(roster_bytes(self.roster), self._commitments[self.seat])]
        if len(self._commitments) == self.players:
            said.append(TableReveal(self._contributions[self.seat]))
        if self._identity is not None:
            said.append(TableConfirm(self._identity))
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
            # Said once this seat knows its own table code too, so that the message can say it.
            self._differences[seat] = roster_differences(self.roster, theirs)
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
        self._identity = game_identity(self.roster, ordered)
        self._confirms[self.seat] = self._identity
        self.mesh.broadcast(TableConfirm(self._identity))
        self._maybe_agree()

    def _confirm(self, seat: int, confirm: TableConfirm) -> None:
        if self.agreed is not None or self._refusal is not None:
            return
        self._confirms[seat] = confirm.identity
        self._maybe_agree()

    def _maybe_agree(self) -> None:
        if self._identity is None:
            return
        code = f"Your table code was {table_code(self._identity)}; theirs differ"
        if self._differences:
            said = "; ".join(
                f"in {self.names[seat]}'s roster, " + ("; ".join(found) or "something else")
                for seat, found in sorted(self._differences.items())
            )
            self._refuse(
                f"the lobby gave the players different rosters: {said}. {code}, since "
                "their roster differs"
            )
            return
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

    def _refuse(self, reason: str, tell_others: bool = False) -> None:
        """Stop the setup: say why to the peers connected now, and fail `done`. No cards were
        dealt and nobody is blamed."""
        if self._refusal is not None or self.agreed is not None:
            return
        self._refusal = reason
        self._cancel_timer()
        log.info("the table will not start: {reason}", reason=reason)
        self.mesh.broadcast(TableRefusal(reason[:300]))
        if tell_others:  # refused before any link: dial the others just to say why
            self.mesh.start()
            self.reactor.callLater(REFUSAL_GRACE, self._fail_done)
        else:
            self._fail_done()

    def _fail_done(self) -> None:
        assert self._refusal is not None
        self.mesh.close().addBoth(lambda _: self.done.errback(TableRefused(self._refusal)))

    def _cancel_timer(self) -> None:
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self._timer = None


def table_lines(agreed: AgreedTable, warnings: list[str]) -> list[str]:
    """What every player is told as the table starts."""
    lines = [f"Table code: {agreed.code}. {CHECK_CODE}"]
    rounds = agreed.roster.options.proof_rounds
    if rounds < MIN_PROOF_ROUNDS:
        lines.append(f"Weak proofs at this table: {proof_strength(rounds)}.")
    lines += [f"WARNING: {warning}" for warning in warnings]
    return lines
