"""Player actions on the wire: exact round trips, and every malformed map refused by name."""

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol.cards import ALL_CARDS, Bean
from protocol.messages import FieldProblem
from protocol.rules import (
    Accept,
    BuyField,
    EndPlanting,
    EndTrading,
    Harvest,
    MakeOffer,
    Plant,
    PlantPending,
    Reject,
    Slot,
    Take,
    Withdraw,
)
from protocol.wire_actions import ActionSpec, action_from_wire, action_to_wire

cards = st.integers(0, len(ALL_CARDS) - 1)
slot_cards = st.tuples(st.builds(Slot, st.integers(0, 9), cards), cards)
offer_ids = st.integers(1, 2**31 - 1)
fields = st.integers(0, 2)
actions = st.one_of(
    st.builds(Plant, fields, cards),
    st.just(EndPlanting()),
    st.builds(Harvest, fields),
    st.just(BuyField()),
    st.builds(
        MakeOffer,
        st.one_of(st.none(), st.integers(0, 6)),
        st.lists(slot_cards, max_size=4).map(tuple),
        st.lists(cards, max_size=2).map(tuple),
        st.lists(cards, max_size=3).map(tuple),
        st.lists(st.tuples(st.sampled_from(list(Bean)), st.integers(1, 24)), max_size=3).map(tuple),
    ),
    st.builds(Accept, offer_ids, st.lists(slot_cards, max_size=4).map(tuple)),
    st.builds(Reject, offer_ids),
    st.builds(Withdraw, offer_ids),
    st.builds(Take, offer_ids, st.integers(0, 6)),
    st.just(EndTrading()),
    st.builds(PlantPending, cards, fields),
)


@given(actions)
def test_every_action_survives_msgpack_and_back(action):
    packed = msgpack.packb(action_to_wire(action), use_bin_type=True)
    assert action_from_wire(msgpack.unpackb(packed, raw=False)) == action


@pytest.mark.parametrize(
    ("wire", "field"),
    [
        ({"type": "plant", "field": 0}, "action.card"),
        ({"type": "plant", "field": 0, "card": 1, "slot": 3}, "action.slot"),
        ({"type": "plant", "field": 3, "card": 1}, "action.field"),
        ({"type": "plant", "field": True, "card": 1}, "action.field"),
        ({"type": "plant", "field": 0, "card": 154}, "action.card"),
        ({"type": "fly"}, "action.type"),
        ({"type": "accept", "offer": 0, "give_hand": []}, "action.offer"),
        ({"type": "accept", "offer": 1, "give_hand": [[0, 1]]}, "action.give_hand[0]"),
        ({"type": "accept", "offer": 1, "give_hand": [[0, 1, "x"]]}, "action.give_hand[0][2]"),
        ({"type": "take", "offer": 1}, "action.bidder"),
        ({"type": "take", "offer": 1, "bidder": 7}, "action.bidder"),
        (
            {"type": "offer", "to": 9, "give_hand": [], "give_face_up": [],
             "want_cards": [], "want_beans": []},
            "action.to",
        ),
        (
            {"type": "offer", "to": None, "give_hand": [], "give_face_up": [1, 2, 3],
             "want_cards": [], "want_beans": []},
            "action.give_face_up",
        ),
        (
            {"type": "offer", "to": None, "give_hand": [], "give_face_up": [],
             "want_cards": [], "want_beans": [["carrot", 1]]},
            "action.want_beans[0][0]",
        ),
        (
            {"type": "offer", "to": None, "give_hand": [], "give_face_up": [],
             "want_cards": [], "want_beans": [["soy", 0]]},
            "action.want_beans[0][1]",
        ),
    ],
)  # fmt: skip
def test_malformed_actions_are_refused_naming_the_field(wire, field):
    with pytest.raises(FieldProblem) as caught:
        action_from_wire(wire)
    assert caught.value.path == field


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text() | st.binary(),
        lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    )
)
def test_any_value_is_either_a_valid_action_or_a_field_problem(value):
    try:
        action = action_from_wire(value)
    except FieldProblem:
        return
    assert action_from_wire(action_to_wire(action)) == action


def test_an_action_made_here_is_checked_like_a_received_one():
    with pytest.raises(FieldProblem):
        ActionSpec().parse(Plant(7, 1), "action")
    assert ActionSpec().parse(Plant(1, 1), "action") == Plant(1, 1)
