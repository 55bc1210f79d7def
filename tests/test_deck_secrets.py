"""Every secret derives from the seed, separately per (game, epoch, purpose, position), and
nothing secret shows in a repr or an error."""

import itertools
from collections import Counter

import protocol.deck.secrets as deck_secrets
from protocol.deck import RISTRETTO255
from protocol.deck.secrets import SeatSecrets, seed_commitment
from tests.deck_harness import Blamed, Table, flip, rewrite_kind, slot_key

SEED = bytes(range(32))
GAME = b"secrets test gm!"


def secrets_for(game: bytes = GAME, seat: int = 1, seed: bytes = SEED) -> SeatSecrets:
    return SeatSecrets(RISTRETTO255, game, seat, seed)


def test_every_purpose_position_and_epoch_gets_its_own_key():
    mine = secrets_for()
    keys = [mine.shuffle_key(epoch) for epoch in range(3)]
    keys += [mine.slot_key(epoch, slot) for epoch, slot in itertools.product(range(3), range(40))]
    keys += [mine.dleq_nonce(0, slot, b"statement") for slot in range(10)]
    assert len(set(keys)) == len(keys)
    assert secrets_for(game=b"another game id!").slot_key(0, 0) != mine.slot_key(0, 0)
    assert secrets_for(seed=flip(SEED)).slot_key(0, 0) != mine.slot_key(0, 0)
    assert mine.slot_key(0, 0) == secrets_for().slot_key(0, 0)  # the audit derives it again


def test_dleq_nonces_are_bound_to_their_statement():
    mine = secrets_for()
    assert mine.dleq_nonce(0, 3, b"one statement") != mine.dleq_nonce(0, 3, b"another")


def test_the_shuffle_argument_secret_is_its_own_per_epoch_and_seat():
    mine = secrets_for()
    secrets = {mine.shuffle_argument_secret(epoch) for epoch in range(3)}
    secrets.add(secrets_for(seat=2).shuffle_argument_secret(0))
    secrets.add(mine.shuffle_key(0))
    secrets.add(mine.slot_key(0, 0))
    assert len(secrets) == 5


def test_a_derived_scalar_that_reduces_to_zero_is_replaced(monkeypatch):
    # P5: "reject zero". Force the first attempt to reduce to zero; the next one is used.
    real_derive = deck_secrets.derive
    attempts = []

    def derive(seed, *labels, length=32):
        attempts.append(labels[-1])
        if labels[-1] == 0:
            return bytes(length)
        return real_derive(seed, *labels, length=length)

    monkeypatch.setattr(deck_secrets, "derive", derive)
    key = secrets_for().slot_key(0, 0)
    assert attempts == [0, 1]
    assert int.from_bytes(key, "little") != 0


def test_commitments_bind_the_game_and_the_seat():
    assert seed_commitment(GAME, 1, SEED) != seed_commitment(GAME, 2, SEED)
    assert seed_commitment(GAME, 1, SEED) != seed_commitment(b"another game id!", 1, SEED)


def test_shuffle_permutations_are_uniform_over_seeds():
    # P8: the Fisher–Yates shuffle from the seed's stream; 3! outcomes over 3000 seeds.
    counts = Counter(
        tuple(secrets_for(seed=seed.to_bytes(32, "big")).shuffle_permutation(0, 3))
        for seed in range(3000)
    )
    assert len(counts) == 6
    assert sum((c - 500) ** 2 / 500 for c in counts.values()) < 20.5  # 0.999 quantile, 5 df


def secret_texts(table: Table) -> list[str]:
    texts = []
    for player in table.players:
        for secret in [player.reveal_seed().seed, *(slot_key(player, 0, s) for s in range(10))]:
            texts += [secret.hex(), repr(secret)[2:-1]]
    return texts


def test_no_repr_or_error_shows_a_seed_or_key():
    table = Table(3, label="no secrets")
    table.run_epoch(0, range(10))
    table.tamper[0] = rewrite_kind(
        "deck.keys", lambda obj: obj["keys"].__setitem__(0, flip(obj["keys"][0]))
    )
    try:
        table.draw(0, [0], to=1)
    except Blamed as blamed:
        errors = list(blamed.errors.values())
    else:
        raise AssertionError("the wrong key was accepted")
    shown = [repr(player) for player in table.players]
    shown += [
        repr(player.public) + repr(player.public.epoch(0)) + repr(player._secrets)
        for player in table.players
    ]
    shown += [repr(player._epochs[0]) for player in table.players]
    shown += [str(error) + repr(error) for error in errors]
    shown += [repr(message) for _, message in table.transcript]
    for text in shown:
        for secret in secret_texts(table):
            assert secret not in text
