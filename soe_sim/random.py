"""Explicit randomness: one helper turns ``seed``/``rng`` into generators and chunk streams.

Parallel work never shares a stream: :func:`chunk_seeds` spawns one child ``SeedSequence`` per chunk
of fixed size, so a result depends only on the seed and the chunking, never on the thread count.
"""
from __future__ import annotations

import numpy as np

SeedLike = int | np.random.SeedSequence | np.random.Generator | None


def as_generator(seed: SeedLike = None) -> np.random.Generator:
    """Return a ``np.random.Generator`` for ``seed`` (int, SeedSequence, Generator or None)."""
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(seed)


def as_seed_sequence(seed: SeedLike = None) -> np.random.SeedSequence:
    """Return a ``SeedSequence`` for ``seed``; a Generator contributes fresh entropy from itself."""
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, np.random.Generator):
        return np.random.SeedSequence(int(seed.integers(0, 2**63 - 1)))
    return np.random.SeedSequence(seed)


def chunk_seeds(seed: SeedLike, n_chunks: int) -> np.ndarray:
    """One 64-bit seed per chunk, spawned from ``seed``'s SeedSequence.

    Returns
    -------
    ndarray, shape (n_chunks,), dtype uint64
        Seeds for numba's per-chunk generators.
    """
    children = as_seed_sequence(seed).spawn(n_chunks)
    return np.array([c.generate_state(1, dtype=np.uint64)[0] for c in children], dtype=np.uint64)
