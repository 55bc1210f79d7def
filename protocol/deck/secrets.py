"""Every secret a seat uses in the deck, derived from its one committed seed.

Labels are (protocol version, game, epoch, purpose, position...), so no two purposes or
positions share a secret (CRYPTO.md P9), and the audit derives exactly what the seat should have
used. Nonces of proofs (DLEQ nonces, the shuffle argument's) are also bound to the public statement
they are used for, so that a re-run on other inputs can never combine two answers into the key
they hide.
"""

from __future__ import annotations

import hashlib

from protocol.kdf import Label, Stream, derive, encode_label

from .group import Group, InvalidScalar, Scalar

VERSION = "bohnanza-p2p deck v2"  # v2: the shuffle argument replaced cut-and-choose
SEED_SIZE = 32


def seed_commitment(game_id: bytes, seat: int, seed: bytes) -> bytes:
    """H(ctx ‖ seed), ctx binding the protocol version, the game and the seat."""
    return hashlib.sha256(encode_label(VERSION, "seed commitment", game_id, seat, seed)).digest()


class SeatSecrets:
    """One seat's secrets for one game. Holds the seed; never put it in a repr or an error."""

    def __init__(self, group: Group, game_id: bytes, seat: int, seed: bytes) -> None:
        if len(seed) != SEED_SIZE:
            raise ValueError(f"a seed is {SEED_SIZE} bytes")
        self._group = group
        self._game_id = game_id
        self._seat = seat
        self._seed = seed

    def __repr__(self) -> str:
        return f"SeatSecrets(seat={self._seat})"

    @property
    def seed(self) -> bytes:
        return self._seed

    def commitment(self) -> bytes:
        return seed_commitment(self._game_id, self._seat, self._seed)

    def _labels(self, epoch: int, purpose: str, *position: Label) -> tuple[Label, ...]:
        return (VERSION, self._game_id, epoch, purpose, *position)

    def _scalar(self, epoch: int, purpose: str, *position: Label) -> Scalar:
        # A zero scalar is refused (P5); the next attempt is as uniform as the first.
        attempt = 0
        while True:
            wide = derive(self._seed, *self._labels(epoch, purpose, *position, attempt), length=64)
            try:
                return self._group.scalar_from_wide(wide)
            except InvalidScalar:
                attempt += 1

    def shuffle_key(self, epoch: int) -> Scalar:
        return self._scalar(epoch, "shuffle key")

    def shuffle_permutation(self, epoch: int, size: int) -> list[int]:
        return Stream(self._seed, *self._labels(epoch, "shuffle permutation", size)).permutation(
            size
        )

    def slot_key(self, epoch: int, slot: int) -> Scalar:
        return self._scalar(epoch, "slot key", slot)

    def dleq_nonce(self, epoch: int, slot: int, statement: bytes) -> Scalar:
        return self._scalar(epoch, "dleq nonce", slot, statement)

    def shuffle_argument_secret(self, epoch: int) -> bytes:
        """The key the shuffle argument's nonces come from (it adds the statement's hash)."""
        return derive(self._seed, *self._labels(epoch, "shuffle argument"))
