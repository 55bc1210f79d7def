"""The lockstep in one process: whole games agree and pass the audit; every cheat is caught at
once and blamed on its author; no seat ever sees a card it is not entitled to."""

from __future__ import annotations

import copy
import secrets
from collections import Counter

import msgpack
import pytest

from client.bots import GreedyBot, RandomBot
from protocol.blame import Cheat, ForkedState
from protocol.cards import bean_of
from protocol.deck import Keys, SeedReveal, decode_message
from protocol.lockstep import Lockstep, StepReport
from protocol.peer_messages import StepBody
from protocol.rules import (
    Accept,
    EndTrading,
    MakeOffer,
    Phase,
    Plant,
    RuleError,
    ShowHandCards,
    Slot,
    Take,
    Withdraw,
)
from protocol.simulate import game_seed
from tests.lockstep_harness import LocalGame, seeds_for


def entitled_views_only(game: LocalGame) -> None:
    """After a step: each seat has opened only its own hand cards and cards opened to all."""
    reference = game.seats[0]
    for lockstep in game.seats:
        rules = lockstep.rules
        if rules is None:
            continue
        everyone = range(len(game.seats))
        for epoch in range(len(rules.epochs)):
            for position in lockstep.deck.seen(epoch):
                public = all((epoch, position) in reference._keyed[s] for s in everyone)
                held = (epoch, position) in game.ever_held[lockstep.seat]
                assert public or held, f"seat {lockstep.seat} saw slot {epoch}:{position}"


def play_watched(game: LocalGame, strategies, tamper=None) -> None:
    game.ever_held = {seat: set() for seat in range(len(game.seats))}
    original = game.step

    def step(actions, tamper=None):
        original(actions, tamper)
        for seat, lockstep in enumerate(game.seats):
            if lockstep.rules is not None:
                for held in lockstep.rules.players[seat].hand:
                    game.ever_held[seat].add((held.slot.epoch, held.slot.position))
        entitled_views_only(game)

    game.step = step
    game.play(strategies, tamper)


@pytest.mark.slow
@pytest.mark.parametrize("players", [3, 5, 7])
def test_whole_games_agree_pass_the_audit_and_show_no_seat_a_card_it_may_not_see(players):
    game = LocalGame.new(players, label=b"whole %d" % players)
    strategies = [
        GreedyBot() if seat % 2 else RandomBot(game_seed(4, seat)) for seat in range(players)
    ]
    play_watched(game, strategies)
    finals = [lockstep.final for lockstep in game.seats]
    assert all(final.agreed and final.audit_passed for final in finals)
    assert len({final.result for final in finals}) == 1
    rules = game.seats[0].rules
    assert rules.phase is Phase.OVER and len(rules.epochs) >= 2  # at least one reshuffle
    assert rules.exhaustions == rules.setup.exhaustions_to_end


@pytest.mark.slow
def test_a_whole_game_with_shuffle_proofs_at_full_strength():
    game = LocalGame.new(3, label=b"full strength")
    game.play([GreedyBot() for _ in range(3)])
    assert all(s.final.agreed and s.final.audit_passed for s in game.seats)


def until(game: LocalGame, condition, strategies=None, max_steps=200):
    """Play greedy steps until `condition(game)` holds at the start of a step."""
    strategies = strategies or [GreedyBot() for _ in game.seats]
    for _ in range(max_steps):
        if condition(game):
            return
        wanted = {}
        for seat, lockstep in enumerate(game.seats):
            if lockstep.rules is not None:
                chosen = strategies[seat].decide(lockstep.rules, seat, lockstep.hand)
                if chosen:
                    wanted[seat] = chosen
        game.step(wanted)
    raise AssertionError("the condition never held")


def dealt(game: LocalGame) -> bool:
    return all(len(s.hand) == len(s.rules.players[s.seat].hand) for s in game.seats if s.rules)


def rewrite(payload: bytes, **changes) -> bytes:
    body = StepBody.decode(payload)
    wire = body.to_wire()
    wire.update(changes)
    return StepBody.from_wire(wire).encode()


def caught(game: LocalGame, actions, tamper) -> Cheat:
    with pytest.raises(Cheat) as error:
        game.step(actions, tamper)
    return error.value


def only(seat_to_tamper, step_change):
    def tamper(step, seat, payload, lockstep):
        return step_change(payload, lockstep) if seat == seat_to_tamper else payload

    return tamper


@pytest.fixture
def ready():
    """A 4-seat game whose cards are dealt, at the active seat's step 1."""
    game = LocalGame.new(4, label=b"cheats")
    until(game, lambda g: g.seats[0].rules is not None and g.seats[0]._dealing is None)
    until(game, dealt)
    return game


def front(lockstep: Lockstep):
    held = lockstep.rules.players[lockstep.seat].hand
    return [lockstep.hand[h.slot] for h in held]


def test_a_wrong_key_is_blamed_on_its_sender():
    game = LocalGame.new(4, label=b"wrong key")
    until(game, lambda g: g.seats[0].rules is not None and g.seats[0]._dealing is None)

    def flip_a_key(payload, lockstep):
        body = StepBody.decode(payload)
        deck = [dict(m) for m in body.deck]
        keys = [bytes(k) for k in deck[0]["keys"]]
        keys[0] = bytes([keys[0][0] ^ 1]) + keys[0][1:]
        deck[0]["keys"] = keys
        return rewrite(payload, deck=deck)

    cheat = caught(game, {}, only(2, flip_a_key))
    assert cheat.seat == 2


def test_planting_a_card_not_held_is_blamed_on_the_planter(ready):
    active = ready.seats[0].rules.active
    lockstep = ready.seats[active]
    held = front(lockstep)
    fields = lockstep.rules.players[active].fields

    def claim_another_card(payload, lockstep):
        body = StepBody.decode(payload)
        forged = Plant(body.actions[0].field, held[1])
        return rewrite(payload, actions=[forged])

    plant = next(i for i, f in enumerate(fields) if not f)
    cheat = caught(ready, {active: [Plant(plant, held[0])]}, only(active, claim_another_card))
    assert cheat.seat == active and "does not hold" in cheat.reason


def test_planting_out_of_hand_order_is_blamed_on_the_planter(ready):
    active = ready.seats[0].rules.active
    lockstep = ready.seats[active]
    second = lockstep.rules.players[active].hand[1].slot
    key = lockstep.deck.keys_for(second.epoch, [second.position], None, check_routes=False)

    def open_the_second_card(payload, lockstep):
        return rewrite(payload, deck=[key.to_wire()])

    plant = Plant(0, front(lockstep)[0])
    cheat = caught(ready, {active: [plant]}, only(active, open_the_second_card))
    assert cheat.seat == active and "withheld its keys" in cheat.reason


def test_an_out_of_turn_action_is_blamed_on_its_author(ready):
    other = (ready.seats[0].rules.active + 1) % 4

    def act_out_of_turn(payload, lockstep):
        return rewrite(payload, actions=[{"type": "end_trading"}])

    cheat = caught(ready, {}, only(other, act_out_of_turn))
    assert cheat.seat == other and "rules forbid" in cheat.reason


def test_a_message_made_against_another_state_is_blamed(ready):
    """Its inputs (the messages of the step before it says it played) are ours: the state
    they give is ours, so its own state is wrong, on its own signature."""
    cheat = caught(ready, {}, only(3, lambda p, _: rewrite(p, state=secrets.token_bytes(32))))
    assert cheat.seat == 3 and "another state" in cheat.reason
    assert not isinstance(cheat, ForkedState)


def another_input(author: int):
    """A tamper: the message says it played another version of `author`'s message of the
    step before (and, so, is made against another state)."""

    def tamper(payload, lockstep):
        inputs = list(lockstep.inputs)
        inputs[author] = secrets.token_bytes(32)
        return rewrite(payload, inputs=inputs, state=secrets.token_bytes(32))

    return tamper


def test_a_message_made_from_another_version_of_a_third_seats_message_is_a_fork_naming_nobody(
    ready,
):
    cheat = caught(ready, {}, only(3, another_input(1)))
    assert isinstance(cheat, ForkedState) and cheat.seat == 3
    assert list(cheat.contested) == [1]
    assert "played another version of the message of seat 1" in cheat.reason


def test_a_message_that_says_it_played_another_version_of_its_own_is_equivocation(ready):
    cheat = caught(ready, {}, only(3, another_input(3)))
    assert not isinstance(cheat, ForkedState) and cheat.seat == 3
    assert "equivocation" in cheat.reason


@pytest.mark.parametrize(
    "inputs, why",
    [
        (lambda ours: [*ours[:-1], bytes(32)], "our state with inputs that do not make it"),
        (lambda ours: ours[:-1], "wrong number of inputs"),
    ],
)
def test_inputs_that_cannot_be_what_its_author_played_name_it(ready, inputs, why):
    cheat = caught(
        ready, {}, only(2, lambda p, lockstep: rewrite(p, inputs=inputs(lockstep.inputs)))
    )
    assert cheat.seat == 2 and why in cheat.reason


def test_withheld_keys_are_blamed_on_the_seat_that_withholds_them():
    game = LocalGame.new(4, label=b"withheld")
    until(game, lambda g: g.seats[0].rules is not None and g.seats[0]._dealing is None)
    cheat = caught(game, {}, only(1, lambda p, _: rewrite(p, deck=[])))
    assert cheat.seat == 1 and "withheld its keys" in cheat.reason


def test_a_malformed_message_is_blamed_on_its_sender(ready):
    cheat = caught(ready, {}, only(2, lambda p, _: p[:-3]))
    assert cheat.seat == 2 and "malformed" in cheat.reason


def reversed_map(wire: dict) -> dict:
    return dict(reversed(list(wire.items())))


def test_a_message_not_in_canonical_form_is_blamed_on_its_sender(ready):
    """The same body in other bytes is a malformed message its author signed."""
    loose = only(2, lambda p, _: msgpack.packb(reversed_map(StepBody.decode(p).to_wire())))
    cheat = caught(ready, {}, loose)
    assert cheat.seat == 2 and "malformed" in cheat.reason and "canonical" in cheat.reason


def test_a_deck_map_not_in_canonical_form_is_blamed_on_its_sender():
    game = LocalGame.new(3, label=b"loose deck")

    def loose_deck(payload: bytes, _) -> bytes:
        body = StepBody.decode(payload)
        return rewrite(payload, deck=[reversed_map(m) for m in body.deck])

    with pytest.raises(Cheat) as error:
        for _ in range(20):
            game.step({}, only(1, loose_deck))
    cheat = error.value
    assert cheat.seat == 1 and "deck message" in cheat.reason and "canonical" in cheat.reason


# --- Moves that meet in one step (protocol/steps.py's rules), on every peer ------------------


@pytest.fixture(scope="module")
def trading_table() -> LocalGame:
    """A 4-seat game at the active seat's trading, its face-up cards turned; tests play on
    copies of it."""
    game = LocalGame.new(4, label=b"trading")
    until(game, lambda g: g.seats[0].rules is not None and bool(g.seats[0].rules.face_up))
    return game


def hidden_hand_cards(game: LocalGame, seat: int) -> list[tuple[Slot, int]]:
    """The seat's hand cards nobody else has seen, as only that seat knows them."""
    lockstep = game.seats[seat]
    return [
        (held.slot, lockstep.hand[held.slot])
        for held in lockstep.rules.players[seat].hand
        if held.card is None
    ]


def step_in_both_orders(game: LocalGame, actions) -> list[StepReport]:
    """One step, each peer getting the step's messages in another order (ascending or
    descending seats); every peer must end at the same state."""
    payloads = {seat: ls.compose(actions.get(seat, ())) for seat, ls in enumerate(game.seats)}
    reports = []
    for seat, lockstep in enumerate(game.seats):
        order = sorted(payloads, reverse=seat % 2 == 1)
        reports.append(lockstep.play({s: payloads[s] for s in order}))
    assert len({lockstep.chain for lockstep in game.seats}) == 1, "the peers diverged"
    return reports


def shown(report: StepReport) -> list[tuple[Slot, int]]:
    """The hand cards the step's actions opened to everyone."""
    return [card for a in report.applied if isinstance(a.action, ShowHandCards)
            for card in a.action.cards]  # fmt: skip


@pytest.mark.parametrize("partner_offset", [1, 2, 3])
@pytest.mark.parametrize("active_makes", [True, False], ids=["active-makes", "other-makes"])
def test_an_acceptance_holds_when_its_maker_withdraws_in_the_same_step(
    trading_table, partner_offset, active_makes
):
    """The written rule: an acceptance sent against a standing offer holds; the withdrawal
    finds nothing. Every partner seat, the maker the active player or the other one (so the
    maker's seat is below the accepter's and above it), the messages in both orders: every
    peer ends alike, and the only card opened is the one the trade gave."""
    game = copy.deepcopy(trading_table)
    rules = game.seats[0].rules
    active = rules.active
    partner = (active + partner_offset) % 4
    maker, taker = (active, partner) if active_makes else (partner, active)
    paid = hidden_hand_cards(game, taker)[0]
    wants = ((bean_of(paid[1]), 1),)
    if active_makes:
        offer = MakeOffer(partner, give_face_up=rules.face_up[:1], want_beans=wants)
    else:
        offer = MakeOffer(active, give_hand=hidden_hand_cards(game, partner)[:1], want_beans=wants)
    step_in_both_orders(game, {maker: [offer]})
    offer_id = game.seats[0].rules.offers[-1].id
    reports = step_in_both_orders(
        game, {taker: [Accept(offer_id, (paid,))], maker: [Withdraw(offer_id)]}
    )
    after = game.seats[0].rules
    assert paid[1] in after.players[maker].pending and after.offers == ()
    for report in reports:
        assert [(r.seat, r.action) for r in report.refusals] == [(maker, Withdraw(offer_id))]
        assert report.refusals[0].reason == f"there is no open offer {offer_id}"
        assert shown(report) == [paid]


def test_an_acceptance_holds_when_the_active_player_ends_trading_in_the_same_step(trading_table):
    game = copy.deepcopy(trading_table)
    rules = game.seats[0].rules
    active, partner = rules.active, (rules.active + 1) % 4
    face = rules.face_up[0]
    paid = hidden_hand_cards(game, partner)[0]
    offer = MakeOffer(partner, give_face_up=(face,), want_beans=((bean_of(paid[1]), 1),))
    step_in_both_orders(game, {active: [offer]})
    offer_id = game.seats[0].rules.offers[-1].id
    reports = step_in_both_orders(
        game, {partner: [Accept(offer_id, (paid,))], active: [EndTrading()]}
    )
    after = game.seats[0].rules
    assert after.phase is not Phase.TRADE
    assert face in after.players[partner].pending and paid[1] in after.players[active].pending
    assert all(report.refusals == [] and shown(report) == [paid] for report in reports)


def test_takers_of_a_gift_to_everyone_all_bid_and_its_maker_chooses_one(trading_table):
    """Three players take one gift in the same step: none wins by its seat; each bid stands,
    and the maker's choice (here the last seat to answer) decides, alike on every peer."""
    game = copy.deepcopy(trading_table)
    rules = game.seats[0].rules
    active, face = rules.active, rules.face_up[0]
    step_in_both_orders(game, {active: [MakeOffer(None, give_face_up=(face,))]})
    gift = game.seats[0].rules.offers[-1].id
    others = [s for s in range(4) if s != active]
    reports = step_in_both_orders(game, {seat: [Accept(gift)] for seat in others})
    assert all(report.refusals == [] for report in reports)
    bids = game.seats[0].rules.bids
    assert sorted(bid.bidder for bid in bids) == others and face in game.seats[0].rules.face_up
    chosen = max(others)
    reports = step_in_both_orders(game, {active: [Take(gift, chosen)]})
    after = game.seats[0].rules
    assert after.players[chosen].pending == (face,) and after.bids == () and after.offers == ()


def test_a_bid_in_the_step_its_offer_is_withdrawn_lapses_having_shown_only_its_own_cards(
    trading_table,
):
    game = copy.deepcopy(trading_table)
    rules = game.seats[0].rules
    active, bidder = rules.active, (rules.active + 2) % 4
    paid = hidden_hand_cards(game, bidder)[0]
    wants = ((bean_of(paid[1]), 1),)
    step_in_both_orders(game, {active: [MakeOffer(None, give_face_up=rules.face_up[:1],
                                                  want_beans=wants)]})  # fmt: skip
    offer_id = game.seats[0].rules.offers[-1].id
    reports = step_in_both_orders(
        game, {bidder: [Accept(offer_id, (paid,))], active: [Withdraw(offer_id)]}
    )
    after = game.seats[0].rules
    assert after.offers == () and after.bids == () and after.players[bidder].pending == ()
    # A bid shows the cards it names, whatever becomes of it.
    assert (paid[0], paid[1]) in {(h.slot, h.card) for h in after.players[bidder].hand}
    assert all(report.refusals == [] and shown(report) == [paid] for report in reports)


def test_compose_refuses_what_the_rules_forbid_and_sends_nothing(ready):
    idle = (ready.seats[0].rules.active + 1) % 4
    step = ready.seats[idle].step
    with pytest.raises(RuleError, match="trading is step 2"):
        ready.seats[idle].compose([EndTrading()])
    assert ready.seats[idle].step == step


def finish(game: LocalGame, tamper=None):
    until(
        game,
        lambda g: g.seats[0].rules is not None and g.seats[0].rules.phase is Phase.OVER,
        max_steps=5000,
    )
    game.step({}, tamper)


def test_a_withheld_seed_is_blamed_by_the_audit_and_the_game_still_ends():
    game = LocalGame.new(3, label=b"no seed")

    def withhold_seed(payload, lockstep):
        body = StepBody.decode(payload)
        kept = [m for m in body.deck if not isinstance(decode_message(m, 1), SeedReveal)]
        return rewrite(payload, deck=kept)

    finish(game, only(1, withhold_seed))
    final = game.seats[0].final
    assert final.agreed and not final.audit_passed
    assert any(f.startswith("seat 1:") and "withheld its seed" in f for f in final.audit_findings)


def test_a_seat_reporting_another_final_state_breaks_the_agreement():
    game = LocalGame.new(3, label=b"disagree")
    finish(game, only(2, lambda p, _: rewrite(p, final=bytes(32))))
    assert not game.seats[0].final.agreed and game.seats[0].final.audit_passed


def test_keys_message_types_are_checked():
    # A keys message to the seat itself would open its own slots; the deck refuses it.
    game = LocalGame.new(3, label=b"self keys")
    until(game, lambda g: g.seats[0].rules is not None and g.seats[0]._dealing is None)

    def keys_to_itself(payload, lockstep):
        body = StepBody.decode(payload)
        deck = [dict(m) for m in body.deck]
        first = Keys.from_wire(deck[0])
        deck[0]["to"] = lockstep.seat
        assert first.to != lockstep.seat
        return rewrite(payload, deck=deck)

    cheat = caught(game, {}, only(0, keys_to_itself))
    assert cheat.seat == 0


@pytest.mark.slow
def test_a_message_without_moves_is_made_again_the_same_by_a_seat_rebuilt_from_the_steps():
    """The seat rebuilt from its seed and the same signed steps makes the same bytes for that
    step, in deck rounds, ordinary steps and the seed's reveal alike. (A client no longer
    relies on it after a crash: the steps lost with it may come back in another version from
    an equivocating seat, so every message is on disk before it leaves, client/game.py
    `_publish`.)"""
    game = LocalGame.new(3, label=b"made again")
    sent: list[dict[int, bytes]] = []

    def record(step, seat, payload, lockstep):
        if seat == 0:
            sent.append({})
        sent[-1][seat] = payload
        return payload

    game.play([GreedyBot(), RandomBot(game_seed(9, 1)), GreedyBot()], record)
    seat = 1
    rebuilt = Lockstep(game.seats[seat].config, seat, seeds_for(3, b"made again")[seat])
    checked = Counter()
    for step, payloads in enumerate(sent):
        body = StepBody.decode(payloads[seat])
        if not body.actions:
            kind = "deal" if rebuilt.dealing is not None else "seed" if body.final else "play"
            assert copy.deepcopy(rebuilt).compose() == payloads[seat], f"step {step} ({kind})"
            checked[kind] += 1
        rebuilt.play(payloads)
    assert checked["deal"] >= 10 and checked["play"] >= 50 and checked["seed"] == 1, checked
    assert rebuilt.final is not None and rebuilt.final.agreed
