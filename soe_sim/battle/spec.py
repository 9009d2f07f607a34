"""Battle descriptions: blocks, combat-card choices, battle cards, decks, and the CLI spec syntax.

The compact spec syntax (also used by ``soe-sim odds``): blocks as ``<SP><arm>[flag]``
(arm ``i`` infantry, ``c`` cavalry, ``l`` leader; flag ``f`` forced-marched, ``r`` reorganizing —
defender only), comma-separated, with ``/`` separating directions. For the attacker each group is
one attacking direction (``"4i,4i/3c"`` = two blocks along one road, one along another, SoE 7.34);
for the defender the first group is the force in the area and every further group is supporting
blocks that entered along one more direction (SoE 7.34 Supporting Blocks).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import IntEnum
from functools import cached_property
from typing import Mapping, Sequence

import numpy as np

from soe_sim.battle import nb
from soe_sim.data.cards import BATTLE_LIMIT_KEYS, effect_value_range
from soe_sim.data.enums import Arm
from soe_sim.errors import Problem, SoeInputError, did_you_mean


class Withdraw(IntEnum):
    """Withdraw order on the defenders (SoE 7.2); mirrored by ``nb.WITHDRAW_*``."""

    NONE = nb.WITHDRAW_NONE
    WITHDRAW = nb.WITHDRAW_OK
    BLOCKED = nb.WITHDRAW_BLOCKED


SIDES = ("polish", "soviet")


def _as_withdraw(value) -> Withdraw:
    """A :class:`Withdraw` from the enum, its value or its name (``"withdraw"``, ``"blocked"``, ``"none"``)."""
    if isinstance(value, Withdraw):
        return value
    if isinstance(value, str):
        names = [w.name.lower() for w in Withdraw]
        if value.strip().lower() in names:
            return Withdraw[value.strip().upper()]
        raise SoeInputError(Problem("withdraw", "", "", value, "expected one of " + ", ".join(names)
                                    + " (or Withdraw.NONE / .WITHDRAW / .BLOCKED)", did_you_mean(value, names)))
    try:
        return Withdraw(value)
    except ValueError:
        raise SoeInputError(Problem("withdraw", "", "", value,
                                    "expected Withdraw.NONE, .WITHDRAW or .BLOCKED (0, 1, 2)")) from None


def resolve_battle_card(value, side: str, option: str) -> "BattleCard | None":
    """A battle card (SoE 7.41.1) given as a :class:`BattleCard`, a card id or name of ``side``'s deck, or
    a raw effect code such as ``enemy_extra_loss:1``; ``None`` or ``""`` for none. A card whose text limits it
    to the other role ("Attacker only", "Defender only") is refused."""
    if value is None or isinstance(value, BattleCard):
        card = value
    elif isinstance(value, (str, int)) and not isinstance(value, bool):
        if isinstance(value, str) and not value.strip():
            return None
        if isinstance(value, str) and ":" in value:
            card = BattleCard.from_effect(value, source=option)
        else:
            from soe_sim.battle.decks import battle_card

            card = battle_card(side, value, option)
    else:
        raise SoeInputError(Problem(option, "", "", repr(value),
                                    "expected a BattleCard, a card id or name, or an effect code like "
                                    "`enemy_extra_loss:1`"))
    if card is not None:
        card.check_role(option == "--attacker-battle-card", option)
    return card
ARM_LETTERS = {"i": Arm.INFANTRY, "c": Arm.CAVALRY, "l": Arm.LEADER}
_TOKEN = re.compile(r"^(?P<sp>-?\d+)(?P<arm>[a-z])(?P<flags>[a-z]*)$")
MAX_SP = 4  # SoE 2.1: blocks have up to 4 SP (validated against the rules' division_max_sp)


@dataclass(frozen=True)
class Block:
    """One block in a battle.

    Parameters
    ----------
    sp : int
        Current strength points, 1..4 (SoE 2.1); leaders have 1 (SoE 9.0).
    arm : Arm
    forced_march : bool
        Forced-marched this phase: fights at half strength (SoE 7.2).
    reorganizing : bool
        Defender executing a Reorganization order: half strength (SoE 7.2).
    """

    sp: int
    arm: Arm = Arm.INFANTRY
    forced_march: bool = False
    reorganizing: bool = False

    def __post_init__(self):
        object.__setattr__(self, "arm", Arm(self.arm))

    @property
    def half_strength(self) -> bool:
        return self.forced_march or self.reorganizing

    def token(self) -> str:
        letter = {Arm.INFANTRY: "i", Arm.CAVALRY: "c", Arm.LEADER: "l"}[self.arm]
        return f"{self.sp}{letter}{'f' if self.forced_march else ''}{'r' if self.reorganizing else ''}"


@dataclass(frozen=True)
class BattleCard:
    """Effect of a battle card (SoE 7.41.1) as the ``nb.E_*`` vector."""

    name: str = ""
    combat_value: int = 0
    enemy_extra_loss: int = 0
    own_loss_reduction: int = 0
    negate_flank: int = 0
    cancel_fortification: int = 0
    cancel_enemy_battle_card: int = 0
    # play limits from the card's text (data key ``attacker_only`` / ``defender_only`` / ``rail_line``):
    # when the card may be played, not what it does (the vector ignores them)
    attacker_only: bool = False
    defender_only: bool = False
    rail_line: bool = False

    LIMIT_KEYS = BATTLE_LIMIT_KEYS

    KEYS = (
        "combat_value",
        "enemy_extra_loss",
        "own_loss_reduction",
        "negate_flank",
        "cancel_fortification",
        "cancel_enemy_battle_card",
    )

    def vector(self) -> np.ndarray:
        return np.array([getattr(self, k) for k in self.KEYS], dtype=np.int64)

    @classmethod
    def from_effect(cls, effect: str, name: str = "", source: str = "--battle-card") -> "BattleCard":
        """Parse ``"enemy_extra_loss:1;combat_value:2"``."""
        values: dict[str, int] = {}
        limits: dict[str, bool] = {}
        for item in filter(None, (p.strip() for p in effect.split(";"))):
            key, _, raw = item.partition(":")
            key = key.strip()
            if key in cls.LIMIT_KEYS:
                limits[key] = raw.strip() not in ("0", "")
                continue
            if key not in cls.KEYS:
                from soe_sim.errors import did_you_mean

                raise SoeInputError(
                    Problem(source, name, "effect", item, "unknown battle-card effect key; allowed: "
                            + ", ".join(cls.KEYS), did_you_mean(key, cls.KEYS))
                )
            try:
                values[key] = int(raw.strip().lstrip("+") or 1)
            except ValueError:
                raise SoeInputError(
                    Problem(source, name, "effect", item, "effect value must be an integer")
                ) from None
            lo, hi = effect_value_range(key)  # the card files' range (soe_sim.data.cards)
            if not lo <= values[key] <= hi:
                raise SoeInputError(Problem(source, name, "effect", item, f"'{key}' out of range; expected {lo}..{hi}"))
        return cls(name=name or effect, **values, **limits)

    def check_role(self, attacker: bool, option: str) -> None:
        """Raise :class:`SoeInputError` when the card's text forbids its play by this side ("Attacker
        only" / "Defender only"; SoE 7.41.1)."""
        if self.attacker_only and not attacker:
            raise SoeInputError(Problem(option, "", "", self.name, "the card says 'Attacker only'",
                                        "give it as --attacker-battle-card"))
        if self.defender_only and attacker:
            raise SoeInputError(Problem(option, "", "", self.name, "the card says 'Defender only'",
                                        "give it as --defender-battle-card"))


@dataclass(frozen=True)
class CardChoice:
    """Combat card (SoE 7.41.2): drawn blind (``hand is None``) or played from hand at printed value."""

    hand: int | None = None

    @classmethod
    def parse(cls, text: "str | int | CardChoice | None", option: str = "--card") -> "CardChoice":
        if isinstance(text, CardChoice):
            return text
        if text is None or text == "draw":
            return cls(None)
        if isinstance(text, (int, np.integer)):
            return cls(int(text))
        m = re.fullmatch(r"hand:(-?\d+)", str(text).strip())
        if not m:
            raise SoeInputError(
                Problem(option, "", "", text, "expected `draw` or `hand:V` (V = printed combat modifier)")
            )
        return cls(int(m.group(1)))

    def __str__(self) -> str:
        return "draw" if self.hand is None else f"hand:{self.hand}"


@dataclass(frozen=True)
class Deck:
    """Combat-modifier composition of a deck's draw pile: value → number of cards."""

    counts: tuple[tuple[int, int], ...]

    @classmethod
    def from_mapping(cls, counts: Mapping[int, int], source: str = "deck") -> "Deck":
        items = tuple(sorted((int(v), int(c)) for v, c in counts.items() if int(c) > 0))
        if not items:
            raise SoeInputError(Problem(source, "", "", dict(counts), "a deck needs at least one card"))
        return cls(items)

    @classmethod
    def parse(cls, text: str, option: str = "--deck") -> "Deck":
        """Parse ``"0:5,1:15,2:20,3:10,4:5"`` (modifier:count pairs)."""
        counts: dict[int, int] = {}
        for token in filter(None, (t.strip() for t in str(text).split(","))):
            m = re.fullmatch(r"(-?\d+):(\d+)", token)
            if not m:
                raise SoeInputError(
                    Problem(option, "", "", token, "malformed deck entry; expected `modifier:count`, "
                            "e.g. `0:5,1:15,2:20,3:10,4:5`")
                )
            value, count = int(m.group(1)), int(m.group(2))
            if value in counts:
                raise SoeInputError(Problem(option, "", "", token, f"modifier {value} listed twice"))
            counts[value] = count
        if not counts or sum(counts.values()) == 0:
            raise SoeInputError(Problem(option, "", "", text, "a deck needs at least one card"))
        return cls.from_mapping(counts, option)

    @property
    def values(self) -> np.ndarray:
        return np.array([v for v, _ in self.counts], dtype=np.int64)

    @property
    def cards(self) -> np.ndarray:
        return np.array([c for _, c in self.counts], dtype=np.int64)

    @property
    def size(self) -> int:
        return int(self.cards.sum())

    def probabilities(self) -> np.ndarray:
        cards = self.cards
        return cards / cards.sum()

    def __contains__(self, value: int) -> bool:
        return any(v == value for v, _ in self.counts)

    def __str__(self) -> str:
        return ",".join(f"{v}:{c}" for v, c in self.counts)


def parse_blocks(spec: str, role: str) -> tuple[tuple[Block, ...], ...]:
    """Parse a side spec into groups of blocks (see module docstring).

    Raises
    ------
    SoeInputError
        One problem naming the bad token and what is allowed.
    """
    option = f"--{role}"
    if spec is None or not str(spec).strip():
        raise SoeInputError(Problem(option, "", "", spec, f"the {role} needs at least one block, e.g. `4i,3c`"))
    allowed_flags = "f" if role == "attacker" else "fr"
    groups = []
    for group_text in str(spec).split("/"):
        tokens = [t.strip().lower() for t in group_text.split(",")]
        blocks = []
        for token in tokens:
            if not token:
                raise SoeInputError(
                    Problem(option, "", "", spec, "empty block or direction in spec; write blocks as "
                            "`<SP><arm>[flag]` separated by `,`, directions by `/`")
                )
            m = _TOKEN.match(token)
            if not m:
                raise SoeInputError(
                    Problem(option, "", "", token, "bad block token; expected `<SP><arm>[flag]` "
                            f"like `4i`, `3c`, `2if` (arm i/c/l, flags {'/'.join(allowed_flags)})")
                )
            sp, letter, flags = int(m["sp"]), m["arm"], m["flags"]
            if letter not in ARM_LETTERS:
                raise SoeInputError(
                    Problem(option, "", "", token, f"unknown arm letter `{letter}`; allowed: "
                            "i (infantry), c (cavalry), l (leader)")
                )
            if not 1 <= sp <= MAX_SP:
                raise SoeInputError(
                    Problem(option, "", "", token, f"SP {sp} outside 1–{MAX_SP} (SoE 2.1)")
                )
            if ARM_LETTERS[letter] == Arm.LEADER and sp != 1:
                raise SoeInputError(Problem(option, "", "", token, "leader blocks have 1 SP (SoE 9.0)"))
            bad = [f for f in flags if f not in allowed_flags] or (
                [flags] if len(set(flags)) != len(flags) else []
            )
            if bad:
                raise SoeInputError(
                    Problem(option, "", "", token, f"unknown or repeated flag `{bad[0]}`; allowed for the "
                            f"{role}: " + (" f (forced march)" if role == "attacker"
                                           else " f (forced-marched in), r (reorganizing)"))
                )
            blocks.append(Block(sp, ARM_LETTERS[letter], "f" in flags, "r" in flags))
        groups.append(tuple(blocks))
    return tuple(groups)


@dataclass(frozen=True)
class Battle:
    """A Strike of the Eagle battle, everything the resolver needs (SoE 7.41).

    Parameters
    ----------
    attacker : sequence of sequence of Block
        Attacking blocks grouped by the direction they enter along (SoE 7.34).
    defender : sequence of Block
        Defending blocks in the area (may be empty when a garrison defends alone).
    support_directions : int
        Directions along which supporting blocks entered the area (SoE 7.34); supporting blocks
        themselves belong in ``defender``.
    garrison, defend, fortified : bool
        Garrison present (SoE 3.0); Defend Area order (SoE 7.2); every attack comes from fortified
        directions (SoE 1.2).
    withdraw : Withdraw
        Withdraw order on the defenders (SoE 7.2).
    attacker_side : {"polish", "soviet"}
        Picks each side's deck.
    attacker_card, defender_card : CardChoice
        Combat card drawn blind or played from hand (SoE 7.41.2).
    attacker_battle_card, defender_battle_card : BattleCard or None
        Battle cards played (SoE 7.41.1).
    initiative_holder : {"attacker", "defender"}
    initiative_level : int
        Front initiative before the battle (SoE 6.1).
    """

    attacker: tuple[tuple[Block, ...], ...]
    defender: tuple[Block, ...] = ()
    support_directions: int = 0
    garrison: bool = False
    defend: bool = False
    fortified: bool = False
    withdraw: Withdraw = Withdraw.NONE
    attacker_side: str = "soviet"
    attacker_card: CardChoice = field(default_factory=CardChoice)
    defender_card: CardChoice = field(default_factory=CardChoice)
    attacker_battle_card: BattleCard | None = None
    defender_battle_card: BattleCard | None = None
    initiative_holder: str = "attacker"
    initiative_level: int = 1

    def __post_init__(self):
        norm_att = tuple(tuple(_as_block(b) for b in group) for group in self.attacker)
        object.__setattr__(self, "attacker", norm_att)
        object.__setattr__(self, "defender", tuple(_as_block(b) for b in self.defender))
        object.__setattr__(self, "withdraw", _as_withdraw(self.withdraw))
        if self.attacker_side in SIDES:  # else validate() names the side
            defender_side = "polish" if self.attacker_side == "soviet" else "soviet"
            for attr, side, option in (("attacker_battle_card", self.attacker_side, "--attacker-battle-card"),
                                       ("defender_battle_card", defender_side, "--defender-battle-card")):
                object.__setattr__(self, attr, resolve_battle_card(getattr(self, attr), side, option))
        object.__setattr__(self, "attacker_card", CardChoice.parse(self.attacker_card, "--attacker-card"))
        object.__setattr__(self, "defender_card", CardChoice.parse(self.defender_card, "--defender-card"))
        self.validate()

    def validate(self) -> None:
        problems = []
        if not any(self.attacker) or any(len(g) == 0 for g in self.attacker):
            problems.append(Problem("--attacker", "", "", self.attacker,
                                    "every attacking direction needs at least one block"))
        if not self.defender and not self.garrison:
            problems.append(Problem("--defender", "", "", None, "the defender needs at least one block or a garrison"))
        if self.withdraw != Withdraw.NONE and not self.defender:
            flag = "--withdraw" if self.withdraw == Withdraw.WITHDRAW else "--withdraw-blocked"
            problems.append(Problem(flag, "", "", None, "a Withdraw order needs defending blocks (SoE 7.2)"))
        if sum(b.reorganizing for b in self.defender) > 1:
            problems.append(Problem("--defender", "", "", "r", "only one block in an area can reorganize (SoE 7.2)"))
        if any(b.reorganizing for g in self.attacker for b in g):
            problems.append(Problem("--attacker", "", "", "r", "attackers cannot be reorganizing (SoE 7.2)"))
        if self.attacker_side not in SIDES:
            problems.append(Problem("--attacker-side", "", "", self.attacker_side, "expected `polish` or `soviet`"))
        if self.initiative_holder not in ("attacker", "defender"):
            problems.append(Problem("--initiative", "", "", self.initiative_holder,
                                    "holder must be `attacker` or `defender`"))
        if self.initiative_level < 1:
            problems.append(Problem("--initiative", "", "", self.initiative_level,
                                    "level must be ≥ 1 (SoE 6.1: no 0 on the track)"))
        if self.support_directions < 0:
            problems.append(Problem("--support", "", "", self.support_directions, "must be ≥ 0"))
        elif self.support_directions > len(self.defender):  # SoE 7.34: supporting blocks are defenders
            problems.append(Problem("--support", "", "", self.support_directions,
                                    f"support from {self.support_directions} direction(s) needs at least as many "
                                    f"defending blocks ({len(self.defender)} given): the supporting blocks defend too"))
        if problems:
            raise SoeInputError(problems)

    @classmethod
    def from_spec(cls, attacker: str, defender: str = "", *, support: int = 0, **kwargs) -> "Battle":
        """Build a battle from the compact spec syntax (module docstring).

        ``support`` is the number of supporting directions when ``defender`` has no ``/`` groups; a spec
        with them already gives that number, so both together are refused."""
        att_groups = parse_blocks(attacker, "attacker")
        if defender and str(defender).strip():
            def_groups = parse_blocks(defender, "defender")
        else:
            def_groups = ((),)
        defenders = tuple(b for g in def_groups for b in g)
        slash_directions = len(def_groups) - 1
        if support > 0 and slash_directions:
            # both say how many directions the supporting blocks came from: adding them would count a
            # direction twice (``2i/2i --support 1`` is one supporting direction, not two)
            raise SoeInputError(Problem(
                "--support", "", "", support,
                f"give support either with '/' in --defender ({defender!r}: {slash_directions} supporting "
                f"direction{'s' if slash_directions != 1 else ''}) or with --support, not both",
                "drop --support" if support == slash_directions else "drop --support or the '/'"))
        return cls(att_groups, defenders, support_directions=support or slash_directions, **kwargs)

    @property
    def defender_side(self) -> str:
        return "polish" if self.attacker_side == "soviet" else "soviet"

    @property
    def attack_directions(self) -> int:
        return len(self.attacker)

    def attacker_spec(self) -> str:
        return "/".join(",".join(b.token() for b in g) for g in self.attacker)

    def defender_spec(self) -> str:
        return ",".join(b.token() for b in self.defender)

    @cached_property
    def arrays(self) -> dict[str, np.ndarray]:
        """Flat kernel inputs of this battle (cached; the battle is immutable)."""
        att = [b for g in self.attacker for b in g]
        direction = [i for i, g in enumerate(self.attacker) for _ in g]
        def vec(seq, attr, dtype):
            return np.array([getattr(b, attr) for b in seq], dtype=dtype)
        return {
            "att_sp": vec(att, "sp", np.int64),
            "att_half": vec(att, "forced_march", np.bool_),
            "att_arm": np.array([int(b.arm) for b in att], dtype=np.int64),
            "att_direction": np.array(direction, dtype=np.int64),
            "def_sp": vec(self.defender, "sp", np.int64),
            "def_half": np.array([b.half_strength for b in self.defender], dtype=np.bool_),
            "def_arm": np.array([int(b.arm) for b in self.defender], dtype=np.int64),
            "att_effect": (self.attacker_battle_card or BattleCard()).vector(),
            "def_effect": (self.defender_battle_card or BattleCard()).vector(),
        }


def _as_block(b) -> Block:
    if isinstance(b, Block):
        return b
    if isinstance(b, (int, np.integer)):
        return Block(int(b))
    if isinstance(b, str):
        (group,) = parse_blocks(b, "defender")
        (block,) = group
        return block
    return Block(*b)


def battles_from_specs(specs: Sequence[Mapping]) -> list[Battle]:
    """Build many battles from dicts of :meth:`Battle.from_spec` arguments."""
    return [Battle.from_spec(**dict(s)) for s in specs]
