"""Odds calculators for other combat systems of the rulebooks in the seeds.

* Soyuz 81 (seed 001, section 9): :func:`soyuz81_odds`, :func:`soyuz81_table`.
* Red Star/White Eagle (seed 003, section 9): :func:`rswe_odds`, :func:`rswe_resolve`.

Both use odds-ratio CRTs resolved by one die, so their odds are exact. Tables and constants live
in ``data/systems/<system>.toml`` (docs/data-format.md); the CLI is ``soe-sim odds --system X``.
"""
from __future__ import annotations

from soe_sim.systems.rswe import RsweOdds, load_rswe, rswe_odds, rswe_resolve, zoc_retreat_result
from soe_sim.systems.soyuz81 import Soyuz81Odds, load_soyuz81, soyuz81_odds, soyuz81_table

__all__ = [
    "RsweOdds",
    "Soyuz81Odds",
    "load_rswe",
    "load_soyuz81",
    "rswe_odds",
    "rswe_resolve",
    "soyuz81_odds",
    "soyuz81_table",
    "zoc_retreat_result",
]
