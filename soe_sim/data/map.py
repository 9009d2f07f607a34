"""The theatre map: areas, links and the grid calibration, as DataFrames and numba-ready arrays.

:func:`load_map` reads ``map/areas.csv``, ``map/links.csv`` and (optionally) ``map/grid.toml``
(formats in ``docs/data-format.md``), validates them — collecting *every* problem into one
:class:`~soe_sim.errors.SoeInputError` — and returns a :class:`GameMap`.

Array conventions (all indexed by the area's row number, ``game_map.area_index[id]``):

* CSR adjacency over all links: the neighbours of area ``i`` are
  ``adj_indices[adj_indptr[i]:adj_indptr[i + 1]]`` (sorted, int32); ``adj_kind`` holds each edge's
  :class:`~soe_sim.data.enums.LinkKind` bit set and ``adj_fortified[e]`` is True when the link from
  the neighbour ``j = adj_indices[e]`` *into* area ``i`` is fortified (a defender in ``i`` attacked
  from ``j`` gets the fortification bonus; SoE 1.2).
* CSR adjacency over railway links only (``rail`` or ``both``): ``rail_indptr``/``rail_indices``.
* Per-area attributes: ``vp`` (int8), ``front`` / ``territory`` (int8 codes of
  :mod:`soe_sim.data.enums`), ``eastern_link`` / ``garrison`` (bool), ``supply_source`` (int8 side
  code or ``SIDE.NONE`` = -1), ``strategic_cubes`` (int8, shape ``(n, 3)``: infantry, cavalry,
  allied; SoE 8.5).
* ``adj_bits`` (uint64, shape ``(n + 1, BITSET_WORDS)``): the same adjacency as area sets, bit
  ``j % 64`` of word ``j // 64`` of row ``i`` set when ``j`` is a neighbour of ``i``; row ``n`` is
  the set of Eastern Links. For the engine's bitset searches (:mod:`soe_sim.engine.nb`); a map of
  more than ``64 * BITSET_WORDS`` areas gets shape ``(n + 1, 0)`` and the searches walk the CSR
  lists instead.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from soe_sim._paths import data_dir
from soe_sim.data._io import Col, Problems, Table, check_keys, is_int, read_table, read_toml
from soe_sim.data.enums import Front, LinkKind, Side, Territory
from soe_sim.errors import Problem, SoeInputError, did_you_mean

__all__ = ["GameMap", "GridCalibration", "MapArrays", "load_map", "area_bitsets", "AREA_SCHEMA", "LINK_SCHEMA",
           "BITSET_WORDS"]

BITSET_WORDS = 4  # 64-bit words of an area set (``adj_bits``): maps of up to 256 areas

CUBES_MAX = 20  # strategic cubes of one kind in an area (SoE areas have 0..3; int8 in MapArrays)

GRID_COLUMNS = "ABCDEFGHIJK"
GRID_ROWS = 8

AREA_SCHEMA = [
    Col("id", "slug"),
    Col("name", "str"),
    Col("name_pl", "str", required=False, default=""),
    Col("lon", "float", lo=-180, hi=180),
    Col("lat", "float", lo=-90, hi=90),
    Col("grid", "grid"),
    Col("front", "enum", choices=tuple(Front.slugs())),
    Col("territory", "enum", choices=tuple(Territory.slugs())),
    Col("vp", "int", lo=0, hi=100, default=0),
    Col("garrison", "bool", required=False, default=None),
    Col("fortified_toward", "slug_list", required=False, default=()),
    Col("strategic_infantry", "int", required=False, default=0, lo=0, hi=CUBES_MAX),
    Col("strategic_cavalry", "int", required=False, default=0, lo=0, hi=CUBES_MAX),
    Col("strategic_allied", "int", required=False, default=0, lo=0, hi=CUBES_MAX),
    Col("eastern_link", "bool", default=False),
    Col("supply_source", "enum", required=False, default="", allow_empty=True,
        choices=tuple(Side.slugs())),
    Col("source", "str"),
]

LINK_SCHEMA = [
    Col("a", "slug"),
    Col("b", "slug"),
    Col("kind", "enum", choices=tuple(LinkKind.slugs())),
    Col("source", "str"),
]


@dataclass(frozen=True)
class GridCalibration:
    """The A–K × 1–8 map grid against real coordinates (``map/grid.toml``).

    ``column_edges_lon`` has 12 longitudes (west edge of A … east edge of K), ``row_edges_lat`` 9
    latitudes (top of row 1 … bottom of row 8). ``tolerance`` is how many squares a stated grid may
    differ from the computed one. ``front_line`` / ``curzon_line`` are ``[lon, lat]`` polylines.
    """

    column_edges_lon: tuple = ()
    row_edges_lat: tuple = ()
    tolerance: int = 1
    front_line: tuple = ()
    curzon_line: tuple = ()

    @property
    def defined(self) -> bool:
        """True when the edges are present (grid checks and labels are possible)."""
        return len(self.column_edges_lon) == 12 and len(self.row_edges_lat) == 9

    def square(self, lon: float, lat: float) -> tuple[int, int]:
        """Grid (column index 0..10, row index 0..7) containing ``(lon, lat)``, clipped to the map."""
        col = int(np.searchsorted(np.asarray(self.column_edges_lon), lon, side="right")) - 1
        # rows run north → south: edges decrease
        row = int(np.searchsorted(-np.asarray(self.row_edges_lat), -lat, side="right")) - 1
        return min(max(col, 0), 10), min(max(row, 0), GRID_ROWS - 1)

    def inside(self, lon: float, lat: float) -> bool:
        """Whether ``(lon, lat)`` lies on the calibrated map (edges included)."""
        return (self.column_edges_lon[0] <= lon <= self.column_edges_lon[-1]
                and self.row_edges_lat[-1] <= lat <= self.row_edges_lat[0])

    def label(self, lon: float, lat: float) -> str:
        """Grid square label (``"B4"``) containing ``(lon, lat)``."""
        c, r = self.square(lon, lat)
        return f"{GRID_COLUMNS[c]}{r + 1}"


class MapArrays(NamedTuple):
    """All numba-ready arrays of a :class:`GameMap`, for passing into ``@njit`` kernels."""

    adj_indptr: np.ndarray
    adj_indices: np.ndarray
    adj_kind: np.ndarray
    adj_fortified: np.ndarray
    rail_indptr: np.ndarray
    rail_indices: np.ndarray
    vp: np.ndarray
    front: np.ndarray
    territory: np.ndarray
    eastern_link: np.ndarray
    garrison: np.ndarray
    supply_source: np.ndarray
    strategic_cubes: np.ndarray
    adj_bits: np.ndarray


def area_bitsets(adj_indptr: np.ndarray, adj_indices: np.ndarray, eastern_link: np.ndarray) -> np.ndarray:
    """The ``adj_bits`` array of a map (module docstring): row ``i < n`` the neighbours of area ``i``,
    row ``n`` the Eastern Links, each a set of ``BITSET_WORDS`` 64-bit words; ``(n + 1, 0)`` when the
    map has more than ``64 * BITSET_WORDS`` areas."""
    n = len(adj_indptr) - 1
    if n > 64 * BITSET_WORDS:
        return np.zeros((n + 1, 0), dtype=np.uint64)
    bits = np.zeros((n + 1, BITSET_WORDS), dtype=np.uint64)
    for i in range(n):
        for j in adj_indices[adj_indptr[i]:adj_indptr[i + 1]]:
            bits[i, j // 64] |= np.uint64(1) << np.uint64(j % 64)
    for j in np.flatnonzero(eastern_link):
        bits[n, j // 64] |= np.uint64(1) << np.uint64(j % 64)
    return bits


@dataclass
class GameMap:
    """A validated theatre map.

    Attributes
    ----------
    areas : pandas.DataFrame
        One row per area in file order (row number = area index); columns as in ``areas.csv``
        (``fortified_toward`` as a tuple of ids) plus ``col``/``row`` grid indices.
    links : pandas.DataFrame
        One row per undirected link: ``a``, ``b``, ``kind``, ``source``, ``ia``, ``ib`` (indices).
    area_index : dict[str, int]
        Area id → row index.
    grid : GridCalibration
        Grid calibration and the lines to draw.
    adj_indptr, adj_indices, adj_kind, adj_fortified, rail_indptr, rail_indices, vp, front,
    territory, eastern_link, garrison, supply_source, strategic_cubes : numpy.ndarray
        See the module docstring.
    """

    areas: pd.DataFrame
    links: pd.DataFrame
    area_index: dict
    grid: GridCalibration
    adj_indptr: np.ndarray
    adj_indices: np.ndarray
    adj_kind: np.ndarray
    adj_fortified: np.ndarray
    rail_indptr: np.ndarray
    rail_indices: np.ndarray
    vp: np.ndarray
    front: np.ndarray
    territory: np.ndarray
    eastern_link: np.ndarray
    garrison: np.ndarray
    supply_source: np.ndarray
    strategic_cubes: np.ndarray
    adj_bits: np.ndarray
    path: Path | None = None
    sources: dict = field(default_factory=dict)

    @property
    def n_areas(self) -> int:
        """Number of areas."""
        return len(self.areas)

    @property
    def ids(self) -> list[str]:
        """Area ids in index order."""
        return list(self.areas["id"])

    def index(self, area_id: str) -> int:
        """Index of ``area_id``; raises :class:`SoeInputError` with a suggestion when unknown."""
        try:
            return self.area_index[area_id]
        except KeyError:
            raise SoeInputError(_unknown_area_problem("map", "", "area", area_id, self.area_index)) from None

    def neighbours(self, area_id: str, rail_only: bool = False) -> list[str]:
        """Ids of the areas linked to ``area_id`` (by railway only with ``rail_only``)."""
        i = self.index(area_id)
        ptr, ind = (self.rail_indptr, self.rail_indices) if rail_only else (self.adj_indptr, self.adj_indices)
        ids = self.areas["id"].to_numpy()
        return [str(ids[j]) for j in ind[ptr[i]:ptr[i + 1]]]

    def link_kind(self, a: str, b: str) -> LinkKind | None:
        """Kind of the link between ``a`` and ``b`` or ``None`` when they are not adjacent."""
        i, j = self.index(a), self.index(b)
        lo, hi = self.adj_indptr[i], self.adj_indptr[i + 1]
        for e in range(lo, hi):
            if self.adj_indices[e] == j:
                return LinkKind(int(self.adj_kind[e]))
        return None

    def is_fortified(self, area: str, toward: str) -> bool:
        """True when a defender in ``area`` is fortified against attacks from ``toward`` (SoE 1.2)."""
        i, j = self.index(area), self.index(toward)
        for e in range(self.adj_indptr[i], self.adj_indptr[i + 1]):
            if self.adj_indices[e] == j:
                return bool(self.adj_fortified[e])
        return False

    @property
    def arrays(self) -> MapArrays:
        """The numba-ready arrays bundled in a :class:`MapArrays` named tuple.

        Every array is C-contiguous and writable: numba's array type includes the ``readonly`` flag,
        so one read-only array (pandas' ``to_numpy`` can return one) would make every kernel that
        receives the map compile a second time for copies of it (the thread pool's private copies
        are writable) — the whole game loop twice."""
        return MapArrays(*(np.require(getattr(self, f), requirements=["C", "W"]) for f in MapArrays._fields))

    def __repr__(self) -> str:
        return f"GameMap({self.n_areas} areas, {len(self.links)} links, path={self.path})"


def _unknown_area_problem(file, entry, fld, value, known) -> Problem:
    return Problem(str(file), entry, fld, value, "unknown area", did_you_mean(str(value), known))


def resolve_map_dir(path: Path | str | None) -> Path:
    """The ``map`` directory for ``path``: a map dir, a data root holding ``map/``, or the default."""
    if path is None:
        return data_dir() / "map"
    p = Path(path)
    if p.is_file():
        return p.parent
    if (p / "map" / "areas.csv").exists() or ((p / "map").is_dir() and not (p / "areas.csv").exists()):
        return p / "map"
    return p


def load_map(path: Path | str | None = None) -> GameMap:
    """Load and validate the theatre map.

    Parameters
    ----------
    path : path-like, optional
        A map directory (holding ``areas.csv``, ``links.csv``, optionally ``grid.toml``) or a data
        root holding ``map/``. Default: the built-in data (``soe_sim._paths.data_dir()``).

    Returns
    -------
    GameMap

    Raises
    ------
    SoeInputError
        With every problem found (syntax, columns, values, unknown areas, bad links, a
        disconnected map, grid squares contradicting coordinates …).
    """
    problems = Problems()
    game_map = read_map(resolve_map_dir(path), problems)
    if problems:
        raise SoeInputError(problems)
    return game_map


def _read_grid(path: Path, problems: Problems) -> GridCalibration:
    if not path.exists():
        return GridCalibration()
    doc = read_toml(path, problems)
    if doc is None:
        return GridCalibration()
    allowed = ["column_edges_lon", "row_edges_lat", "tolerance", "front_line", "curzon_line", "source",
               "sources", "notes", "meta"]
    check_keys(doc, allowed, path, "", problems, required=["column_edges_lon", "row_edges_lat"])

    def numbers(key, n):
        vals = doc.get(key)
        if vals is None:
            return ()
        if (not isinstance(vals, list) or len(vals) != n
                or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals)):
            problems.add(path, "", key, vals, f"expected a list of {n} numbers")
            return ()
        return tuple(float(v) for v in vals)

    cols = numbers("column_edges_lon", 12)
    rows = numbers("row_edges_lat", 9)
    if cols and any(b <= a for a, b in zip(cols, cols[1:])):
        problems.add(path, "", "column_edges_lon", list(cols), "longitudes must increase west → east")
        cols = ()
    if rows and any(b >= a for a, b in zip(rows, rows[1:])):
        problems.add(path, "", "row_edges_lat", list(rows), "latitudes must decrease north → south")
        rows = ()
    tol = doc.get("tolerance", 1)
    if not is_int(tol) or tol < 0:
        problems.add(path, "", "tolerance", tol, "expected an integer >= 0")
        tol = 1

    def polyline(key):
        pts = doc.get(key, [])
        ok = isinstance(pts, list) and all(
            isinstance(p, list) and len(p) == 2
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in p) for p in pts)
        if not ok:
            problems.add(path, "", key, pts, "expected a list of [lon, lat] points")
            return ()
        return tuple((float(p[0]), float(p[1])) for p in pts)

    return GridCalibration(cols, rows, tol, polyline("front_line"), polyline("curzon_line"))


def read_map(map_dir: Path, problems: Problems) -> GameMap | None:
    """Read and check a map directory, appending every problem to ``problems``.

    Returns the :class:`GameMap` (built from whatever could be parsed) or ``None`` when the area
    table is unreadable.
    """
    map_dir = Path(map_dir)
    areas_path, links_path, grid_path = map_dir / "areas.csv", map_dir / "links.csv", map_dir / "grid.toml"
    areas_t = read_table(areas_path, AREA_SCHEMA, problems)
    links_t = read_table(links_path, LINK_SCHEMA, problems, key="a")
    grid = _read_grid(grid_path, problems)
    if not areas_t.ok:
        return None
    areas = areas_t.frame

    # Duplicate ids: keep the first occurrence for indexing.
    area_index: dict[str, int] = {}
    for i, aid in enumerate(areas["id"]):
        if aid in area_index:
            problems.add(areas_path, areas_t.entry(i), "id", aid,
                         f"duplicate area id (first on line {areas_t.lines[area_index[aid]]})")
        elif aid:
            area_index[aid] = i
    _check_areas(areas_t, grid, problems)

    # --- links ---------------------------------------------------------------------------------
    links = links_t.frame.copy()
    pair_first: dict[frozenset, int] = {}
    keep = []
    for r in range(len(links)):
        a, b, kind = links["a"].iat[r], links["b"].iat[r], links["kind"].iat[r]
        where = f"line {links_t.lines[r]} ({a}–{b})"
        bad = False
        for fld, v in (("a", a), ("b", b)):
            if v and v not in area_index:
                problems.add(links_path, where, fld, v, "link to an unknown area",
                             did_you_mean(v, area_index))
                bad = True
        if a and a == b:
            problems.add(links_path, where, "b", b, "self-link: an area linked to itself")
            bad = True
        pair = frozenset((a, b))
        if not bad and pair in pair_first:
            r0 = pair_first[pair]
            k0 = links["kind"].iat[r0]
            if k0 != kind:
                problems.add(links_path, where, "kind", kind,
                             f"asymmetric link: the pair is also listed on line {links_t.lines[r0]} "
                             f"as '{k0}'; list each pair once (use 'both' for road and rail)")
            else:
                problems.add(links_path, where, "", f"{a}–{b}",
                             f"duplicate link (also on line {links_t.lines[r0]})")
            bad = True
        if kind is None:
            bad = True
        if not bad:
            pair_first[pair] = r
            keep.append(r)
    links = links.iloc[keep].reset_index(drop=True)
    links["ia"] = np.array([area_index[a] for a in links["a"]], dtype=np.int32)
    links["ib"] = np.array([area_index[b] for b in links["b"]], dtype=np.int32)
    links["kind_code"] = np.array([int(LinkKind.from_slug(k)) for k in links["kind"]], dtype=np.int8)

    n = len(areas)
    neighbour_sets: list[set[int]] = [set() for _ in range(n)]
    for ia, ib in zip(links["ia"], links["ib"]):
        neighbour_sets[ia].add(int(ib))
        neighbour_sets[ib].add(int(ia))

    # SoE 1.2: fortified_toward must name a neighbour of the area.
    fort_pairs: set[tuple[int, int]] = set()
    for i in range(n):
        for t in areas["fortified_toward"].iat[i] or ():
            if t not in area_index:
                problems.add(areas_path, areas_t.entry(i), "fortified_toward", t, "unknown area",
                             did_you_mean(t, area_index))
            elif not links_t.ok:
                continue  # no link table to check against (its own problem is reported)
            elif area_index[t] not in neighbour_sets[i]:
                near = [areas["id"].iat[j] for j in sorted(neighbour_sets[i])]
                problems.add(areas_path, areas_t.entry(i), "fortified_toward", t,
                             "fortification toward an area that is not a neighbour",
                             did_you_mean(t, near) or (f"neighbours are {', '.join(near)}" if near else None))
            else:
                fort_pairs.add((i, area_index[t]))

    # without a readable link table every area would be reported as cut off; a duplicate row (or one
    # without a valid id), which no link can reach, too: its own problem is reported
    if links_t.ok and len(area_index) == n:
        _check_connected(areas, neighbour_sets, links_path, problems)

    # --- arrays --------------------------------------------------------------------------------
    adj_indptr, adj_indices, adj_kind = _csr(n, links["ia"], links["ib"], links["kind_code"])
    rail = (links["kind_code"].to_numpy() & int(LinkKind.RAIL)) != 0
    rail_indptr, rail_indices, _ = _csr(n, links["ia"][rail], links["ib"][rail], links["kind_code"][rail])
    rows_of_edge = np.repeat(np.arange(n), np.diff(adj_indptr))
    adj_fortified = np.array([(int(i), int(j)) in fort_pairs for i, j in zip(rows_of_edge, adj_indices)],
                             dtype=np.bool_)

    def codes(col, enum_cls, missing=-1):
        return np.array([int(enum_cls.from_slug(v)) if v else missing for v in areas[col]], dtype=np.int8)

    vp = np.array([v or 0 for v in areas["vp"]], dtype=np.int8)
    garrison_col = np.array([bool(g) if g is not None else bool(v > 0) for g, v in zip(areas["garrison"], vp)])
    areas = areas.copy()
    areas["garrison"] = garrison_col
    areas["vp"] = vp.astype(int)
    cubes = np.array([[areas[c].iat[i] or 0 for c in ("strategic_infantry", "strategic_cavalry", "strategic_allied")]
                      for i in range(n)], dtype=np.int8).reshape(n, 3)
    for c in ("lon", "lat"):
        areas[c] = areas[c].astype(float)
    for c in ("strategic_infantry", "strategic_cavalry", "strategic_allied"):
        areas[c] = [int(v or 0) for v in areas[c]]
    areas["eastern_link"] = areas["eastern_link"].astype(bool)
    areas["supply_source"] = areas["supply_source"].fillna("")
    eastern_link = np.array(areas["eastern_link"].to_numpy(dtype=np.bool_))  # writable (see arrays)
    return GameMap(
        areas=areas,
        links=links,
        area_index=area_index,
        grid=grid,
        adj_indptr=adj_indptr,
        adj_indices=adj_indices,
        adj_kind=adj_kind,
        adj_fortified=adj_fortified,
        rail_indptr=rail_indptr,
        rail_indices=rail_indices,
        vp=vp,
        front=codes("front", Front),
        territory=codes("territory", Territory),
        eastern_link=eastern_link,
        garrison=garrison_col.astype(np.bool_),
        supply_source=codes("supply_source", Side),
        strategic_cubes=cubes,
        adj_bits=area_bitsets(adj_indptr, adj_indices, eastern_link),
        path=map_dir,
    )


def _csr(n: int, ia, ib, kind) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Symmetric CSR (indptr, sorted indices, per-edge kind) of an undirected edge list."""
    ia = np.asarray(ia, dtype=np.int64)
    ib = np.asarray(ib, dtype=np.int64)
    kind = np.asarray(kind, dtype=np.int8)
    src = np.concatenate([ia, ib])
    dst = np.concatenate([ib, ia])
    k = np.concatenate([kind, kind])
    order = np.lexsort((dst, src))
    src, dst, k = src[order], dst[order], k[order]
    indptr = np.zeros(n + 1, dtype=np.int32)
    np.add.at(indptr, src + 1, 1)
    indptr = np.cumsum(indptr).astype(np.int32)
    return indptr, dst.astype(np.int32), k.astype(np.int8)


def _check_areas(t: Table, grid: GridCalibration, problems: Problems) -> None:
    areas, path = t.frame, t.path
    for i in range(len(areas)):
        where = t.entry(i)
        vp, garrison = areas["vp"].iat[i], areas["garrison"].iat[i]
        # SoE 3.0: every key city can hold a garrison.
        if vp and garrison is False:
            problems.add(path, where, "garrison", False, f"a key city (vp={vp}) must allow a garrison")
        east, supply = areas["eastern_link"].iat[i], areas["supply_source"].iat[i]
        # SoE 1.31, 1.4: Eastern Links are Soviet supply sources.
        if east and supply and supply != "soviet":
            problems.add(path, where, "supply_source", supply, "an Eastern Link is a Soviet supply source")
        lon, lat, g = areas["lon"].iat[i], areas["lat"].iat[i], areas["grid"].iat[i]
        if grid.defined and lon is not None and lat is not None and not grid.inside(lon, lat):
            # grid.square clips to the edge square: "the coordinates are in K8" would hide the mistake
            fld, value = ("lon", lon) if not grid.inside(lon, grid.row_edges_lat[0]) else ("lat", lat)
            problems.add(path, where, fld, value,
                         f"the coordinates ({lon:g}, {lat:g}) are outside the map (grid.toml: lon "
                         f"{grid.column_edges_lon[0]:g}..{grid.column_edges_lon[-1]:g}, lat "
                         f"{grid.row_edges_lat[-1]:g}..{grid.row_edges_lat[0]:g})",
                         "are lon and lat swapped?" if grid.inside(lat, lon) else None)
        elif grid.defined and g and lon is not None and lat is not None:
            c, r = grid.square(lon, lat)
            gc, gr = GRID_COLUMNS.index(g[0]), int(g[1:]) - 1
            if abs(c - gc) > grid.tolerance or abs(r - gr) > grid.tolerance:
                problems.add(path, where, "grid", g,
                             f"grid square contradicts the coordinates ({lon:g}, {lat:g}) by more than "
                             f"{grid.tolerance} square(s)",
                             f"the coordinates are in {GRID_COLUMNS[c]}{r + 1}")


def _check_connected(areas: pd.DataFrame, nbrs: list[set[int]], links_path: Path, problems: Problems) -> None:
    n = len(areas)
    if n == 0:
        return
    comp = np.full(n, -1)
    comps: list[list[int]] = []
    for s in range(n):
        if comp[s] >= 0:
            continue
        stack, members = [s], []
        comp[s] = len(comps)
        while stack:
            u = stack.pop()
            members.append(u)
            for v in nbrs[u]:
                if comp[v] < 0:
                    comp[v] = len(comps)
                    stack.append(v)
        comps.append(members)
    if len(comps) > 1:
        comps.sort(key=len, reverse=True)
        ids = areas["id"].to_numpy()
        desc = []
        for c in comps[1:]:
            names = [str(ids[j]) for j in sorted(c)]
            shown = ", ".join(names[:8]) + (f", … ({len(names)} areas)" if len(names) > 8 else "")
            desc.append("{" + shown + "}")
        problems.add(links_path, "", "", f"{len(comps)} components",
                     f"the map is disconnected: the main component has {len(comps[0])} areas; cut off: "
                     + "; ".join(desc))
