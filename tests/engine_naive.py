"""A plain-Python version of the engine-foundation rules: the test oracle for soe_sim/engine/nb.py.

Written from the rulebook and deliberately unlike the kernels: it works on area *ids* with dicts
and sets, builds its adjacency from ``game_map.links`` (not the CSR arrays), finds clear-path
distances by repeated relaxation over the link list (Bellman–Ford style) instead of a queue, grows
movement ranges layer by layer with sets, and moves the VP marker one space at a time. Constants
come from the rules file through plain lookups.

Sides are the strings ``"polish"`` / ``"soviet"``; ``None`` is nobody / neutral.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

POL, SOV = "polish", "soviet"
SIDES = (POL, SOV)
INF = float("inf")


def other(side):
    return SOV if side == POL else POL


def side_name(code):
    return None if code < 0 else SIDES[int(code)]


@dataclass
class Board:
    """The map as plain Python: ids, links (with kinds) and per-area facts."""

    ids: list
    links: list  # (a, b, kind) with kind in {"road", "rail", "both"}
    vp: dict
    key_city: set
    eastern_links: set
    sources: dict  # side -> set of supply-source areas
    front: dict = field(default_factory=dict)  # area -> "north" / "south" (SoE 1.1)

    @classmethod
    def from_map(cls, game_map):
        a = game_map.areas
        ids = list(a["id"])
        links = [(str(x), str(y), str(k)) for x, y, k in zip(game_map.links["a"], game_map.links["b"],
                                                             game_map.links["kind"])]
        vp = {i: int(v) for i, v in zip(ids, a["vp"])}
        key = {i for i, g in zip(ids, a["garrison"]) if g}
        east = {i for i, e in zip(ids, a["eastern_link"]) if e}
        sources = {POL: {i for i, s in zip(ids, a["supply_source"]) if s == POL},
                   SOV: {i for i, s in zip(ids, a["supply_source"]) if s == SOV} | east}
        front = {i: str(f) for i, f in zip(ids, a["front"])}
        return cls(ids, links, vp, key, east, sources, front)

    def directed(self, rail_only=False):
        """Every link in both directions, as (from, to) pairs."""
        out = []
        for a, b, k in self.links:
            if rail_only and k not in ("rail", "both"):
                continue
            out.append((a, b))
            out.append((b, a))
        return out

    def neighbours(self, area):
        return sorted({b for a, b in self.directed() if a == area})

    def may_enter(self, side, area):
        # SoE 1.4: Eastern Links are accessible to Soviet blocks only
        return side == SOV or area not in self.eastern_links


@dataclass
class Block:
    side: str
    arm: str  # infantry / cavalry / leader
    area: str | None
    status: str  # on_map / force_pool / scheduled / destroyed_to_pool / eliminated_permanent
    sp: int
    prev: str | None = None
    arrival: int = 0


@dataclass
class Position:
    blocks: list
    garrison: dict = field(default_factory=dict)  # area -> side
    control: dict = field(default_factory=dict)  # area -> side or None
    bases: dict = field(default_factory=dict)  # area -> side: supply bases of this game (EatS II.3, G16)


ARMS = ("infantry", "cavalry", "leader")
STATUSES = ("on_map", "force_pool", "scheduled", "destroyed_to_pool", "eliminated_permanent")


def position_from_arrays(board, block_side, block_arm, block_area, block_status, block_sp, garrison_side,
                         control, block_prev_area=None, block_arrival=None, supply_base=None):
    ids = board.ids
    blocks = []
    for k in range(len(block_side)):
        area = ids[block_area[k]] if block_area[k] >= 0 else None
        prev = None
        if block_prev_area is not None and block_prev_area[k] >= 0:
            prev = ids[block_prev_area[k]]
        blocks.append(Block(SIDES[block_side[k]], ARMS[block_arm[k]], area, STATUSES[block_status[k]],
                            int(block_sp[k]), prev, int(block_arrival[k]) if block_arrival is not None else 0))
    garrison = {ids[i]: SIDES[g] for i, g in enumerate(garrison_side) if g >= 0}
    ctrl = {ids[i]: side_name(c) for i, c in enumerate(control)}
    bases = {ids[i]: SIDES[b] for i, b in enumerate(supply_base) if b >= 0} if supply_base is not None else {}
    return Position(blocks, garrison, ctrl, bases)


# --- presence -------------------------------------------------------------------------------


def blocks_in(pos, side, area):
    return [b for b in pos.blocks if b.status == "on_map" and b.side == side and b.area == area]


def enemy_areas(pos, side):
    """Areas holding enemy blocks or an enemy garrison (SoE 1.31 clear path)."""
    foe = other(side)
    out = {b.area for b in pos.blocks if b.status == "on_map" and b.side == foe and b.area is not None}
    out |= {a for a, g in pos.garrison.items() if g == foe}
    return out


# --- clear paths ------------------------------------------------------------------------------


def clear_distances(board, side, seeds, enemy, banned=None):
    """Links crossed from the nearest seed along a clear path (relaxation until nothing changes).

    A path may end in an enemy area but not pass through one; seeds in enemy areas do not count.
    """
    dist = {}
    for s in seeds:
        if s not in enemy and board.may_enter(side, s) and s != banned:
            dist[s] = 0
    edges = board.directed()
    changed = True
    while changed:
        changed = False
        for a, b in edges:
            if a not in dist or a in enemy:
                continue
            if b == banned or not board.may_enter(side, b):
                continue
            if dist[a] + 1 < dist.get(b, INF):
                dist[b] = dist[a] + 1
                changed = True
    return dist


def source_distances(board, pos, side):
    # EatS II.3 (G16): a supply base of this game (Kaunas after card 23) is a source too
    sources = board.sources[side] | {a for a, s in pos.bases.items() if s == side}
    return clear_distances(board, side, sources, enemy_areas(pos, side))


def depots(board, pos, side):
    """SoE 1.31: controlled key cities with a clear path to Warsaw / an Eastern Link. Controlled (1.3):
    the side's garrison and/or blocks occupy it, now (the recorded ``pos.control`` lags to the phase end)."""
    enemy = enemy_areas(pos, side)
    reach = source_distances(board, pos, side)
    out = set()
    for a in board.ids:
        held = bool(blocks_in(pos, side, a)) or pos.garrison.get(a) == side
        if side == SOV and a in board.eastern_links:
            out.add(a)
        elif pos.bases.get(a) == side:  # EatS II.3 (G16): a depot while no enemy block stands in it
            if a not in enemy:
                out.add(a)
        elif a in board.key_city and held and a not in enemy and a in reach:
            out.add(a)
    return out


def depot_distances(board, pos, side):
    return clear_distances(board, side, depots(board, pos, side), enemy_areas(pos, side))


def block_supply(board, pos, rules):
    """SoE 7.7 / 9.0: list of in-supply flags, one per block."""
    dd = {s: depot_distances(board, pos, s) for s in SIDES}
    out = []
    for b in pos.blocks:
        if b.status != "on_map" or b.area is None or b.arm == "leader":
            out.append(True)
            continue
        rng = rules["supply.cavalry_range"] if b.arm == "cavalry" else rules["supply.infantry_range"]
        d = dd[b.side].get(b.area)
        out.append(d is not None and d <= rng)
    return out


def apply_out_of_supply(board, pos, in_supply, rules):
    """SoE 7.71 on a copy; returns (position, counts {side: [sp_lost, eliminated, garrisons]}, vp)."""
    reach = {s: source_distances(board, pos, s) for s in SIDES}
    blocks = [Block(**vars(b)) for b in pos.blocks]
    garrison = dict(pos.garrison)
    counts = {s: [0, 0, 0] for s in SIDES}
    vp = 0
    for area, side in list(pos.garrison.items()):
        if area not in reach[side]:
            del garrison[area]
            counts[side][2] += 1
    for b, ok in zip(blocks, in_supply):
        if b.status != "on_map" or ok or b.arm == "leader":
            continue
        counts[b.side][0] += 1
        if b.sp == 1:
            b.sp, b.status, b.area = 0, "eliminated_permanent", None
            counts[b.side][1] += 1
            gain = rules["vp.out_of_supply_elimination"]
            vp += gain if b.side == SOV else -gain  # the opponent scores
        else:
            b.sp -= 1
    return Position(blocks, garrison, dict(pos.control), dict(pos.bases)), counts, vp


# --- control and VP ---------------------------------------------------------------------------


def update_control(board, pos):
    """SoE 1.3 / 7.8: (new control dict, signed VP change)."""
    new_control = {}
    vp = 0
    for a in board.ids:
        before = pos.control.get(a)
        if a in board.eastern_links:
            after = SOV
        else:
            here = {b.side for b in pos.blocks if b.status == "on_map" and b.area == a}
            if a in pos.garrison:
                here.add(pos.garrison[a])
            if len(here) == 2:
                after = before
            elif len(here) == 1:
                after = here.pop()
            else:
                after = None
        new_control[a] = after
        if after != before and a in board.key_city and board.vp[a] > 0:
            sign = {POL: 1, SOV: -1}
            if after is None:
                vp -= sign[before] * board.vp[a]
            else:
                vp += sign[after] * board.vp[a]
    return new_control, vp


def vp_add(track, delta):
    """Move the VP marker one space at a time; a side at 1 losing a VP flips to the other at 1."""
    for _ in range(abs(delta)):
        if delta > 0:
            track = 1 if track == -1 else track + 1
        else:
            track = -1 if track == 1 else track - 1
    return track


# --- movement ----------------------------------------------------------------------------------


def reachable(board, pos, side, start, allowance, rail_only=False, depot_dist=None, rail_range=None,
              blocked=frozenset()):
    """SoE 7.31 / 7.32 / 7.6: {area: links moved}, grown one layer per step.

    ``blocked``: directed (from, to) links that may not be used.
    """
    enemy = enemy_areas(pos, side)
    edges = [e for e in board.directed(rail_only) if e not in blocked]
    seen = {start: 0}
    layer = {start}
    for step in range(1, allowance + 1):
        nxt = set()
        for a in layer:
            if a != start and a in enemy:
                continue
            for x, y in edges:
                if x != a or y in seen or not board.may_enter(side, y):
                    continue
                if rail_only:
                    d = depot_dist.get(y)
                    if y in enemy or d is None or d > rail_range:
                        continue
                nxt.add(y)
        for y in nxt:
            seen[y] = step
        layer = nxt
    return seen


def retreat_targets(board, pos, side, battle_area, n_blocks, max_blocks, goal=None, blocked=frozenset(),
                    allowed=None, overflow_to_first=False):
    """SoE 7.42: (ordered candidate list of (area, distance), target per block or None).

    ``allowed`` (a set of area ids, G16): only those candidates are kept, in the same order;
    ``overflow_to_first``: blocks left without room go to the first candidate (a Withdraw, O8)."""
    enemy = enemy_areas(pos, side)
    if goal is None:
        goal = {a for a in board.key_city if pos.control.get(a) == side}
    dist = clear_distances(board, side, goal, enemy, banned=battle_area)
    cands = []
    for a in board.neighbours(battle_area):
        if (battle_area, a) in blocked or a in enemy or not board.may_enter(side, a) or a not in dist:
            continue
        cands.append((dist[a], a))
    cands.sort(key=lambda t: (t[0], board.ids.index(t[1])))
    if allowed is not None:
        cands = [(d, a) for d, a in cands if a in allowed]
    room = {}
    for _, a in cands:
        room[a] = INF if a in board.eastern_links else max_blocks - len(blocks_in(pos, side, a))
    targets = []
    for _ in range(n_blocks):
        dest = None
        for _, a in cands:
            if room[a] > 0:
                dest = a
                room[a] -= 1
                break
        if dest is None and overflow_to_first and cands:
            dest = cands[0][1]
        targets.append(dest)
    return [(a, d) for d, a in cands], targets


def overstack_pullback(board, pos, side, max_blocks, depot_dist, allowed=None):
    """SoE 7.33 on a copy: (position, {block index: new area or "eliminated"}).

    ``allowed(k, area)``: block ``k`` may end there (G16: its nation's limits); None allows all."""
    ok = allowed or (lambda k, a: True)
    blocks = [Block(**vars(b)) for b in pos.blocks]
    enemy = enemy_areas(pos, side)
    order = board.ids.index
    moves = {}

    def count(a):
        return sum(1 for b in blocks if b.status == "on_map" and b.side == side and b.area == a)

    def room(a):
        return INF if a in board.eastern_links else max_blocks - count(a)

    for area in board.ids:
        if area in board.eastern_links:
            continue
        here = [k for k, b in enumerate(blocks) if b.status == "on_map" and b.side == side and b.area == area]
        if len(here) <= max_blocks:
            continue
        here.sort(key=lambda k: (blocks[k].arrival, k))
        leaving = here[max_blocks:][::-1]
        for k in leaving:
            b = blocks[k]
            dest = None
            p = b.prev
            if (p is not None and p != area and p not in enemy and board.may_enter(side, p) and room(p) > 0
                    and ok(k, p)):
                dest = p
            else:
                options = [(depot_dist[a], order(a), a) for a in board.neighbours(area)
                           if a not in enemy and a in depot_dist and board.may_enter(side, a) and room(a) > 0
                           and ok(k, a)]
                if options:
                    dest = min(options)[2]
            if dest is None:
                b.area, b.status, b.sp = None, "eliminated_permanent", 0
                moves[k] = "eliminated"
            else:
                b.prev, b.area = area, dest
                moves[k] = dest
    return Position(blocks, dict(pos.garrison), dict(pos.control), dict(pos.bases)), moves


def garrison_replacement(board, pos):
    """SoE 8.1: {side: set of key cities where it may place a garrison}."""
    out = {}
    for s in SIDES:
        reach = source_distances(board, pos, s)
        out[s] = {a for a in board.key_city
                  if a not in pos.garrison and blocks_in(pos, s, a) and not blocks_in(pos, other(s), a)
                  and a in reach}
    return out


# --- random positions for property tests -------------------------------------------------------


def random_arrays(rng: np.random.Generator, game_map, n_blocks=None, hot=None):
    """A random (not necessarily legal) position as state-like arrays.

    Blocks cluster in ``hot`` random areas so that stacks, enemy walls and cut-off cities occur.
    Polish blocks never stand in an Eastern Link. Returns a dict of arrays.
    """
    n = game_map.n_areas
    if n_blocks is None:
        n_blocks = int(rng.integers(10, 70))
    if hot is None:
        hot = rng.choice(n, size=int(rng.integers(5, 40)), replace=False)
    east = np.flatnonzero(game_map.eastern_link)
    side = rng.integers(0, 2, n_blocks).astype(np.int8)
    arm = rng.choice(3, size=n_blocks, p=[0.6, 0.3, 0.1]).astype(np.int8)
    max_sp = np.where(arm == 2, 1, rng.integers(2, 5, n_blocks)).astype(np.int8)
    sp = np.array([rng.integers(1, m + 1) for m in max_sp], dtype=np.int8)
    status = rng.choice(5, size=n_blocks, p=[0.85, 0.05, 0.04, 0.03, 0.03]).astype(np.int8)
    area = rng.choice(hot, size=n_blocks).astype(np.int16)
    for k in range(n_blocks):
        if side[k] == 0 and game_map.eastern_link[area[k]]:
            area[k] = rng.choice(np.setdiff1d(hot, east)) if len(np.setdiff1d(hot, east)) else 0
    area[status != 0] = -1
    prev = np.full(n_blocks, -1, dtype=np.int16)
    for k in range(n_blocks):
        if area[k] >= 0 and rng.random() < 0.6:
            nb = game_map.adj_indices[game_map.adj_indptr[area[k]]:game_map.adj_indptr[area[k] + 1]]
            prev[k] = rng.choice(nb)
    arrival = rng.integers(0, 4, n_blocks).astype(np.int16)
    key = np.flatnonzero(game_map.garrison)
    garrison = np.full(n, -1, dtype=np.int8)
    control = np.full(n, -1, dtype=np.int8)
    for i in key:
        u = rng.random()
        if u < 0.45:
            garrison[i] = rng.integers(0, 2)
        if game_map.eastern_link[i]:
            garrison[i] = 1 if garrison[i] >= 0 else -1
            control[i] = 1
        else:
            control[i] = garrison[i] if garrison[i] >= 0 else rng.integers(-1, 2)
    for i in range(n):
        if not game_map.garrison[i] and rng.random() < 0.2:
            control[i] = rng.integers(0, 2)
    # drawn last, so the arrays above are those of the same seed before supply bases existed
    supply_base = np.full(n, -1, dtype=np.int8)
    if rng.random() < 0.5:  # EatS II.3 (G16): a base or two of either side, often where the blocks are
        for i in rng.choice(np.concatenate([hot, rng.choice(n, size=3)]), size=int(rng.integers(1, 3))):
            supply_base[i] = rng.integers(0, 2)
    return dict(block_side=side, block_arm=arm, block_max_sp=max_sp, block_sp=sp, block_status=status,
                block_area=area, block_prev_area=prev, block_arrival=arrival, garrison_side=garrison,
                control=control, supply_base=supply_base)


def position_of(board, arr):
    return position_from_arrays(board, arr["block_side"], arr["block_arm"], arr["block_area"],
                                arr["block_status"], arr["block_sp"], arr["garrison_side"], arr["control"],
                                arr["block_prev_area"], arr["block_arrival"], arr.get("supply_base"))


# --- SoE 9.0 leader orders ----------------------------------------------------------------------

ORDER_NAMES = ("forced_march_to", "forced_march_out", "recon", "move_to", "move_out", "withdraw", "defend",
               "reorganize", "rail_transport")
OUT_ORDERS = {"forced_march_out", "move_out", "withdraw", "defend", "reorganize", "rail_transport"}
WINDOWS = ("before_forced", "before_moves", "before_battles", "after_battles")


def command_range(board, side, start, rng):
    """SoE 9.0 "within N areas of his position" (L4): links counted across anything; the Poles never
    count into an Eastern Link. {area: links}."""
    seen = {start: 0}
    layer = [start]
    for step in range(1, rng + 1):
        layer = sorted({b for a in layer for b in board.neighbours(a) if b not in seen and board.may_enter(side, b)})
        for b in layer:
            seen[b] = step
    return seen


def leader_orders(board, pos, flags, orders, leaders, used, side, window, rules):
    """The leader orders ``side`` may give in ``window`` (SoE 9.0, readings L1–L7), as a set of
    ``(leader, order name, area, block or None)``.

    ``pos.blocks[i]`` is block ``i``; ``flags[i]``: dict with ``executed``, ``pinned``, ``moved``,
    ``detached``, ``rail_moved``, ``fought``, ``in_supply``, ``max_sp``; ``orders``: list of
    ``(side, order name, area, status)`` with status ``placed`` / ``executed`` / ``removed``;
    ``leaders``: {block: (ability name, range, front or None)}; ``used``: set of blocks; ``rules``:
    dict ``move`` / ``forced`` {arm: allowance}, ``rail_depot_range``, ``order_room`` (bool)."""
    foe = other(side)
    enemy = enemy_areas(pos, side)
    mine = [i for i, b in enumerate(pos.blocks) if b.status == "on_map" and b.side == side]
    # SoE 7.32: links with incoming enemy blocks standing on them are closed both ways
    closed = set()
    for b in pos.blocks:
        if b.status == "on_map" and b.side == foe and b.prev and b.prev != b.area:
            # SoE 7.31, O5: b stopped on the road only if a block of the side was there before it (or its garrison)
            earlier = [o for o in pos.blocks if o.status == "on_map" and o.side == side and o.area == b.area
                       and o.arrival < b.arrival]
            if earlier or pos.garrison.get(b.area) == side:
                closed |= {(b.area, b.prev), (b.prev, b.area)}

    def free(i):
        f = flags[i]
        return not (f["executed"] or f["pinned"] or f["moved"] or f["detached"] or f["rail_moved"])

    def dest_exists(area):
        return any(board.may_enter(side, v) and (area, v) not in closed for v in board.neighbours(area))

    def could(name, area):
        here = [i for i in mine if pos.blocks[i].area == area]
        if name == "recon":
            return True
        if name in ("forced_march_out", "move_out"):
            ok = [i for i in here if free(i) and (name == "move_out" or flags[i]["in_supply"])]
            return bool(ok) and dest_exists(area)
        if name in ("forced_march_to", "move_to"):
            kind = "forced" if name == "forced_march_to" else "move"
            for i in mine:
                b = pos.blocks[i]
                if b.area == area or not free(i) or not flags[i]["in_supply"]:
                    continue
                d = reachable(board, pos, side, b.area, rules[kind][b.arm], blocked=closed).get(area)
                if d is not None and d >= 1:
                    return True
            return False
        if name == "withdraw":
            return any(not flags[i]["executed"] for i in here) and (window != "before_battles" or
                                                                     bool(blocks_in(pos, foe, area)))
        stay = [i for i in here if not flags[i]["executed"] and pos.blocks[i].prev is None]
        if name == "defend":
            return bool(stay)
        if name == "reorganize":
            return any(flags[i]["in_supply"] and not flags[i]["moved"] and not flags[i]["detached"]
                       and pos.blocks[i].sp < flags[i]["max_sp"] for i in stay)
        if name == "rail_transport":
            cand = [i for i in stay if flags[i]["in_supply"] and not (flags[i]["moved"] or flags[i]["fought"]
                                                                     or flags[i]["detached"] or flags[i]["rail_moved"])]
            if not cand:
                return False
            dd = depot_distances(board, pos, side)
            rails = {(a, b) for a, b in board.directed(rail_only=True)}
            return any((area, v) in rails and board.may_enter(side, v) and v not in enemy
                       and v in dd and dd[v] <= rules["rail_depot_range"] for v in board.neighbours(area))
        raise ValueError(name)

    def same_type(name, area, ability):
        if ability in ("recon", "reorganize"):
            return False
        for s, t, a, status in orders:
            if s != side or t != name or a != area or status == "removed":
                continue
            if status == "placed" and name in OUT_ORDERS and name != "defend":
                continue
            return True
        return False

    out = set()
    for L, (ability, rng, front) in leaders.items():
        b = pos.blocks[L]
        if L in used or b.status != "on_map" or b.side != side or b.area is None:
            continue
        if front is not None and board.front[b.area] != front:
            continue
        if window == "after_battles" and ability != "recon":
            continue
        if ability != "reorganize" and not rules["order_room"]:
            continue
        for area in command_range(board, side, b.area, rng):
            if ability == "reorganize":
                for i in mine:
                    c = pos.blocks[i]
                    if (c.area == area and not flags[i]["executed"] and not flags[i]["detached"]
                            and flags[i]["in_supply"] and c.sp < flags[i]["max_sp"]):
                        out.add((L, "reorganize", area, i))
                continue
            names = {"recon": ["recon"], "free_defend": ["defend"],
                     "forced_march_out_full_strength": ["forced_march_out"]}.get(ability, ORDER_NAMES)
            for name in names:
                if could(name, area) and not same_type(name, area, ability):
                    out.add((L, name, area, None))
    return out

