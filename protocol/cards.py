"""The bean cards of the Rio Grande edition (154 cards, 11 types) and the set-up per player count.

Every physical card has an id (0..153, grouped by bean type in the order of BEANS); its bean type
is public. Sources and decisions: ../shared/RULES.md sections 1 and 2.1.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

Card = int


class Bean(StrEnum):
    """The bean types, by the names players use (most plentiful first)."""

    COFFEE = "coffee"
    WAX = "wax"
    BLUE = "blue"
    CHILI = "chili"
    STINK = "stink"
    GREEN = "green"
    SOY = "soy"
    BLACK_EYED = "black-eyed"
    RED = "red"
    GARDEN = "garden"
    COCOA = "cocoa"


# Cards in a field needed for 1, 2, 3 and 4 coins (None: that many coins cannot be earned).
BEANOMETER: dict[Bean, tuple[int | None, int | None, int | None, int | None]] = {
    Bean.COFFEE: (4, 7, 10, 12),
    Bean.WAX: (4, 7, 9, 11),
    Bean.BLUE: (4, 6, 8, 10),
    Bean.CHILI: (3, 6, 8, 9),
    Bean.STINK: (3, 5, 7, 8),
    Bean.GREEN: (3, 5, 6, 7),
    Bean.SOY: (2, 4, 6, 7),
    Bean.BLACK_EYED: (2, 4, 5, 6),
    Bean.RED: (2, 3, 4, 5),
    Bean.GARDEN: (None, 2, 3, None),
    Bean.COCOA: (None, 2, 3, 4),
}

COUNT: dict[Bean, int] = {
    Bean.COFFEE: 24,
    Bean.WAX: 22,
    Bean.BLUE: 20,
    Bean.CHILI: 18,
    Bean.STINK: 16,
    Bean.GREEN: 14,
    Bean.SOY: 12,
    Bean.BLACK_EYED: 10,
    Bean.RED: 8,
    Bean.GARDEN: 6,
    Bean.COCOA: 4,
}

BEANS: tuple[Bean, ...] = tuple(Bean)


def _card_ranges() -> dict[Bean, range]:
    ranges, start = {}, 0
    for bean in BEANS:
        ranges[bean] = range(start, start + COUNT[bean])
        start += COUNT[bean]
    return ranges


CARDS_OF: dict[Bean, range] = _card_ranges()
ALL_CARDS: range = range(sum(COUNT.values()))
_BEAN_OF: tuple[Bean, ...] = tuple(bean for bean in BEANS for _ in CARDS_OF[bean])


def bean_of(card: Card) -> Bean:
    """The bean type of a card id (public knowledge)."""
    if not 0 <= card < len(_BEAN_OF):
        raise ValueError(f"there is no card {card}")
    return _BEAN_OF[card]


def coins(bean: Bean, cards: int) -> int:
    """Coins a harvest of `cards` beans of this type pays: the most coins whose threshold is
    reached (Garden and Cocoa have no 1-coin threshold: two cards pay two coins)."""
    reached = [paid for paid, need in enumerate(BEANOMETER[bean], 1) if need and cards >= need]
    return max(reached, default=0)


def parse_bean(text: str) -> Bean:
    """A bean type from its name or a unique prefix of it ("bl" is ambiguous: blue, black-eyed)."""
    word = text.strip().lower()
    matches = [bean for bean in BEANS if bean.value == word]
    if not matches:
        matches = [bean for bean in BEANS if bean.value.startswith(word)] if word else []
    if len(matches) == 1:
        return matches[0]
    names = ", ".join(bean.value for bean in BEANS)
    if matches:
        options = " or ".join(bean.value for bean in matches)
        raise ValueError(f"'{text}' could be {options}; type more of the name")
    raise ValueError(f"'{text}' is not a bean; the beans are {names}")


@dataclass(frozen=True)
class Setup:
    """What the player count changes (RULES.md section 2.1, Rio Grande)."""

    players: int
    removed: tuple[Bean, ...]
    hand_sizes: tuple[int, ...]  # cards dealt, starting with the start player, clockwise
    start_fields: int
    can_buy_field: bool
    field_cost: int
    draw_count: int
    exhaustions_to_end: int

    @property
    def beans(self) -> tuple[Bean, ...]:
        return tuple(bean for bean in BEANS if bean not in self.removed)

    @property
    def deck(self) -> tuple[Card, ...]:
        """The ids of the cards in play, ascending."""
        return tuple(card for bean in self.beans for card in CARDS_OF[bean])


MIN_PLAYERS = 3
MAX_PLAYERS = 7


def setup_for(players: int) -> Setup:
    if players == 3:
        return Setup(3, (Bean.COCOA,), (5, 5, 5), 3, False, 3, 3, 2)
    if players in (4, 5):
        return Setup(players, (Bean.COFFEE,), (5,) * players, 2, True, 3, 3, 3)
    if players in (6, 7):
        sizes = (3, 4, 5) + (6,) * (players - 3)
        return Setup(players, (Bean.COCOA, Bean.GARDEN), sizes, 2, True, 2, 4, 3)
    raise ValueError(f"Bohnanza here is for {MIN_PLAYERS} to {MAX_PLAYERS} players, not {players}")
