"""The lockstep in one process: whole games agree and pass the audit; every cheat is caught at
once and blamed on its author; no seat ever sees a card it is not entitled to."""

from __future__ import annotations

import secrets

import pytest

from client.bots import GreedyBot, RandomBot
from protocol.deck import Keys, SeedReveal, decode_message
from protocol.lockstep import Cheat, Lockstep
from protocol.peer_messages import StepBody
from protocol.rules import Accept, EndTrading, MakeOffer, Phase, Plant, RuleError
from protocol.simulate import game_seed
from tests.lockstep_harness import LocalGame


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
    game = LocalGame.new(players, proof_rounds=1, label=b"whole %d" % players)
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
    game = LocalGame.new(3, proof_rounds=40, label=b"full strength")
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
    game = LocalGame.new(4, proof_rounds=1, label=b"cheats")
    until(game, lambda g: g.seats[0].rules is not None and g.seats[0]._dealing is None)
    until(game, dealt)
    return game


def front(lockstep: Lockstep):
    held = lockstep.rules.players[lockstep.seat].hand
    return [lockstep.hand[h.slot] for h in held]


def test_a_wrong_key_is_blamed_on_its_sender():
    game = LocalGame.new(4, proof_rounds=1, label=b"wrong key")
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
    cheat = caught(ready, {}, only(3, lambda p, _: rewrite(p, state=secrets.token_bytes(32))))
    assert cheat.seat == 3 and "another state" in cheat.reason


def test_withheld_keys_are_blamed_on_the_seat_that_withholds_them():
    game = LocalGame.new(4, proof_rounds=1, label=b"withheld")
    until(game, lambda g: g.seats[0].rules is not None and g.seats[0]._dealing is None)
    cheat = caught(game, {}, only(1, lambda p, _: rewrite(p, deck=[])))
    assert cheat.seat == 1 and "withheld its keys" in cheat.reason


def test_a_malformed_message_is_blamed_on_its_sender(ready):
    cheat = caught(ready, {}, only(2, lambda p, _: p[:-3]))
    assert cheat.seat == 2 and "malformed" in cheat.reason


def test_an_action_spoiled_by_an_earlier_seat_is_refused_alike_everywhere(ready):
    until(ready, lambda g: g.seats[0].rules.phase is Phase.TRADE and g.seats[0].rules.face_up)
    rules = ready.seats[0].rules
    active = rules.active
    gift = MakeOffer(None, give_face_up=(rules.face_up[0],))
    ready.step({active: [gift]})
    offer = ready.seats[0].rules.offers[-1].id
    takers = sorted(s for s in range(4) if s != active)[:2]
    ready.step({seat: [Accept(offer)] for seat in takers})
    reports = [report for report in ready.reports[-1]]
    assert all([r.seat for r in report.refusals] == [takers[1]] for report in reports)
    assert ready.seats[0].rules.players[takers[0]].pending == (rules.face_up[0],)


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
    game = LocalGame.new(3, proof_rounds=1, label=b"no seed")

    def withhold_seed(payload, lockstep):
        body = StepBody.decode(payload)
        kept = [m for m in body.deck if not isinstance(decode_message(m, 1), SeedReveal)]
        return rewrite(payload, deck=kept)

    finish(game, only(1, withhold_seed))
    final = game.seats[0].final
    assert final.agreed and not final.audit_passed
    assert any(f.startswith("seat 1:") and "withheld its seed" in f for f in final.audit_findings)


def test_a_seat_reporting_another_final_state_breaks_the_agreement():
    game = LocalGame.new(3, proof_rounds=1, label=b"disagree")
    finish(game, only(2, lambda p, _: rewrite(p, final=bytes(32))))
    assert not game.seats[0].final.agreed and game.seats[0].final.audit_passed


def test_keys_message_types_are_checked():
    # A keys message to the seat itself would open its own slots; the deck refuses it.
    game = LocalGame.new(3, proof_rounds=1, label=b"self keys")
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
