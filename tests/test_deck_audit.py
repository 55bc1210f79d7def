"""The audit's two forms: in full (a game file, judged by anyone) and quick (`checked_live`: a
seat at the end of its game, whose own checks passed every message of the transcript on
receipt). Both must reach the same verdict, finding for finding (Table.audit_both); the quick
one runs no public check again, and still catches every seat whose messages are not its seed's.
"""

import hashlib
from typing import Any

import pytest

from protocol.deck import DeckPlayer
from protocol.deck import public as deck_public
from protocol.deck.errors import ReplayMismatch
from protocol.deck.group import Scalar
from protocol.deck.secrets import SeatSecrets
from tests.deck_harness import Table

CARDS = tuple(range(12))


def play(table: Table) -> None:
    """Two epochs with every kind of open: draws to hands, face-up cards, played hand cards,
    a reshuffle of the discard pile. Raises Blamed if any live check refuses a message."""
    table.run_epoch(0, CARDS)
    table.draw(0, [0, 1], to=1)
    table.draw(0, [2], to=2)
    pile = table.reveal(0, [3, 4, 5])
    pile.append(table.play(0, 0, holder=1))
    table.draw(0, [6, 7], to=0)
    table.run_epoch(1, sorted(pile))
    table.draw(1, [0], to=2)
    table.reveal(1, [1])
    table.play(1, 0, holder=2)


@pytest.mark.parametrize("proofs", [True, False], ids=["proofs", "plain"])
def test_an_honest_game_passes_both_audits(proofs):
    table = Table(3, label=f"honest both {proofs}", proofs=proofs)
    play(table)
    assert table.audit_both() is None


class _Boom(Exception):
    pass


def test_the_quick_audit_runs_no_costly_public_check_again(monkeypatch):
    table = Table(3, label="no checks again")
    play(table)

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise _Boom

    for name in ("check_shuffle", "check_dleq_slots", "find_invalid"):
        monkeypatch.setattr(deck_public, name, boom)  # both proofs, validating points
    monkeypatch.setattr(deck_public.PublicDeck, "decode", boom)  # opening cards to all
    monkeypatch.setattr(deck_public.RISTRETTO255, "validate", boom)
    table.audit(checked_live=True)
    with pytest.raises(_Boom):  # the full audit does run them
        table.audit()


# One secret not from the seed -------------------------------------------------------------------


class OffSecrets(SeatSecrets):
    """A seat's secrets, except those at `targets` (purpose, epoch, position), which come from
    another seed: every message it sends is consistent and passes every public check, yet is
    not what its committed seed gives."""

    targets: frozenset[tuple[str, int, int]] = frozenset()

    def _source(self, purpose: str, epoch: int, position: int) -> SeatSecrets:
        if (purpose, epoch, position) in self.targets:
            other = hashlib.sha256(b"another seed" + self.seed).digest()
            return SeatSecrets(self._group, self._game_id, self._seat, other)
        return super()

    def shuffle_key(self, epoch: int) -> Scalar:
        return self._source("shuffle key", epoch, 0).shuffle_key(epoch)

    def shuffle_permutation(self, epoch: int, size: int) -> list[int]:
        return self._source("shuffle permutation", epoch, 0).shuffle_permutation(epoch, size)

    def shuffle_argument_secret(self, epoch: int) -> bytes:
        return self._source("shuffle argument", epoch, 0).shuffle_argument_secret(epoch)

    def slot_key(self, epoch: int, slot: int) -> Scalar:
        return self._source("slot key", epoch, slot).slot_key(epoch, slot)

    def dleq_nonce(self, epoch: int, slot: int, statement: bytes) -> Scalar:
        return self._source("dleq nonce", epoch, slot).dleq_nonce(epoch, slot, statement)


def off_table(
    label: str, seat: int, targets: set[tuple[str, int, int]], proofs: bool = True
) -> Table:
    def make(*args: Any, **kwargs: Any) -> DeckPlayer:
        player = DeckPlayer(*args, **kwargs)
        secrets = OffSecrets(player._group, player.config.game_id, seat, player._secrets.seed)
        secrets.targets = frozenset(targets)
        player._secrets = secrets
        return player

    table = Table(3, label=label, proofs=proofs, factories={seat: make})
    play(table)  # every live check passes
    return table


def caught_off_seed(table: Table, seat: int, epoch: int, part: str) -> None:
    """Both audits blame `seat`, first for a message of `epoch` whose `part` is not its seed's."""
    error = table.audit_both()
    assert error is not None and error.blame == seat, str(error)
    (finding,) = error.findings
    assert isinstance(finding, ReplayMismatch)
    assert finding.step.startswith(f"epoch {epoch} ") and f"in {part}" in finding.reason


# (purpose, seat, epoch, position, the part that reveals it, proofs)
OFF_SECRETS = [
    ("shuffle key", 0, 0, 0, "shuffle", True),
    ("shuffle permutation", 2, 1, 0, "shuffle", True),
    ("slot key", 1, 0, 11, "relock", True),  # a slot never opened
    ("slot key", 2, 1, 0, "relock", True),  # a slot opened, its key published
    ("dleq nonce", 0, 0, 3, "relock", True),
    ("shuffle argument", 1, 1, 0, "argument", True),  # a valid proof, but not the seed's
    ("shuffle key", 1, 0, 0, "shuffle", False),
    ("shuffle permutation", 0, 1, 0, "shuffle", False),
    ("slot key", 2, 0, 4, "relock", False),
]


@pytest.mark.parametrize(
    ("purpose", "seat", "epoch", "position", "part", "proofs"),
    OFF_SECRETS,
    ids=[f"{o[0]} seat {o[1]} epoch {o[2]}{'' if o[5] else ' plain'}" for o in OFF_SECRETS],
)
def test_a_secret_not_from_the_seed_passes_the_live_checks_but_not_either_audit(
    purpose, seat, epoch, position, part, proofs
):
    table = off_table(f"off {purpose} {seat} {epoch} {proofs}", seat, {(purpose, epoch, position)})
    caught_off_seed(table, seat, epoch, part)
