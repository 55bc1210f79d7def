"""The deck's relock proof, and its bulk group work spread over an optional executor.

The shuffle proof is the shuffle argument of `shuffle_argument`.

Relock proof (Chaum–Pedersen DLEQ, Fiat–Shamir over the full statement and context): for each
slot, log_PK(Y) = log_C(C′) = k·K⁻¹, i.e. the relocker removed exactly its global key and put
the slot key whose public lock is Y.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from typing import TypeVar

from protocol.kdf import encode_label

from .group import Group, InvalidPoint, InvalidScalar, Point, Scalar
from .secrets import VERSION

Item = TypeVar("Item")
Result = TypeVar("Result")

PIECES = 4  # chunks per bulk job: balances two to four workers without much overhead


def spread(
    executor: Executor | None,
    work: Callable[..., Result],
    common: tuple[object, ...],
    items: Sequence[Item],
) -> list[Result]:
    """`work(*common, chunk, offset)` over consecutive chunks of `items`, results in order.

    Chunks are independent (rounds of a proof, slots of a deck), so they may run on any worker;
    without an executor everything runs here, in one chunk.
    """
    if executor is None or len(items) < 2:
        return [work(*common, items, 0)]
    size = -(-len(items) // PIECES)
    futures = [
        executor.submit(work, *common, items[start : start + size], start)
        for start in range(0, len(items), size)
    ]
    return [future.result() for future in futures]


# Bulk point work (module-level functions so that a process pool can run them) -----------------


def multiply_pairs(
    group: Group, pairs: Sequence[tuple[Scalar, bytes]], offset: int
) -> list[Point] | int:
    """Each scalar times its point, validating the point; or the index of the first bad point."""
    out = []
    for index, (scalar, point) in enumerate(pairs):
        try:
            out.append(group.mul(scalar, point))
        except InvalidPoint:
            return offset + index
    return out


def first_invalid(group: Group, points: Sequence[bytes], offset: int) -> int | None:
    """The index of the first point that is not an element of the group, if any."""
    for index, point in enumerate(points):
        try:
            group.validate(point)
        except InvalidPoint:
            return offset + index
    return None


def multiply_all(
    executor: Executor | None, group: Group, pairs: Sequence[tuple[Scalar, bytes]]
) -> list[Point] | int:
    """`multiply_pairs` over the executor: the products, or the first bad point's index."""
    products: list[Point] = []
    for chunk in spread(executor, multiply_pairs, (group,), pairs):
        if isinstance(chunk, int):
            return chunk
        products.extend(chunk)
    return products


def find_invalid(executor: Executor | None, group: Group, points: Sequence[bytes]) -> int | None:
    """`first_invalid` over the executor."""
    for bad in spread(executor, first_invalid, (group,), points):
        if bad is not None:
            return bad
    return None


# Relock proof (DLEQ) ---------------------------------------------------------------------------


def relock_context(game_id: bytes, players: int, epoch: int, relocker: int) -> bytes:
    return encode_label(VERSION, "relock proof", game_id, players, epoch, relocker)


def dleq_statement(
    context: bytes, slot: int, base_a: bytes, base_b: bytes, image_a: bytes, image_b: bytes
) -> bytes:
    """The digest of one DLEQ statement log_{base_a}(image_a) = log_{base_b}(image_b)."""
    label = encode_label("dleq statement", context, slot, base_a, base_b, image_a, image_b)
    return hashlib.sha256(label).digest()


def _dleq_challenge(group: Group, statement: bytes, commit_a: bytes, commit_b: bytes) -> Scalar:
    label = encode_label("dleq challenge", statement, commit_a, commit_b)
    return group.scalar_from_hash(hashlib.sha512(label).digest())


def prove_dleq_slots(
    group: Group,
    base_a: Point,
    slots: Sequence[tuple[bytes, Scalar, bytes, Scalar]],
    offset: int,
) -> list[bytes]:
    """Proofs for (statement digest, witness w, base_b, nonce r): c‖z with z = r + c·w."""
    proofs = []
    for statement, witness, base_b, nonce in slots:
        challenge = _dleq_challenge(
            group, statement, group.mul(nonce, base_a), group.mul(nonce, base_b)
        )
        response = group.scalar_add(nonce, group.scalar_mul(challenge, witness))
        proofs.append(challenge + response)
    return proofs


def check_dleq_slots(
    group: Group,
    context: bytes,
    base_a: Point,
    slots: Sequence[tuple[int, Point, Point, Point, bytes]],
    offset: int,
) -> int | None:
    """Check proofs for (slot, base_b, image_a, image_b, proof); all points validated.

    Returns the first slot whose proof fails, or None.
    """
    for slot, base_b, image_a, image_b, proof in slots:
        statement = dleq_statement(context, slot, base_a, base_b, image_a, image_b)
        try:
            challenge = group.decode_scalar(proof[:32])
            response = group.decode_scalar(proof[32:])
            commit_a = group.sub(group.mul(response, base_a), group.mul(challenge, image_a))
            commit_b = group.sub(group.mul(response, base_b), group.mul(challenge, image_b))
        except (InvalidScalar, InvalidPoint):
            return slot
        if _dleq_challenge(group, statement, commit_a, commit_b) != challenge:
            return slot
    return None
