"""Enumerations shared by the data files, the engine and the plots.

Every categorical value in ``data/`` (a front, a side, a territory, an arm …) is an :class:`enum.IntEnum`
here, so Python code compares names while numpy arrays store small integers. Numba cannot use
``IntEnum`` members inside ``@njit`` kernels, so each enum is mirrored by a frozen ``NamedTuple``
instance (``FRONT``, ``SIDE``, …) whose fields are plain ints; numba freezes global named tuples as
compile-time constants::

    from soe_sim.data.enums import FRONT

    @numba.njit
    def on_north_front(front_arr, i):
        return front_arr[i] == FRONT.NORTH

The integer codes are part of the engine contract: arrays built by the loaders use exactly these.
"""
from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple

__all__ = [
    "ARM",
    "CARD_FRONT",
    "EVENT_KIND",
    "FRONT",
    "LINK",
    "SIDE",
    "TERRITORY",
    "Arm",
    "CardFront",
    "EventKind",
    "Front",
    "LeaderAbility",
    "LinkKind",
    "Nation",
    "Side",
    "Territory",
    "UnitClass",
    "enum_values",
    "parse_enum",
]


class _SlugEnum(IntEnum):
    """IntEnum whose data-file spelling is the lowercase member name with ``_`` → ``-``."""

    @property
    def slug(self) -> str:
        """The spelling used in the data files (``"ukrainian-unr"``)."""
        return self.name.lower().replace("_", "-")

    @classmethod
    def from_slug(cls, text: str):
        """Member for a data-file spelling; raises ``KeyError`` when unknown."""
        return cls[str(text).strip().upper().replace("-", "_")]

    @classmethod
    def slugs(cls) -> list[str]:
        """All data-file spellings in code order."""
        return [m.slug for m in cls]


class Side(_SlugEnum):
    """The two players (``side`` columns)."""

    POLISH = 0
    SOVIET = 1


class Front(_SlugEnum):
    """Map half on either side of the A4–K4 front line (SoE 1.1)."""

    NORTH = 0
    SOUTH = 1


class CardFront(_SlugEnum):
    """Where a card event or a leader may be used (SoE 9.0, 10.0)."""

    NORTH = 0
    SOUTH = 1
    ANY = 2


class Territory(_SlugEnum):
    """National colouring of an area (SoE 1.4 note); ``RUSSIA`` includes Soviet Ukraine."""

    POLAND = 0
    LITHUANIA = 1
    GERMANY = 2
    CONTESTED = 3
    RUSSIA = 4


class Arm(_SlugEnum):
    """Block arm (SoE 2.0, 9.0)."""

    INFANTRY = 0
    CAVALRY = 1
    LEADER = 2


class UnitClass(_SlugEnum):
    """Block size class (SoE 2.1)."""

    DIVISION = 0
    BRIGADE = 1
    LEADER = 2


class Nation(_SlugEnum):
    """Nationality of a block (allied contingents are handled by special rules)."""

    POLISH = 0
    SOVIET = 1
    UKRAINIAN_UNR = 2
    UKRAINIAN_UHA = 3
    LITHUANIAN = 4
    BELARUSIAN = 5
    COSSACK = 6
    RUSSIAN_VOLUNTEER = 7
    LATVIAN = 8
    LITHUANIAN_BELARUSIAN = 9


class LinkKind(_SlugEnum):
    """Link type as a bit set: ``kind & LinkKind.RAIL`` tests for a railway (SoE 1.0, 7.31, 7.6)."""

    ROAD = 1
    RAIL = 2
    BOTH = 3


class EventKind(_SlugEnum):
    """Card event type (SoE 3.4)."""

    NONE = 0
    HISTORICAL = 1
    BATTLE = 2
    REACTION = 3


class LeaderAbility(_SlugEnum):
    """Leader special abilities (SoE 9.0); spelled with underscores in ``leaders.toml``."""

    @property
    def slug(self) -> str:
        """The spelling used in ``leaders.toml`` (``"any_order"``)."""
        return self.name.lower()

    @classmethod
    def from_slug(cls, text: str):
        """Member for a data-file spelling; raises ``KeyError`` when unknown."""
        return cls[str(text).strip().upper()]

    ANY_ORDER = 0
    RECON = 1
    FORCED_MARCH_OUT_FULL_STRENGTH = 2
    FREE_DEFEND = 3
    REORGANIZE = 4


def enum_values(enum_cls) -> list[str]:
    """Data-file spellings of ``enum_cls`` (for messages and suggestions)."""
    return enum_cls.slugs()


def parse_enum(enum_cls, text):
    """Return the member of ``enum_cls`` spelled ``text`` in a data file, or ``None``."""
    try:
        return enum_cls.from_slug(text)
    except (KeyError, AttributeError):
        return None


# --- numba mirrors -------------------------------------------------------------------------------
# Plain-int named tuples; numba treats global instances as constants inside @njit code.


class _SideC(NamedTuple):
    POLISH: int = int(Side.POLISH)
    SOVIET: int = int(Side.SOVIET)
    NONE: int = -1  # e.g. an area that is no supply source


class _FrontC(NamedTuple):
    NORTH: int = int(Front.NORTH)
    SOUTH: int = int(Front.SOUTH)
    ANY: int = int(CardFront.ANY)


class _TerritoryC(NamedTuple):
    POLAND: int = int(Territory.POLAND)
    LITHUANIA: int = int(Territory.LITHUANIA)
    GERMANY: int = int(Territory.GERMANY)
    CONTESTED: int = int(Territory.CONTESTED)
    RUSSIA: int = int(Territory.RUSSIA)


class _ArmC(NamedTuple):
    INFANTRY: int = int(Arm.INFANTRY)
    CAVALRY: int = int(Arm.CAVALRY)
    LEADER: int = int(Arm.LEADER)


class _LinkC(NamedTuple):
    ROAD: int = int(LinkKind.ROAD)
    RAIL: int = int(LinkKind.RAIL)
    BOTH: int = int(LinkKind.BOTH)


class _EventKindC(NamedTuple):
    NONE: int = int(EventKind.NONE)
    HISTORICAL: int = int(EventKind.HISTORICAL)
    BATTLE: int = int(EventKind.BATTLE)
    REACTION: int = int(EventKind.REACTION)


SIDE = _SideC()
FRONT = _FrontC()
CARD_FRONT = FRONT
TERRITORY = _TerritoryC()
ARM = _ArmC()
LINK = _LinkC()
EVENT_KIND = _EventKindC()
