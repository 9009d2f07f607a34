"""Explicit randomness: one helper turns ``seed``/``rng`` into generators and chunk streams.

Parallel work never shares a stream: :func:`chunk_seeds` spawns one child ``SeedSequence`` per chunk
of fixed size, so a result depends only on the seed and the chunking, never on the thread count.
"""
from __future__ import annotations

import numpy as np

from soe_sim.errors import Problem, SoeInputError

SeedLike = int | np.random.SeedSequence | np.random.Generator | None


def check_seed(seed: SeedLike, where: str = "seed") -> SeedLike:
    """``seed`` unchanged when it is None, a SeedSequence, a Generator, a non-negative integer or a
    sequence of them (``(seed, i)``), else a :class:`~soe_sim.errors.SoeInputError` naming it (numpy's
    own error would surface as a traceback, or, inside a game loop that catches errors, as a crash)."""
    if seed is None or isinstance(seed, (np.random.SeedSequence, np.random.Generator)):
        return seed
    parts = seed if isinstance(seed, (tuple, list)) else (seed,)
    for part in parts:
        if isinstance(part, bool) or not isinstance(part, (int, np.integer)) or int(part) < 0:
            raise SoeInputError(Problem(where, "", "", seed, "the seed must be a non-negative integer"))
    return seed


def seed_int(ss: np.random.SeedSequence | None = None) -> int:
    """A non-negative int64 seed drawn from ``ss`` (fresh OS entropy when None): the form a seed takes in
    outputs and parquet columns, so that a run given no seed can still be replayed."""
    if ss is None:
        ss = np.random.SeedSequence()
    return int(ss.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))


def as_generator(seed: SeedLike = None) -> np.random.Generator:
    """Return a ``np.random.Generator`` for ``seed`` (int, SeedSequence, Generator or None)."""
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(check_seed(seed))


def as_seed_sequence(seed: SeedLike = None) -> np.random.SeedSequence:
    """Return a ``SeedSequence`` for ``seed``; a Generator contributes fresh entropy from itself."""
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, np.random.Generator):
        return np.random.SeedSequence(int(seed.integers(0, 2**63 - 1)))
    return np.random.SeedSequence(check_seed(seed))


def chunk_seeds(seed: SeedLike, n_chunks: int) -> np.ndarray:
    """One 64-bit seed per chunk, spawned from ``seed``'s SeedSequence.

    Returns
    -------
    ndarray, shape (n_chunks,), dtype uint64
        Seeds for numba's per-chunk generators.
    """
    children = as_seed_sequence(seed).spawn(n_chunks)
    return np.array([c.generate_state(1, dtype=np.uint64)[0] for c in children], dtype=np.uint64)
