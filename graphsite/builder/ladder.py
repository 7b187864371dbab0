"""The four-floor ladder as SVG geometry, drawn from the same card data as the card grid (no JS, no asset)."""

from __future__ import annotations

from graphsite.builder.model import Card
from graphsite.values import frozen

WIDTH = 640
BASE_HEIGHT = 58  # the lowest floor: room for three lines of text
RISE = 22  # how much higher each floor stands than the one below
GAP = 8


@frozen
class Step:
    """One floor drawn as a step: its box and the two text lines placed inside it."""

    x: int
    y: int
    width: int
    height: int
    label: str
    title: str
    year: str
    newest: bool


@frozen
class Ladder:
    width: int
    height: int
    steps: tuple[Step, ...]


def ladder(cards: tuple[Card, ...]) -> Ladder | None:
    """Return the ladder's geometry: floor 1 at the bottom left, each floor a step up and to the right."""
    if not cards:
        return None
    count = len(cards)
    width = (WIDTH - GAP * (count - 1)) // count
    height = BASE_HEIGHT + RISE * (count - 1)
    steps = []
    for index, card in enumerate(cards):
        tall = BASE_HEIGHT + RISE * index
        steps.append(Step(x=index * (width + GAP), y=height - tall, width=width, height=tall,
                          label=card.label, title=card.title, year=card.year, newest=index == count - 1))
    return Ladder(WIDTH, height, tuple(steps))


NARROW_WIDTH = 320  # the phone variant: one floor a row, drawn at about the size it is shown (type stays ~12 px)
ROW = 46
INDENT = 18


def vertical_ladder(cards: tuple[Card, ...]) -> Ladder | None:
    """Return the phone ladder: the newest floor on top, each floor below it set one step further left."""
    if not cards:
        return None
    count = len(cards)
    steps = []
    for row, index in enumerate(reversed(range(count))):
        x = INDENT * index
        steps.append(Step(x=x, y=row * (ROW + GAP), width=NARROW_WIDTH - x, height=ROW, label=cards[index].label,
                          title=cards[index].title, year=cards[index].year, newest=index == count - 1))
    return Ladder(NARROW_WIDTH, count * ROW + (count - 1) * GAP, tuple(steps))
