"""The deck's proofs on their own: complete, sound on the cheats that matter, bound to context."""

from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.deck.group import ED25519, ED25519_ORDER, Point, Scalar
from protocol.deck.proofs import (
    answer_round,
    challenge_bits,
    check_dleq_slots,
    check_shadow_rounds,
    dleq_statement,
    prove_dleq_slots,
    relock_context,
    shadow_commitments,
    shuffle_context,
    shuffle_statement,
)
from protocol.deck.public import card_point
from protocol.kdf import Stream

GAME = b"proof test game!"
G = ED25519


def scalar_from(stream: Stream) -> Scalar:
    return G.scalar_from_wide(stream.read(64))


@dataclass
class ShuffleProof:
    context: bytes
    deck_in: list[Point]
    deck_out: list[Point]
    public_key: Point
    commitments: list[bytes]
    shares: list[bytes]
    key: Scalar
    perm: list[int]
    shadows: list[tuple[int, Scalar, list[int]]]

    def bits(self, context: bytes | None = None) -> tuple[int, ...]:
        context = self.context if context is None else context
        statement = shuffle_statement(self.deck_in, self.deck_out, self.public_key)
        return challenge_bits(context, statement, self.commitments, self.shares)

    def answers(self, bits: tuple[int, ...]) -> list[tuple[bytes, bytes]]:
        return [
            answer_round(G, bit, self.key, self.perm, key, perm)
            for bit, (_, key, perm) in zip(bits, self.shadows, strict=True)
        ]

    def check(self, bits, answers, context=None, deck_out=None, public_key=None):
        rounds = [
            (r, self.commitments[r], bit, scalar, perm)
            for r, (bit, (scalar, perm)) in enumerate(zip(bits, answers, strict=True))
        ]
        return check_shadow_rounds(
            G,
            self.context if context is None else context,
            self.deck_in,
            self.deck_out if deck_out is None else deck_out,
            self.public_key if public_key is None else public_key,
            rounds,
            0,
        )


def make_proof(label: str, size: int = 6, rounds: int = 16, deck_out=None) -> ShuffleProof:
    stream = Stream(bytes(32), "proof test", label)
    context = shuffle_context(GAME, 3, rounds, 0, 1, size)
    deck_in = [card_point(G, GAME, card) for card in range(size)]
    key = scalar_from(stream)
    perm = stream.permutation(size)
    honest_out = [G.mul(key, deck_in[i]) for i in perm]
    shadows = [(r, scalar_from(stream), stream.permutation(size)) for r in range(rounds)]
    return ShuffleProof(
        context=context,
        deck_in=deck_in,
        deck_out=honest_out if deck_out is None else deck_out(honest_out, key),
        public_key=G.mul_base(key),
        commitments=shadow_commitments(G, context, deck_in, shadows, 0),
        shares=[stream.read(32), stream.read(32)],
        key=key,
        perm=perm,
        shadows=shadows,
    )


@settings(max_examples=15)
@given(st.text(max_size=8), st.integers(2, 10))
def test_an_honest_shuffle_proof_verifies(label, size):
    proof = make_proof(label, size)
    bits = proof.bits()
    assert proof.check(bits, proof.answers(bits)) is None


def single_round_results(proof: ShuffleProof, bits, answers, **changes) -> list[bool]:
    """Whether each round passes on its own (the round index is part of the commitment)."""
    results = []
    for r, bit in enumerate(bits):
        rounds = [(r, proof.commitments[r], bit, answers[r][0], answers[r][1])]
        results.append(
            check_shadow_rounds(
                G,
                changes.get("context", proof.context),
                proof.deck_in,
                changes.get("deck_out", proof.deck_out),
                changes.get("public_key", proof.public_key),
                rounds,
                0,
            )
            is None
        )
    return results


def test_one_slot_under_another_key_fails_exactly_the_rounds_that_link_to_the_output():
    def resealed(deck, key):
        other = G.scalar_mul(key, G.scalar_from_wide(bytes([7]) * 64))
        out = list(deck)
        out[2] = G.mul(G.scalar_mul(other, G.scalar_invert(key)), deck[2])
        return out

    proof = make_proof("one slot", deck_out=resealed)
    bits = proof.bits()
    passed = single_round_results(proof, bits, proof.answers(bits))
    assert 1 in bits and 0 in bits
    assert passed == [bit == 0 for bit in bits]
    assert proof.check(bits, proof.answers(bits)) is not None


def test_a_public_key_unrelated_to_the_deck_key_fails_every_linking_round():
    proof = make_proof("pk")
    bits = proof.bits()
    stranger = G.mul_base(G.scalar_from_wide(bytes([9]) * 64))
    passed = single_round_results(proof, bits, proof.answers(bits), public_key=stranger)
    assert passed == [bit == 0 for bit in bits]


def test_an_answer_whose_permutation_repeats_an_index_is_refused_as_such():
    proof = make_proof("repeat")
    bits = proof.bits()
    answers = proof.answers(bits)
    scalar, perm = answers[0]
    answers[0] = (scalar, bytes([perm[1]]) + perm[1:])
    failure = proof.check(bits, answers)
    assert failure == (0, "the answer's permutation is not a permutation of the deck")


@pytest.mark.parametrize("bad", [0, ED25519_ORDER, ED25519_ORDER + 5, 5 | 1 << 255])
def test_an_answer_scalar_that_is_zero_or_unreduced_is_refused(bad):
    proof = make_proof("scalar")
    bits = proof.bits()
    answers = proof.answers(bits)
    answers[3] = ((bad % 2**256).to_bytes(32, "little"), answers[3][1])
    failure = proof.check(bits, answers)
    assert failure is not None and failure[0] == 3 and "scalar" in failure[1]


@pytest.mark.parametrize("field", ["game", "players", "rounds", "epoch", "prover", "size"])
def test_a_proof_does_not_verify_in_any_other_context(field):
    # P11: a proof replayed in another game, epoch, player or position fails, even if the
    # replayer could make the challenge bits come out the same.
    proof = make_proof("replay")
    args = {"game": GAME, "players": 3, "rounds": 16, "epoch": 0, "prover": 1, "size": 6}
    args[field] = b"other game id!!!" if field == "game" else args[field] + 1
    elsewhere = shuffle_context(
        args["game"], args["players"], args["rounds"], args["epoch"], args["prover"], args["size"]
    )
    bits = proof.bits()
    answers = proof.answers(bits)
    assert proof.check(bits, answers) is None
    assert not any(single_round_results(proof, bits, answers, context=elsewhere))
    assert proof.bits(elsewhere) != bits


def test_challenge_bits_depend_on_every_coin_share_and_commitment():
    proof = make_proof("coins", rounds=64)
    statement = shuffle_statement(proof.deck_in, proof.deck_out, proof.public_key)
    bits = challenge_bits(proof.context, statement, proof.commitments, proof.shares)
    for index in range(len(proof.shares)):
        shares = list(proof.shares)
        shares[index] = bytes(32)
        assert challenge_bits(proof.context, statement, proof.commitments, shares) != bits
    commitments = list(proof.commitments)
    commitments[-1] = bytes(32)
    assert challenge_bits(proof.context, statement, commitments, proof.shares) != bits


# DLEQ -----------------------------------------------------------------------------------------

RELOCK = relock_context(GAME, 3, 0, 2)


def dleq_case(stream: Stream, slot: int = 4):
    global_key, slot_key = scalar_from(stream), scalar_from(stream)
    public_key = G.mul_base(global_key)
    locked = G.mul(global_key, card_point(G, GAME, slot))
    witness = G.scalar_mul(slot_key, G.scalar_invert(global_key))
    lock, relocked = G.mul_base(slot_key), G.mul(witness, locked)
    statement = dleq_statement(RELOCK, slot, public_key, locked, lock, relocked)
    nonce = scalar_from(stream)
    (proof,) = prove_dleq_slots(G, public_key, [(statement, witness, locked, nonce)], 0)
    return public_key, (slot, locked, lock, relocked, proof)


@settings(max_examples=25)
@given(st.binary(min_size=32, max_size=32))
def test_dleq_proofs_are_complete(seed):
    public_key, case = dleq_case(Stream(seed, "dleq"))
    assert check_dleq_slots(G, RELOCK, public_key, [case], 0) is None


def test_dleq_refuses_a_relock_that_kept_the_global_key():
    public_key, (slot, locked, lock, _, proof) = dleq_case(Stream(bytes(32), "kept"))
    slot_key = G.scalar_from_wide(bytes([1]) * 64)
    kept = G.mul(slot_key, locked)  # k·C instead of (k/K)·C
    assert check_dleq_slots(G, RELOCK, public_key, [(slot, locked, lock, kept, proof)], 0) == slot


@pytest.mark.parametrize("where", ["context", "slot"])
def test_dleq_proofs_do_not_verify_in_another_context_or_slot(where):
    public_key, (slot, locked, lock, relocked, proof) = dleq_case(Stream(bytes(32), "moved"))
    context = relock_context(GAME, 3, 1, 2) if where == "context" else RELOCK
    moved = slot + 1 if where == "slot" else slot
    case = (moved, locked, lock, relocked, proof)
    assert check_dleq_slots(G, context, public_key, [case], 0) == moved


@pytest.mark.parametrize("half", ["challenge", "response"])
def test_dleq_refuses_unreduced_scalars_in_the_proof(half):
    public_key, (slot, locked, lock, relocked, proof) = dleq_case(Stream(bytes(32), "unreduced"))
    c, z = int.from_bytes(proof[:32], "little"), int.from_bytes(proof[32:], "little")
    if half == "challenge":
        c += ED25519_ORDER
    else:
        z += ED25519_ORDER
    bad = c.to_bytes(32, "little") + z.to_bytes(32, "little")
    assert check_dleq_slots(G, RELOCK, public_key, [(slot, locked, lock, relocked, bad)], 0) == slot
