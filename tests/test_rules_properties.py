"""Laws of the rules engine that hold for all play, checked with hypothesis over random games
(protocol.simulate's random legal play) and random actions, legal or not."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.cards import BEANS, bean_of
from protocol.invariants import violations
from protocol.open_table import OpenTable
from protocol.rules import (
    Accept,
    BuyField,
    EndPlanting,
    EndTrading,
    Harvest,
    MakeOffer,
    Phase,
    Plant,
    PlantPending,
    Reject,
    RevealFaceUp,
    RuleError,
    Slot,
    State,
    Withdraw,
    apply,
    canonical,
    legal_actions,
    state_hash,
)
from protocol.simulate import random_moves

games = st.tuples(st.integers(min_value=3, max_value=7), st.binary(min_size=16, max_size=16))
SETTINGS = settings(max_examples=25, suppress_health_check=[HealthCheck.too_slow])


def applied(players, seed, limit=None):
    moves = [m for m in random_moves(players, seed) if m.after is not None]
    return moves[:limit] if limit else moves


def any_action(data, state: State):
    """An action of any kind, its arguments drawn from what is on the table and from nonsense."""
    n = len(state.players)
    hand_slots = [h.slot for p in state.players for h in p.hand]
    slot = st.one_of(
        st.sampled_from(hand_slots) if hand_slots else st.nothing(),
        st.builds(Slot, st.integers(-1, 4), st.integers(-1, 160)),
    )
    on_table = (
        list(state.face_up)
        + [c for p in state.players for f in p.fields for c in f]
        + [c for p in state.players for c in p.pending + p.earnings]
    )
    card = st.one_of(st.integers(-2, 160), st.sampled_from(on_table) if on_table else st.nothing())
    field_index = st.integers(-1, 3)
    offer_id = st.integers(0, state.next_offer_id + 1)
    claims = st.lists(st.tuples(slot, card), max_size=3).map(tuple)
    cards = st.lists(card, max_size=3).map(tuple)
    beans = st.lists(st.tuples(st.sampled_from(BEANS), st.integers(-1, 30)), max_size=3).map(tuple)
    action = data.draw(
        st.one_of(
            st.builds(Plant, field_index, card),
            st.just(EndPlanting()),
            st.builds(RevealFaceUp, cards),
            st.builds(Harvest, field_index),
            st.just(BuyField()),
            st.builds(
                MakeOffer, st.one_of(st.none(), st.integers(-1, n)), claims, cards, cards, beans
            ),
            st.builds(Accept, offer_id, claims),
            st.builds(Reject, offer_id),
            st.builds(Withdraw, offer_id),
            st.just(EndTrading()),
            st.builds(PlantPending, card, field_index),
        )
    )
    seat = data.draw(st.one_of(st.none(), st.integers(-1, n)))
    return seat, action


@SETTINGS
@given(games, st.data())
def test_no_action_legal_or_not_leaves_an_invalid_state_and_a_refusal_changes_nothing(game, data):
    players, seed = game
    moves = applied(players, seed)
    for index in sorted(data.draw(st.sets(st.integers(0, len(moves) - 1), max_size=12))):
        state = moves[index].before
        before = canonical(state)
        for _ in range(5):
            seat, action = any_action(data, state)
            try:
                after = apply(state, seat, action)
            except RuleError:
                assert canonical(state) == before
                continue
            assert violations(after) == [], (seat, action)


@SETTINGS
@given(games)
def test_every_card_is_in_exactly_one_place_at_all_times_across_reshuffles(game):
    players, seed = game
    reshuffles = 0
    for move in applied(players, seed):
        assert violations(move.after) == []
        reshuffles += len(move.after.epochs) - len(move.before.epochs)
    assert reshuffles >= 1  # every game goes through at least one reshuffle


@SETTINGS
@given(games)
def test_a_hand_changes_only_by_removing_cards_or_drawing_to_the_back(game):
    players, seed = game
    for move in applied(players, seed):
        for seat, (old, new) in enumerate(
            zip(move.before.players, move.after.players, strict=True)
        ):
            old_slots = [h.slot for h in old.hand]
            new_slots = [h.slot for h in new.hand]
            kept = [s for s in old_slots if s in new_slots]
            drawn = new_slots[len(kept) :]
            assert new_slots[: len(kept)] == kept
            if drawn:
                assert seat == move.before.active and not set(drawn) & set(old_slots)
                assert isinstance(move.action, (EndTrading, PlantPending))
            # A card keeps its identity while it stays in the hand.
            cards = {h.slot: h.card for h in old.hand}
            assert all(cards[h.slot] in (None, h.card) for h in new.hand if h.slot in cards)


@SETTINGS
@given(games)
def test_an_action_shares_what_it_does_not_change_with_the_state_before_it(game):
    """Copying every player and every epoch's hidden cards was most of an action's cost: a
    player or an epoch that an action leaves as it was is the very object it was."""
    players, seed = game
    for move in applied(players, seed):
        before, after = move.before, move.after
        for old, new in zip(before.players, after.players, strict=True):
            assert new is old or new != old, move.action
        for old_cards, new_cards in zip(before.hidden, after.hidden, strict=False):
            assert new_cards is old_cards or new_cards != old_cards, move.action


@SETTINGS
@given(games)
def test_coins_only_ever_decrease_by_buying_the_third_field(game):
    players, seed = game
    for move in applied(players, seed):
        for seat, (old, new) in enumerate(
            zip(move.before.players, move.after.players, strict=True)
        ):
            if new.earnings[: len(old.earnings)] == old.earnings:
                continue
            cost = move.before.setup.field_cost
            assert isinstance(move.action, BuyField) and move.seat == seat
            assert new.earnings == old.earnings[:-cost]


@SETTINGS
@given(games)
def test_the_state_hash_is_deterministic_and_changes_with_every_applied_action(game):
    players, seed = game
    first = [state_hash(m.after) for m in applied(players, seed, limit=300)]
    again = [state_hash(m.after) for m in applied(players, seed, limit=300)]
    assert first == again
    for move in applied(players, seed, limit=300):
        assert state_hash(move.after) != state_hash(move.before)


def candidate_actions(state: State, seat: int, table: OpenTable):
    """A finite set of actions around the legal ones, with true claims of hand cards."""
    hand = table.hand(state, seat)
    player = state.players[seat]
    front = [hand[player.hand[0].slot]] if player.hand else []
    others = [c for p in state.players for c in p.pending] + list(state.face_up)
    yield EndPlanting()
    yield EndTrading()
    yield BuyField()
    for index in range(-1, 4):
        yield Harvest(index)
        for card in front:
            yield Plant(index, card)
        for card in set(player.pending) | set(others[:2]):
            yield PlantPending(card, index)
    for offer in state.offers:
        for kind in (Withdraw, Reject):
            yield kind(offer.id)
        yield Accept(offer.id)
        held = [(h.slot, hand[h.slot]) for h in player.hand]
        for want_bean, count in offer.want_beans:
            matching = tuple(c for c in held if bean_of(c[1]) is want_bean)[:count]
            yield Accept(offer.id, matching)
            yield Accept(offer.id, tuple(held[:count]))


@SETTINGS
@given(games, st.data())
def test_legal_actions_lists_exactly_the_actions_the_rules_accept(game, data):
    players, seed = game
    table = OpenTable(seed)
    moves = [m for m in applied(players, seed) if m.before.phase is not Phase.REVEAL]
    for index in data.draw(st.sets(st.integers(0, len(moves) - 1), min_size=1, max_size=20)):
        state = moves[index].before
        for seat in range(players):
            legal = legal_actions(state, seat, table.hand(state, seat))
            for action in legal:
                apply(state, seat, action)  # raises if a listed action is refused
            for action in candidate_actions(state, seat, table):
                try:
                    apply(state, seat, action)
                except RuleError:
                    assert action not in legal
                else:
                    assert action in legal, action
