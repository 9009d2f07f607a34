"""Designer tools: rule variants, paired comparisons, sensitivity sweeps and knob tuning.

* :mod:`soe_sim.design.variant` — variants (TOML overlays on the rules, the decks and a scenario's
  values), their composition, knobs, and the engine set-up of a scenario under a variant;
* :func:`compare` — two variants on the same seeded games (``soe-sim compare``);
* :func:`sensitivity` — one-at-a-time sweeps of numeric knobs and the tornado table (``soe-sim sensitivity``);
* :func:`tune` — the knob value that brings a win rate to a target (``soe-sim tune``);
* :class:`~soe_sim.design.runner.Runner` — plays the arms with common random numbers, here or on Dask.

The user guide is docs/designer.md.

>>> from soe_sim.design import compare, load_variant          # doctest: +SKIP
>>> res = compare("tutorial", "base", "flank-1", games=500)    # doctest: +SKIP
>>> res.summary["difference"], res.summary["p_value"]          # doctest: +SKIP
"""
from __future__ import annotations

from soe_sim.design.compare import Comparison, compare
from soe_sim.design.runner import Runner
from soe_sim.design.sensitivity import Sensitivity, sensitivity
from soe_sim.design.tune import Tuning, search_crossing, tune
from soe_sim.design.variant import (
    BASE,
    Knob,
    Variant,
    builtin_variants,
    compose,
    knob_value,
    list_knobs,
    load_variant,
    parse_variant,
    resolve,
    variant_setup,
)

__all__ = [
    "BASE", "Comparison", "Knob", "Runner", "Sensitivity", "Tuning", "Variant", "builtin_variants", "compare",
    "compose", "knob_value", "list_knobs", "load_variant", "parse_variant", "resolve", "search_crossing",
    "sensitivity", "tune", "variant_setup",
]
