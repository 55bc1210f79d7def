"""The relock proof on its own: complete, sound on the cheats that matter, bound to context.
(The shuffle argument has its own tests: tests/test_deck_shuffle_argument.py.)"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.deck.group import GROUP_ORDER, RISTRETTO255, Scalar
from protocol.deck.proofs import check_dleq_slots, dleq_statement, prove_dleq_slots, relock_context
from protocol.deck.public import card_point
from protocol.kdf import Stream

GAME = b"proof test game!"
G = RISTRETTO255


def scalar_from(stream: Stream) -> Scalar:
    return G.scalar_from_wide(stream.read(64))


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
        c += GROUP_ORDER
    else:
        z += GROUP_ORDER
    bad = c.to_bytes(32, "little") + z.to_bytes(32, "little")
    assert check_dleq_slots(G, RELOCK, public_key, [(slot, locked, lock, relocked, bad)], 0) == slot
