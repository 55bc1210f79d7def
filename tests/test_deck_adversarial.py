"""CRYPTO.md "Adversarial tests": every cheat is detected, and blamed on the cheater.

Each test plays a small game on the in-memory table (tests/deck_harness.py), with one seat
cheating either in the wire messages it sends or in the code it runs, and asserts that every
honest seat refuses the cheat with a DeckError naming the cheater (or, where only the audit
can tell, that the audit names it). The shuffle argument makes a false shuffle pass with
probability about 2^-125, so every detection here is certain in practice.
"""

from typing import Any

import pytest
import rbcl

from protocol.deck import Opening
from protocol.deck.errors import (
    AccountingError,
    AuditError,
    BadKey,
    BadPoint,
    CommitmentError,
    DeckError,
    FalseDispute,
    MissingKeys,
    ProofError,
    RefusedOpen,
    ReplayMismatch,
    ScheduleError,
    WireError,
)
from protocol.deck.group import GROUP_ORDER, Point
from protocol.deck.messages import Argument, Commit, Dispute, EpochMessage, Keys, Shuffle
from protocol.deck.public import EpochState, account, card_point
from protocol.deck.shuffle_argument import proof_size
from tests.deck_harness import (
    GROUP,
    Blamed,
    DeckCheater,
    Peeker,
    Table,
    fixed_scalar,
    flip,
    rewrite_kind,
    rewrite_part,
    slot_key,
    unpack,
)
from tests.test_group import BAD_POINTS

CARDS = tuple(range(10))
L = GROUP_ORDER


def blamed(caught: Blamed, table: Table, cheater: int) -> DeckError:
    """Every honest seat refused, each naming `cheater`; one of their errors."""
    honest = table.honest(cheater)
    assert set(honest) <= set(caught.errors), f"some honest seats accepted: {caught}"
    assert caught.blamed_by(honest) == {cheater}, str(caught)
    return caught.errors[honest[0]]


def cheat_in_epoch(table: Table, cheater: int) -> DeckError:
    with pytest.raises(Blamed) as caught:
        table.run_epoch(0, CARDS)
    return blamed(caught.value, table, cheater)


def audit_blames(
    table: Table, cheater: int, seeds: dict[int, bytes | None] | None = None
) -> AuditError:
    """The audit blames `cheater`, in full and in its quick form (identically, finding for
    finding: see Table.audit_both)."""
    error = table.audit_both(seeds)
    assert isinstance(error, AuditError), "the audit passed"
    assert error.blame == cheater, str(error)
    return error


def cheater_at(seat: int, cls: type = DeckCheater, **attributes: Any) -> dict[int, Any]:
    """Factories for a table where `seat` runs `cls` with these attributes."""

    def make(*args: Any, **kwargs: Any) -> Any:
        player = cls(*args, **kwargs)
        for name, value in attributes.items():
            setattr(player, name, value)
        return player

    return {seat: make}


# Encoding ---------------------------------------------------------------------------------------


def test_every_physical_card_has_its_own_point_so_no_ciphertexts_ever_repeat():
    # P2: one point per bean type would make equal ciphertexts group by type.
    table = Table(3, label="encoding", proofs=False)
    table.run_epoch(0, range(154))
    for deck in table.players[0].public.epoch(0).decks:
        assert len(set(deck)) == 154


def test_a_card_table_with_a_shared_point_or_an_identity_is_refused():
    from protocol.deck.public import require_distinct

    points = [card_point(GROUP, b"encoding game id", card) for card in range(5)]
    with pytest.raises(ValueError, match="same point"):
        require_distinct([*points, points[2]])
    with pytest.raises(ValueError, match="sorted, without repeats"):
        Table(3, label="dup ids").begin_epoch(0, [1, 2, 2, 3])


# Bad points and keys ----------------------------------------------------------------------------

POINT_FIELDS = [
    ("shuffle", "deck"),
    ("shuffle", "public_key"),
    ("relock", "deck"),
    ("relock", "locks"),
]
POINT_KINDS = ["identity", "generator with bit 255", "non-canonical", "negative", "non-square"]


@pytest.mark.parametrize("proofs", [True, False], ids=["proofs", "plain"])
@pytest.mark.parametrize("kind", POINT_KINDS)
@pytest.mark.parametrize(("part", "field"), POINT_FIELDS)
def test_a_bad_point_anywhere_is_refused_and_blamed_on_its_sender(part, field, kind, proofs):
    table = Table(3, label=f"bad point {part} {field} {kind}", proofs=proofs)

    def change(obj: dict[str, Any]) -> None:
        if isinstance(obj[field], list):
            obj[field][4] = BAD_POINTS[kind]
        else:
            obj[field] = BAD_POINTS[kind]

    table.tamper[1] = rewrite_part(part, change)
    assert isinstance(cheat_in_epoch(table, 1), BadPoint)


def dealt(label: str, proofs: bool = True, **kwargs: Any) -> Table:
    table = Table(3, label=label, proofs=proofs, **kwargs)
    table.run_epoch(0, CARDS)
    return table


@pytest.mark.parametrize("form", ["zero", "plus L", "bit 255 set", "wrong key"])
def test_a_bad_key_in_a_keys_message_is_refused_and_blamed(form):
    table = dealt(f"bad key {form}")
    real = int.from_bytes(slot_key(table.players[0], 0, 0), "little")
    bad = {
        "zero": 0,
        "plus L": real + L,
        "bit 255 set": real | 1 << 255,
        "wrong key": int.from_bytes(fixed_scalar("wrong"), "little"),
    }[form]
    if form in ("plus L", "bit 255 set"):
        # P5: libsodium would accept these as the real key, since it reduces or drops bit 255.
        lock = table.players[0].public.epoch(0).locks[0][0]
        assert rbcl.crypto_scalarmult_ristretto255_base(bad.to_bytes(32, "little")) == lock

    def change(obj: dict[str, Any]) -> None:
        obj["keys"][0] = bad.to_bytes(32, "little")

    table.tamper[0] = rewrite_kind("deck.keys", change)
    with pytest.raises(Blamed) as caught:
        table.draw(0, [0], to=1)
    assert isinstance(blamed(caught.value, table, 0), BadKey)


def proof_scalar_changed(form: str) -> Any:
    """A tamper of the shuffle proof's challenge e (after c and ĉ): zero, or plus L."""

    def change(obj: dict[str, Any]) -> None:
        proof = obj["proof"]
        at = 2 * (len(proof) // 32 - 5) // 4 * 32  # n = (words - 5) / 4
        e = int.from_bytes(proof[at : at + 32], "little")
        bad = 0 if form == "zero" else e + L
        obj["proof"] = proof[:at] + bad.to_bytes(32, "little") + proof[at + 32 :]

    return rewrite_part("argument", change)


@pytest.mark.parametrize("form", ["zero", "plus L"])
def test_a_zero_or_unreduced_scalar_in_a_shuffle_proof_is_refused(form):
    table = Table(3, label=f"proof scalar {form}")
    table.tamper[1] = proof_scalar_changed(form)
    error = cheat_in_epoch(table, 1)
    assert isinstance(error, ProofError) and "scalar" in error.reason


def test_an_unreduced_dleq_response_is_refused():
    table = Table(3, label="unreduced dleq")

    def change(obj: dict[str, Any]) -> None:
        proof = obj["proofs"][3]
        z = int.from_bytes(proof[32:], "little") + L
        obj["proofs"][3] = proof[:32] + z.to_bytes(32, "little")

    table.tamper[1] = rewrite_part("relock", change)
    assert isinstance(cheat_in_epoch(table, 1), ProofError)


# Lengths ----------------------------------------------------------------------------------------

LENGTHS = [
    ("shuffle", "deck"),
    ("relock", "deck"),
    ("relock", "locks"),
    ("relock", "proofs"),
]


@pytest.mark.parametrize("change", ["missing", "extra"])
@pytest.mark.parametrize(("part", "field"), LENGTHS)
def test_a_missing_or_extra_item_is_refused_and_blamed(part, field, change):
    table = Table(3, label=f"length {part} {field} {change}")

    def edit(obj: dict[str, Any]) -> None:
        if change == "missing":
            obj[field].pop()
        else:
            obj[field].append(obj[field][0])

    table.tamper[1] = rewrite_part(part, edit)
    assert isinstance(cheat_in_epoch(table, 1), WireError)


@pytest.mark.parametrize("size", [-1, 1, -128], ids=["one byte short", "one byte over", "n-1"])
def test_a_shuffle_proof_of_the_wrong_length_is_refused_and_blamed(size):
    """The argument is exactly 32·(4n+5) bytes: one for another deck size (n-1) is as wrong
    as a length no deck has."""
    table = Table(3, label=f"proof length {size}")

    def edit(obj: dict[str, Any]) -> None:
        proof = obj["proof"]
        obj["proof"] = proof[:size] if size < 0 else proof + bytes(size)

    table.tamper[1] = rewrite_part("argument", edit)
    assert isinstance(cheat_in_epoch(table, 1), WireError)


def test_a_shuffle_proof_sent_with_the_proofs_off_is_refused_and_blamed():
    """Off means no argument at all: one sent anyway is a part that was not due."""
    table = Table(3, label="proof while off", proofs=False)
    argument = Argument(bytes(proof_size(GROUP, len(CARDS))))

    def add(seat: int, obj: dict[str, Any]) -> dict[str, Any]:
        return {**obj, "argument": argument.to_wire()} if "relock" in obj else obj

    table.tamper[1] = add
    error = cheat_in_epoch(table, 1)
    assert isinstance(error, ScheduleError) and "argument" in error.reason


@pytest.mark.parametrize("part", ["shuffle", "relock", "argument"])
def test_a_part_left_out_of_a_message_is_blamed_on_its_sender(part):
    table = Table(3, label=f"left out {part}")

    def drop(seat: int, obj: dict[str, Any]) -> dict[str, Any]:
        return {key: value for key, value in obj.items() if key != part}

    table.tamper[1] = drop
    error = cheat_in_epoch(table, 1)
    assert isinstance(error, ScheduleError) and part in error.reason


def _with_shuffle_change(player: DeckCheater, change) -> DeckCheater:
    player.shuffle_change = lambda state, deck: change(player, state, deck)
    return player


def _with_relock_change(player: DeckCheater, change) -> DeckCheater:
    player.relock_change = lambda state, deck: change(player, state, deck)
    return player


# Shuffle ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("proofs", [True, False], ids=["proofs", "plain"])
def test_a_copied_ciphertext_is_refused_on_receipt(proofs):
    table = Table(3, label="copied", proofs=proofs)
    table.tamper[1] = rewrite_part(
        "shuffle", lambda obj: obj["deck"].__setitem__(5, obj["deck"][2])
    )
    error = cheat_in_epoch(table, 1)
    assert isinstance(error, BadPoint) and "repeats" in error.reason


def rescaled_copy(player: DeckCheater, state: EpochState, deck: list[Point]) -> list[Point]:
    deck[5] = GROUP.mul(fixed_scalar("rescale"), deck[2])
    return deck


def chosen_point(player: DeckCheater, state: EpochState, deck: list[Point]) -> list[Point]:
    deck[5] = card_point(GROUP, player.config.game_id, 3)  # a known card, unlocked
    return deck


def fresh_point(player: DeckCheater, state: EpochState, deck: list[Point]) -> list[Point]:
    deck[5] = GROUP.mul_base(fixed_scalar("fresh"))
    return deck


def other_key(player: DeckCheater, state: EpochState, deck: list[Point]) -> list[Point]:
    deck[5] = GROUP.mul(fixed_scalar("other key"), deck[5])  # K'·D = (K'/K)·(K·D)
    return deck


SHUFFLE_CHEATS = {
    "rescaled copy": rescaled_copy,
    "chosen point": chosen_point,
    "fresh point": fresh_point,
    "one slot under another key": other_key,
}


@pytest.mark.parametrize("cheat", list(SHUFFLE_CHEATS))
def test_a_shuffle_that_is_not_a_permutation_of_the_locked_input_fails_its_proof(cheat):
    change = SHUFFLE_CHEATS[cheat]
    factories = {1: lambda *a, **k: _with_shuffle_change(DeckCheater(*a, **k), change)}
    table = Table(3, label=f"shuffle {cheat}", factories=factories)
    error = cheat_in_epoch(table, 1)
    assert isinstance(error, ProofError) and "shuffle proof" in error.reason
    assert error.step == "epoch 0 round 6 argument"  # with seat 2's relock: k + 1 + 2


def test_a_rescaled_copy_without_proofs_passes_the_deal_but_not_the_audit():
    factories = {1: lambda *a, **k: _with_shuffle_change(DeckCheater(*a, **k), rescaled_copy)}
    table = Table(3, label="rescaled plain", proofs=False, factories=factories)
    table.run_epoch(0, CARDS)
    finding = audit_blames(table, 1).findings[0]
    assert isinstance(finding, ReplayMismatch) and "shuffle" in finding.reason


def test_a_public_key_unrelated_to_the_real_key_fails_the_shuffle_proof():
    table = Table(3, label="unrelated pk")
    stranger = GROUP.mul_base(fixed_scalar("stranger"))
    table.tamper[1] = rewrite_part("shuffle", lambda obj: obj.__setitem__("public_key", stranger))
    assert isinstance(cheat_in_epoch(table, 1), ProofError)


# Replayed proofs (P11) ---------------------------------------------------------------------------


def recorded_shuffle(label: str, seat: int, cards: tuple[int, ...] = CARDS) -> Shuffle:
    donor = Table(3, label=label)
    donor.run_epoch(0, cards)
    return next(
        message.shuffle
        for author, message in donor.transcript
        if author == seat and isinstance(message, EpochMessage) and message.shuffle is not None
    )


def test_a_shuffle_and_its_proof_replayed_from_another_game_are_refused():
    recorded = recorded_shuffle("replay donor", 0)
    table = Table(3, label="replay target")
    table.tamper[0] = rewrite_part("shuffle", lambda obj: obj.update(recorded.to_wire()))
    assert isinstance(cheat_in_epoch(table, 0), ProofError)


def test_a_proof_from_another_seat_of_the_same_game_is_refused():
    # Seat 2 sends, with its relock, seat 1's argument for the shuffle before its own.
    table = Table(3, label="proof of another seat")
    proofs: dict[int, bytes] = {}

    def remember(seat: int, obj: dict[str, Any]) -> dict[str, Any]:
        if obj.get("kind") == "deck.epoch" and "argument" in obj:
            proofs[seat] = obj["argument"]["proof"]
        return obj

    table.tamper[1] = remember
    table.tamper[2] = rewrite_part("argument", lambda obj: obj.__setitem__("proof", proofs[1]))
    assert isinstance(cheat_in_epoch(table, 2), ProofError)


# Relock -----------------------------------------------------------------------------------------


def peek_table(form: str, proofs: bool) -> tuple[Table, Peeker, int]:
    cheater = 2 if form == "shuffle" else 0  # the last shuffler, or the first relocker
    factories = cheater_at(cheater, Peeker, form=form)
    table = Table(3, label=f"peek {form} {proofs}", proofs=proofs, factories=factories)
    player = table.players[cheater]
    assert isinstance(player, Peeker)
    return table, player, cheater


@pytest.mark.parametrize("form", ["shuffle", "relock"])
def test_the_peek_succeeds_without_proofs_and_is_caught_at_open_and_by_the_audit(form):
    table, peeker, cheater = peek_table(form, proofs=False)
    victim = 1
    table.run_epoch(0, CARDS)
    victim_card = table.draw(0, [0], to=victim)[0]
    table.deal(0, [1], to=cheater)
    assert peeker.peek(0) == victim_card  # the cheater learned the victim's card
    # The copy is no card of the deck: when it is opened to all, every seat's accounting
    # refuses it, but only the audit can say who made it.
    with pytest.raises(Blamed) as caught:
        table.play(0, 1, holder=cheater)
    assert all(isinstance(error, AccountingError) for error in caught.value.errors.values())
    assert caught.value.blamed_by(table.honest(cheater)) == {None}
    assert isinstance(audit_blames(table, cheater).findings[0], ReplayMismatch)


@pytest.mark.parametrize("form", ["shuffle", "relock"])
def test_the_peek_is_caught_immediately_with_proofs(form):
    table, _, cheater = peek_table(form, proofs=True)
    error = cheat_in_epoch(table, cheater)
    assert isinstance(error, ProofError)


def kept_global_key(player: DeckCheater, state: EpochState, deck: list[Point]) -> list[Point]:
    key = player._epochs[state.epoch].shuffle_key
    return [GROUP.mul(key, point) for point in deck]  # k·C instead of (k/K)·C


def test_a_relock_that_keeps_the_global_key_fails_its_proof():
    factories = {1: lambda *a, **k: _with_relock_change(DeckCheater(*a, **k), kept_global_key)}
    table = Table(3, label="kept key", factories=factories)
    error = cheat_in_epoch(table, 1)
    assert isinstance(error, ProofError) and "relock proof" in error.reason


def test_a_relock_that_keeps_the_global_key_without_proofs_is_named_by_the_audit():
    factories = {1: lambda *a, **k: _with_relock_change(DeckCheater(*a, **k), kept_global_key)}
    table = Table(3, label="kept key plain", proofs=False, factories=factories)
    table.run_epoch(0, CARDS)
    audit_blames(table, 1)


class OneKeyTwoSlots(DeckCheater):
    """Uses one slot key at two slots (P9)."""

    def _start_epoch(self, epoch: int) -> None:
        super()._start_epoch(epoch)
        keys = self._epochs[epoch].slot_keys
        keys[4] = keys[3]


@pytest.mark.parametrize("proofs", [True, False], ids=["proofs", "plain"])
def test_one_key_at_two_slots_is_refused_because_its_lock_repeats(proofs):
    table = Table(
        3, label=f"one key {proofs}", proofs=proofs, factories=cheater_at(1, OneKeyTwoSlots)
    )
    error = cheat_in_epoch(table, 1)
    assert isinstance(error, BadKey) and "key reuse" in error.reason
    audit_blames(table, 1)  # its relock is not its seed's either


# Draw and play ----------------------------------------------------------------------------------


def test_a_wrong_key_for_a_draw_is_refused():
    table = dealt("wrong key")
    table.tamper[2] = rewrite_kind(
        "deck.keys", lambda obj: obj["keys"].__setitem__(0, flip(obj["keys"][0]))
    )
    with pytest.raises(Blamed) as caught:
        table.draw(0, [0], to=1)
    assert isinstance(blamed(caught.value, table, 2), BadKey)


def test_a_withheld_key_blocks_only_that_open_names_the_withholder_and_the_audit_still_passes():
    table = dealt("withheld")
    message = table.players[0].keys_for(0, [0], to=1)
    table.publish_keys(0, message, Opening(0, (0,), 1))  # seat 2 never sends its key
    with pytest.raises(MissingKeys) as caught:
        table.players[1].open_private(0, 0)
    assert caught.value.blame == 2 and caught.value.missing == (2,)
    # Nothing else is stuck: a face-up card (slot 1) still opens, and the deal audits clean.
    assert table.reveal(0, [1])[0] in CARDS
    assert table.audit_both() is None


def test_k_minus_one_players_cannot_open_a_slot_without_its_holder():
    # P13/P14: k-of-k hiding. Seats 0 and 2 together lack seat 1's key for its card.
    table = dealt("k minus one")
    table.draw(0, [0], to=1)
    for seat in (0, 2):
        player = table.players[seat]
        state = player.public.dealt(0)
        assert player.public.missing_keys(state, 0, range(3)) == (1,)
        with pytest.raises(RefusedOpen):
            player.open_private(0, 0)
        with pytest.raises(RefusedOpen):
            player.open_public(0, 0)


def test_a_drawer_falsely_calling_its_card_invalid_is_blamed():
    table = dealt("false dispute")
    card = table.draw(0, [0], to=1)[0]
    data = table._send(1, table.players[1].dispute(0, 0))
    for player in table.players:
        message = unpack(data, 1)
        assert isinstance(message, Dispute)
        with pytest.raises(FalseDispute) as caught:
            player.receive_dispute(1, message)
        assert caught.value.blame == 1 and f"card {card}" in caught.value.reason


def test_playing_a_card_one_does_not_hold_is_refused():
    table = dealt("not held")
    table.draw(0, [0], to=1)
    with pytest.raises(RefusedOpen):  # seat 2's honest code refuses to play seat 1's card...
        table.players[2].keys_for(0, [0], None)
    forged = Keys(0, None, (0,), (slot_key(table.players[2], 0, 0),))
    with pytest.raises(Blamed) as caught:  # ...and a seat 2 that sends it anyway is refused
        table.publish_keys(2, forged)
    error = blamed(caught.value, table, 2)
    assert isinstance(error, RefusedOpen) and "only seat 1" in error.reason


def test_a_seat_sending_its_own_key_to_itself_is_refused():
    # Its own key in the open would let everyone open the card while it counts as private.
    table = dealt("to itself")
    with pytest.raises(RefusedOpen, match="to itself"):
        table.players[1].keys_for(0, [0], to=1)
    forged = Keys(0, 1, (0,), (slot_key(table.players[1], 0, 0),))
    with pytest.raises(Blamed) as caught:
        table.publish_keys(1, forged)
    assert isinstance(blamed(caught.value, table, 1), RefusedOpen)


def test_playing_a_card_out_of_hand_order_is_refused():
    table = dealt("hand order")
    table.draw(0, [0, 1], to=1)  # seat 1's hand: slot 0 first, then slot 1
    front = Opening(0, (0,), None)
    with pytest.raises(Blamed) as caught:
        table.publish_keys(1, table.players[1].keys_for(0, [1], None), front)
    assert isinstance(blamed(caught.value, table, 1), RefusedOpen)


def test_playing_another_card_by_publishing_another_slots_key_is_refused():
    table = dealt("other card")
    table.draw(0, [0, 1], to=1)
    other = Keys(0, None, (0,), (slot_key(table.players[1], 0, 1),))
    with pytest.raises(Blamed) as caught:
        table.publish_keys(1, other, Opening(0, (0,), None))
    assert isinstance(blamed(caught.value, table, 1), BadKey)


def test_opening_a_slot_out_of_turn_is_refused():
    table = dealt("out of turn")
    table.draw(0, [0], to=1)
    with pytest.raises(RefusedOpen, match="not the top"):
        table.players[0].keys_for(0, [5], to=2)
    skipped = Keys(0, 2, (5,), (slot_key(table.players[0], 0, 5),))
    with pytest.raises(Blamed) as caught:
        table.publish_keys(0, skipped)
    assert isinstance(blamed(caught.value, table, 0), RefusedOpen)


def test_asking_for_keys_to_someone_elses_slot_is_refused():
    table = dealt("someone else's")
    table.draw(0, [0], to=1)
    with pytest.raises(RefusedOpen) as caught:
        table.players[0].keys_for(0, [0], to=2)  # seat 2 asks for seat 1's card
    assert caught.value.blame == 2
    forged = Keys(0, 2, (0,), (slot_key(table.players[0], 0, 0),))
    with pytest.raises(Blamed) as blame:
        table.publish_keys(0, forged)  # a seat 0 colluding with seat 2 sends it anyway
    assert isinstance(blamed(blame.value, table, 0), RefusedOpen)


def test_the_accounting_refuses_a_card_at_two_slots_and_a_slot_with_two_cards():
    with pytest.raises(AccountingError, match="at slot 3 and at slot 1"):
        account({1: 7}, 3, 7, "test")
    with pytest.raises(AccountingError, match="opened to card 7 before"):
        account({1: 7}, 1, 8, "test")


# Reshuffle and audit ----------------------------------------------------------------------------


def discards(table: Table) -> list[int]:
    """Turn four draw-pile cards face up: the discard pile of the next epoch."""
    return sorted(table.reveal(0, [0, 1, 2, 3]))


def test_a_tampered_discard_set_is_blamed_at_the_start_of_the_epoch():
    table = dealt("tampered discards")
    pile = discards(table)
    table.epoch_cards.append(tuple(pile))
    for player in table.players:
        player.begin_epoch(1, pile if player.seat != 2 else pile[:-1])
    with pytest.raises(Blamed) as caught:
        table.run_round(0)
    assert isinstance(blamed(caught.value, table, 2), CommitmentError)


def test_a_discard_set_holding_a_hidden_card_is_refused():
    table = dealt("hidden discard")
    pile = discards(table)
    hidden = table.draw(0, [4], to=1)[0]
    with pytest.raises(AccountingError, match="not been opened to all"):
        table.players[0].begin_epoch(1, sorted([*pile, hidden]))


def test_a_shuffle_of_a_tampered_input_fails_its_proof():
    def swap_in_hidden_card(
        player: DeckCheater, state: EpochState, deck: list[Point]
    ) -> list[Point]:
        if state.epoch == 1:
            key = player._epochs[1].shuffle_key
            deck[0] = GROUP.mul(key, card_point(GROUP, player.config.game_id, 9))
        return deck

    factories = {0: lambda *a, **k: _with_shuffle_change(DeckCheater(*a, **k), swap_in_hidden_card)}
    table = dealt("tampered input", factories=factories)
    pile = [card for card in discards(table) if card != 9]
    with pytest.raises(Blamed) as caught:
        table.run_epoch(1, pile)
    assert isinstance(blamed(caught.value, table, 0), ProofError)


class ReusesKeys(DeckCheater):
    """Uses its epoch-0 slot keys again in epoch 1 (P9)."""

    def _start_epoch(self, epoch: int) -> None:
        super()._start_epoch(epoch)
        if epoch == 1:
            size = len(self._epochs[1].slot_keys)
            self._epochs[1].slot_keys = self._epochs[0].slot_keys[:size]


def test_keys_reused_across_epochs_are_refused():
    table = dealt("reuse across epochs", proofs=False, factories=cheater_at(1, ReusesKeys))
    pile = discards(table)
    with pytest.raises(Blamed) as caught:
        table.run_epoch(1, pile)
    error = blamed(caught.value, table, 1)
    assert isinstance(error, BadKey) and "epoch 0" in error.reason
    assert isinstance(audit_blames(table, 1).findings[0], ReplayMismatch)


class NewSeedCommitment(DeckCheater):
    """Commits to another seed in epoch 1 (equivocation across epochs)."""

    def _commit(self, state: EpochState, round_: int) -> Commit:
        honest = super()._commit(state, round_)
        if state.epoch == 0:
            return honest
        return Commit(flip(honest.seed_commitment), honest.cards_digest)


def test_a_different_seed_commitment_in_a_later_epoch_is_blamed():
    table = dealt("new seed", factories=cheater_at(2, NewSeedCommitment))
    pile = discards(table)
    with pytest.raises(Blamed) as caught:
        table.run_epoch(1, pile)
    error = blamed(caught.value, table, 2)
    assert isinstance(error, CommitmentError) and "equivocation" in error.reason


def test_two_different_messages_for_one_round_in_the_transcript_are_blamed_by_the_audit():
    table = dealt("equivocation")
    index, seat, shuffle = next(
        (i, seat, message)
        for i, (seat, message) in enumerate(table.transcript)
        if isinstance(message, EpochMessage) and message.shuffle is not None and seat == 1
    )
    assert shuffle.shuffle is not None
    reordered = Shuffle(tuple(reversed(shuffle.shuffle.deck)), shuffle.shuffle.public_key)
    table.transcript.insert(index + 1, (seat, EpochMessage(0, shuffle.round, shuffle=reordered)))
    error = audit_blames(table, 1).findings[0]
    assert isinstance(error, ScheduleError) and "equivocation" in error.reason


def test_a_seed_that_does_not_match_its_commitment_is_blamed():
    table = dealt("wrong seed")
    seeds = dict(enumerate(table.seeds)) | {1: flip(table.seeds[1])}
    error = audit_blames(table, 1, seeds).findings[0]
    assert isinstance(error, CommitmentError) and "does not match" in error.reason


def test_a_withheld_seed_is_blamed_and_the_audit_still_judges_everyone_else():
    factories = {2: lambda *a, **k: _with_shuffle_change(DeckCheater(*a, **k), rescaled_copy)}
    table = dealt("withheld seed", proofs=False, factories=factories)
    seeds = dict(enumerate(table.seeds)) | {1: None}
    error = audit_blames(table, 2, seeds)  # seat 2 cheated first; seat 1 withheld at the end
    assert [finding.blame for finding in error.findings] == [2, 1]
    assert isinstance(error.findings[1], CommitmentError) and "withheld" in error.findings[1].reason


def test_when_only_a_withheld_seed_is_wrong_only_that_seat_is_blamed():
    table = dealt("only withheld")
    table.draw(0, [0, 1], to=2)
    error = audit_blames(table, 0, dict(enumerate(table.seeds)) | {0: None})
    assert [finding.blame for finding in error.findings] == [0]


# One byte changed -------------------------------------------------------------------------------

EPOCH_BYTES = [
    ("commit", "cards_digest", None),
    ("shuffle", "deck", 3),
    ("shuffle", "public_key", None),
    ("argument", "proof", None),
    ("relock", "deck", 3),
    ("relock", "locks", 3),
    ("relock", "proofs", 3),
]


@pytest.mark.parametrize(("part", "field", "index"), EPOCH_BYTES)
def test_an_epoch_message_with_one_byte_changed_is_refused_and_blamed_on_its_author(
    part, field, index
):
    table = Table(3, label=f"byte {part} {field}")

    def change(obj: dict[str, Any]) -> None:
        if index is None:
            obj[field] = flip(obj[field])
        else:
            obj[field][index] = flip(obj[field][index])

    table.tamper[1] = rewrite_part(part, change)
    cheat_in_epoch(table, 1)


@pytest.mark.parametrize("field", ["epoch", "round"])
def test_an_epoch_message_for_another_epoch_or_round_is_blamed(field):
    table = Table(3, label=f"header {field}")

    def change(seat: int, obj: dict[str, Any]) -> dict[str, Any]:
        if obj.get("kind") == "deck.epoch" and "shuffle" in obj:
            return {**obj, field: obj[field] + 1}
        return obj

    table.tamper[1] = change
    assert isinstance(cheat_in_epoch(table, 1), ScheduleError)


def test_a_seed_commitment_with_one_byte_changed_is_caught_by_the_audit():
    table = Table(3, label="byte seed commitment")
    table.tamper[1] = rewrite_part(
        "commit", lambda obj: obj.__setitem__("seed_commitment", flip(obj["seed_commitment"]))
    )
    table.run_epoch(0, CARDS)
    assert isinstance(audit_blames(table, 1).findings[0], CommitmentError)


@pytest.mark.parametrize("field", ["keys", "slots", "to", "epoch"])
def test_a_keys_message_with_one_byte_changed_is_refused_and_blamed(field):
    table = dealt(f"byte keys {field}")

    def change(obj: dict[str, Any]) -> None:
        if field == "keys":
            obj["keys"][0] = flip(obj["keys"][0])
        elif field == "slots":
            obj["slots"][0] += 1
        else:
            obj[field] += 1

    table.tamper[0] = rewrite_kind("deck.keys", change)
    with pytest.raises(Blamed) as caught:
        table.draw(0, [0], to=1)
    blamed(caught.value, table, 0)


@pytest.mark.parametrize("field", ["key", "slot", "epoch"])
def test_a_dispute_with_one_byte_changed_is_refused_and_blamed(field):
    table = dealt(f"byte dispute {field}")
    table.draw(0, [0], to=1)
    wire = table.players[1].dispute(0, 0).to_wire()
    wire[field] = flip(wire[field]) if field == "key" else wire[field] + 1
    for player in table.players:
        message = Dispute.from_wire(wire)
        with pytest.raises(DeckError) as caught:
            player.receive_dispute(1, message)
        assert caught.value.blame == 1 and not isinstance(caught.value, FalseDispute)


def test_a_seed_reveal_with_one_byte_changed_is_caught_by_the_audit():
    table = dealt("byte seed")
    changed = flip(table.players[2].reveal_seed().seed)
    audit_blames(table, 2, dict(enumerate(table.seeds)) | {2: changed})


def test_the_audit_passes_an_honest_game_with_every_kind_of_message():
    table = dealt("honest audit")
    table.draw(0, [0, 1], to=2)
    table.reveal(0, [2])
    table.play(0, 0, holder=2)
    assert table.audit_both() is None
