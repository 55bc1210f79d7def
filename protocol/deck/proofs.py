"""The deck's proofs, and its bulk group work spread over an optional executor.

Shuffle proof (interactive cut-and-choose). The statement: D_out = π(K·D_in) for some
permutation π, with K the discrete log of the prover's PK = K·G; G is an extra, unpermuted deck
element, which ties every slot to the one published key. For each proof round r the prover
commits to a shadow S_r = σ_r(t_r·D_in) and T_r = t_r·G by hash. After the commitments are
public, the other players reveal coin shares they committed to earlier; the challenge bits come
from a hash of the whole statement, the context and the shares. Bit 0: the prover reveals
(t_r, σ_r) and the shadow is recomputed from D_in. Bit 1: it reveals (u_r = K·t_r⁻¹,
ρ_r = σ_r⁻¹∘π), and the shadow is recomputed from the output as S_r[ρ_r[j]] = u_r⁻¹·D_out[j],
T_r = u_r⁻¹·PK. A prover that can answer both bits of one round knows a valid shuffle, so a
cheat survives with probability 2^-rounds; each round reveals only one of t_r, K·t_r⁻¹.

Relock proof (Chaum–Pedersen DLEQ, Fiat–Shamir over the full statement and context): for each
slot, log_PK(Y) = log_C(C′) = k·K⁻¹, i.e. the relocker removed exactly its global key and put
the slot key whose public lock is Y.

Verification never trusts the prover: every shadow is rebuilt from public data and compared
with its commitment; every permutation is checked to be one.
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
    """The index of the first point that is not in the prime-order subgroup, if any."""
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


# Hashes ----------------------------------------------------------------------------------------


def points_digest(points: Sequence[bytes]) -> bytes:
    """A digest of a sequence of fixed-size points (the count is bound by the context)."""
    return hashlib.sha256(encode_label("points", len(points), b"".join(points))).digest()


def shuffle_context(
    game_id: bytes, players: int, proof_rounds: int, epoch: int, prover: int, size: int
) -> bytes:
    """Everything a shuffle proof is about besides its decks: no replay elsewhere (P11)."""
    return encode_label(
        VERSION, "shuffle proof", game_id, players, proof_rounds, epoch, prover, size
    )


def shuffle_statement(
    deck_in: Sequence[bytes], deck_out: Sequence[bytes], public_key: bytes
) -> bytes:
    return hashlib.sha256(
        encode_label(
            "shuffle statement", points_digest(deck_in), points_digest(deck_out), public_key
        )
    ).digest()


def shadow_commitment(
    context: bytes, proof_round: int, base: bytes, shadow: Sequence[bytes]
) -> bytes:
    label = encode_label("shadow", context, proof_round, base, b"".join(shadow))
    return hashlib.sha256(label).digest()


def challenge_bits(
    context: bytes, statement: bytes, commitments: Sequence[bytes], shares: Sequence[bytes]
) -> tuple[int, ...]:
    """One bit per proof round from the statement, the commitments and every coin share."""
    digest = hashlib.sha256(
        encode_label("challenge", context, statement, b"".join(commitments), *shares)
    ).digest()
    stream = hashlib.shake_256(digest).digest((len(commitments) + 7) // 8)
    return tuple((stream[r // 8] >> (r % 8)) & 1 for r in range(len(commitments)))


# Shuffle proof ---------------------------------------------------------------------------------


def shadow_commitments(
    group: Group,
    context: bytes,
    deck_in: Sequence[bytes],
    shadows: Sequence[tuple[int, Scalar, Sequence[int]]],
    offset: int,
) -> list[bytes]:
    """Commitments to the shadows (proof round, t, σ): S[j] = t·D_in[σ[j]], T = t·G."""
    out = []
    for proof_round, key, perm in shadows:
        shadow = [group.mul(key, deck_in[i]) for i in perm]
        out.append(shadow_commitment(context, proof_round, group.mul_base(key), shadow))
    return out


def answer_round(
    group: Group,
    bit: int,
    shuffle_key: Scalar,
    shuffle_perm: Sequence[int],
    shadow_key: Scalar,
    shadow_perm: Sequence[int],
) -> tuple[Scalar, bytes]:
    """The answer to one challenge bit: (t, σ) for 0, (K·t⁻¹, σ⁻¹∘π) for 1."""
    if bit == 0:
        return shadow_key, bytes(shadow_perm)
    inverse = [0] * len(shadow_perm)
    for position, index in enumerate(shadow_perm):
        inverse[index] = position
    link = bytes(inverse[index] for index in shuffle_perm)
    return group.scalar_mul(shuffle_key, group.scalar_invert(shadow_key)), link


def _as_permutation(data: bytes, size: int) -> list[int] | None:
    perm = list(data)
    if len(perm) != size or sorted(perm) != list(range(size)):
        return None
    return perm


def check_shadow_rounds(
    group: Group,
    context: bytes,
    deck_in: Sequence[bytes],
    deck_out: Sequence[bytes],
    public_key: bytes,
    rounds: Sequence[tuple[int, bytes, int, bytes, bytes]],
    offset: int,
) -> tuple[int, str] | None:
    """Check answered rounds (round, commitment, bit, scalar, permutation) against public data.

    `deck_in`, `deck_out` and `public_key` must already be validated. Returns the first failing
    round and why, or None.
    """
    size = len(deck_in)
    for proof_round, commitment, bit, scalar_bytes, perm_bytes in rounds:
        try:
            scalar = group.decode_scalar(scalar_bytes)
        except InvalidScalar as error:
            return proof_round, f"answer scalar: {error}"
        perm = _as_permutation(perm_bytes, size)
        if perm is None:
            return proof_round, "the answer's permutation is not a permutation of the deck"
        if bit == 0:
            shadow: list[bytes] = [group.mul(scalar, deck_in[i]) for i in perm]
            base = group.mul_base(scalar)
        else:
            inverse = group.scalar_invert(scalar)
            rebuilt: list[bytes] = [b""] * size
            for j, target in enumerate(perm):
                rebuilt[target] = group.mul(inverse, deck_out[j])
            shadow, base = rebuilt, group.mul(inverse, public_key)
        if shadow_commitment(context, proof_round, base, shadow) != commitment:
            side = "input" if bit == 0 else "output and PK"
            return proof_round, f"the shadow rebuilt from the {side} does not match its commitment"
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
