"""The deck's parameters and the fixed, public round schedule of an epoch.

The lockstep advances in numbered steps in which every seat sends exactly one message. An epoch
is `epoch_rounds(players)` = 2k + 1 such rounds (k players, seats 0..k-1, k >= 3):

    round 0          every seat: commit (seed commitment, card-set digest)
    round 1 + i      seat i: shuffle (its output deck π_i(K_i·D) and PK_i = K_i·G)
    round k + 1 + j  seat j: relock (deck with per-slot keys, Y_j, [proofs] a DLEQ per slot);
                     [proofs] seat j - 1: the argument for its shuffle (seat k - 1 sends its
                     own in the last round, 2k, with its relock)

The shuffle argument is non-interactive, and the deck and PK it proves are fixed (and signed)
in the shuffle round, so it need not travel with them: a shuffler passes its deck on at once
and proves on its executor meanwhile. Proving (about 5n multiplications) takes longer than
the other shufflers' rounds, which only lock and permute, so the argument comes k + 1 rounds
later, when even the first shuffler has it ready: no seat's proving holds up the deck. Each
seat checks the others' proofs on its executor while the deck goes on, and settles them all in
the epoch's last round (every seat at the same round); nothing is opened before.
The relocks need the last shuffle's deck, so the schedule cannot be shorter than 2k + 1.
"""

from __future__ import annotations

from dataclasses import dataclass

from .messages import MAX_PLAYERS

MIN_PLAYERS = 3


@dataclass(frozen=True)
class DeckConfig:
    """What every seat must agree on before the first epoch."""

    game_id: bytes
    players: int
    proofs: bool = True

    def __post_init__(self) -> None:
        if not 16 <= len(self.game_id) <= 64:
            raise ValueError("a game id is 16 to 64 bytes")
        if not MIN_PLAYERS <= self.players <= MAX_PLAYERS:
            raise ValueError(f"the deck needs {MIN_PLAYERS} to {MAX_PLAYERS} players")

    @property
    def rounds(self) -> int:
        """Rounds per epoch."""
        return epoch_rounds(self.players)


def epoch_rounds(players: int) -> int:
    """How many lockstep rounds one epoch takes, with or without proofs."""
    return 2 * players + 1


def shuffle_round(seat: int) -> int:
    return 1 + seat


def relock_round(players: int, seat: int) -> int:
    return players + 1 + seat


def argument_round(players: int, seat: int) -> int:
    """With the next seat's relock (the last shuffler's with its own, in the last round)."""
    return min(relock_round(players, seat) + 1, 2 * players)


def parts_due(config: DeckConfig, round_: int, seat: int) -> tuple[str, ...]:
    """The part names `seat` must send in `round_`, in canonical order (empty: send None)."""
    k = config.players
    due = []
    if round_ == 0:
        due.append("commit")
    if round_ == shuffle_round(seat):
        due.append("shuffle")
    if round_ == relock_round(k, seat):
        due.append("relock")
    if config.proofs and round_ == argument_round(k, seat):
        due.append("argument")
    return tuple(due)
