"""Secrets and randomness derived deterministically from a seed.

Every secret a player uses (shuffle permutations, lock keys, proof witnesses) comes from one
committed seed, so that the audit can derive it again; simulations use the same streams so that
one seed replays a whole game. Seeds themselves come from `secrets.token_bytes`, never `random`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TypeVar

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

T = TypeVar("T")

SALT = b"bohnanza-p2p kdf v1"
Label = str | int | bytes


def encode_label(*parts: Label) -> bytes:
    """An unambiguous byte string for a tuple of labels (type tag and length before each part)."""
    out = bytearray()
    for part in parts:
        if isinstance(part, bool):
            raise TypeError("labels are str, int or bytes, not bool")
        if isinstance(part, int):
            if part < 0:
                raise ValueError("integer labels are non-negative")
            tag, data = b"i", part.to_bytes((part.bit_length() + 7) // 8 or 1, "big")
        elif isinstance(part, str):
            tag, data = b"s", part.encode()
        elif isinstance(part, bytes):
            tag, data = b"b", part
        else:
            raise TypeError(f"a label part must be str, int or bytes, not {type(part).__name__}")
        out += tag + len(data).to_bytes(4, "big") + data
    return bytes(out)


def derive(seed: bytes, *parts: Label, length: int = 32) -> bytes:
    """HKDF-SHA256 of the seed, labelled by `parts` (game, epoch, purpose, position, ...)."""
    if len(seed) < 16:
        raise ValueError("a seed needs at least 16 bytes")
    hkdf = HKDF(algorithm=hashes.SHA256(), length=length, salt=SALT, info=encode_label(*parts))
    return hkdf.derive(seed)


class Stream:
    """An unbounded pseudo-random byte stream (keyed BLAKE2b in counter mode) for one label.

    Gives unbiased integers and Fisher–Yates shuffles, so that permutations derived from a
    seed are uniform (CRYPTO.md P8).
    """

    def __init__(self, seed: bytes, *parts: Label) -> None:
        self._key = derive(seed, "stream", *parts)
        self._counter = 0
        self._buffer = b""

    def read(self, n: int) -> bytes:
        while len(self._buffer) < n:
            block = hashlib.blake2b(
                self._counter.to_bytes(8, "big"), key=self._key, digest_size=64
            ).digest()
            self._counter += 1
            self._buffer += block
        out, self._buffer = self._buffer[:n], self._buffer[n:]
        return out

    def randbelow(self, n: int) -> int:
        """A uniform integer in [0, n), by rejection sampling (no modulo bias)."""
        if n <= 0:
            raise ValueError("randbelow needs a positive bound")
        if n == 1:
            return 0
        bits = (n - 1).bit_length()
        nbytes = (bits + 7) // 8
        mask = (1 << bits) - 1
        while True:
            value = int.from_bytes(self.read(nbytes), "big") & mask
            if value < n:
                return value

    def choice(self, items: Sequence[T]) -> T:
        if not items:
            raise IndexError("cannot choose from an empty sequence")
        return items[self.randbelow(len(items))]

    def chance(self, numerator: int, denominator: int) -> bool:
        """True with probability numerator/denominator."""
        return self.randbelow(denominator) < numerator

    def permutation(self, n: int) -> list[int]:
        """A uniform permutation of range(n) (Fisher–Yates)."""
        perm = list(range(n))
        for i in range(n - 1, 0, -1):
            j = self.randbelow(i + 1)
            perm[i], perm[j] = perm[j], perm[i]
        return perm

    def shuffled(self, items: Sequence[T]) -> list[T]:
        return [items[i] for i in self.permutation(len(items))]
