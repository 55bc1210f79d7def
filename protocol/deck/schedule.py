"""The deck's parameters and the fixed, public round schedule of an epoch.

The lockstep advances in numbered steps in which every seat sends exactly one message. An epoch
is `epoch_rounds(players)` = 2k + 1 such rounds (k players, seats 0..k-1, k >= 3):

    round 0          every seat: commit (seed commitment, card-set digest, coin commitments)
    round 1 + i      seat i: shuffle (its output deck π_i(K_i·D), PK_i = K_i·G)
    round k + 1      every seat: shadows (its shuffle proof's commitments)          [proofs]
    round k + 2      every seat: coins (its shares for every other prover)          [proofs]
    round k + 3      every seat: answers (to its challenge)                         [proofs]
    round k + 1 + j  seat j: relock (deck with per-slot keys, Y_j, a DLEQ per slot)

The shuffle chain carries no proof work, so each shuffler passes the deck on after n
multiplications; the heavy proof work (shadows, then verifying every other prover) is done by
all seats at once in rounds k+1 and k+3, while the light relock chain runs alongside. Every
coin was committed in round 0 and is revealed only after every prover's shadows are public.
Nothing is opened before the whole epoch has been received and checked. The schedule has the
same length with proofs off; the proof parts are then simply not due.
"""

from __future__ import annotations

from dataclasses import dataclass

from .messages import MAX_PLAYERS, MAX_PROOF_ROUNDS

MIN_PLAYERS = 3  # the proof rounds k+1..k+3 must fit beside the relock chain
DEFAULT_PROOF_ROUNDS = 40


@dataclass(frozen=True)
class DeckConfig:
    """What every seat must agree on before the first epoch."""

    game_id: bytes
    players: int
    proofs: bool = True
    proof_rounds: int = DEFAULT_PROOF_ROUNDS

    def __post_init__(self) -> None:
        if not 16 <= len(self.game_id) <= 64:
            raise ValueError("a game id is 16 to 64 bytes")
        if not MIN_PLAYERS <= self.players <= MAX_PLAYERS:
            raise ValueError(f"the deck needs {MIN_PLAYERS} to {MAX_PLAYERS} players")
        if not 1 <= self.proof_rounds <= MAX_PROOF_ROUNDS:
            raise ValueError(f"proof rounds must be 1..{MAX_PROOF_ROUNDS}")

    @property
    def rounds(self) -> int:
        """Rounds per epoch."""
        return epoch_rounds(self.players, self.proofs)


def epoch_rounds(players: int, proofs: bool = True) -> int:
    """How many lockstep rounds one epoch takes; proofs add parts to rounds, never rounds."""
    return 2 * players + 1


def shuffle_round(seat: int) -> int:
    return 1 + seat


def relock_round(players: int, seat: int) -> int:
    return players + 1 + seat


def shadows_round(players: int) -> int:
    return players + 1


def coins_round(players: int) -> int:
    return players + 2


def answers_round(players: int) -> int:
    return players + 3


def parts_due(config: DeckConfig, round_: int, seat: int) -> tuple[str, ...]:
    """The part names `seat` must send in `round_`, in canonical order (empty: send None)."""
    k = config.players
    due = []
    if round_ == 0:
        due.append("commit")
    if round_ == shuffle_round(seat):
        due.append("shuffle")
    if config.proofs:
        proof_parts = {
            shadows_round(k): "shadows",
            coins_round(k): "coins",
            answers_round(k): "answers",
        }
        if round_ in proof_parts:
            due.append(proof_parts[round_])
    if round_ == relock_round(k, seat):
        due.append("relock")
    return tuple(due)
