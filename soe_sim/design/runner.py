"""Playing the arms of a design study with common random numbers, here or on Dask.

Every arm (a :class:`~soe_sim.design.variant.Variant`) of one call plays the same games: chunk
``c`` of a run seeded ``s`` has the batch seed ``chunk_seed(s, scenario, …, c,
common_random_numbers=True)`` of :mod:`soe_sim.sim.sweep` — the seed of the chunk does not depend
on the arm — and game ``i`` of the chunk is ``play_game(setup, seed=(chunk seed, i))``. Card draws
and each side's policy draws come from separate streams of that seed, so two arms see the same
shuffles and the same policy draws for as long as their games stay alike (identical arms play
identical games). Runs asked with another ``stream`` number use an independent seed.

The local and the Dask backends play the same chunks, so a study gives the same numbers on either
(:class:`Runner` with ``dask=True`` or a ``scheduler`` address reuses :func:`soe_sim.sim.sweep.run_sweep`).
"""
from __future__ import annotations

import math
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from soe_sim._dask import check_scheduler_address
from soe_sim.errors import Problem, SoeInputError
from soe_sim.random import seed_int

__all__ = ["Runner", "stream_seed", "DEFAULT_CHUNK"]

DEFAULT_CHUNK = 250


def stream_seed(seed: int, stream: int = 0) -> int:
    """The run seed of stream ``stream`` of ``seed`` (stream 0 is ``seed`` itself)."""
    if stream == 0:
        return int(seed)
    return seed_int(np.random.SeedSequence([int(seed), int(stream)]))


class Runner:
    """Plays lists of variants of one scenario with one policy pair.

    Parameters
    ----------
    scenario : str
        Scenario id or TOML path.
    polish, soviet : policy specs (names, ``(name, {param: value})`` or Policy)
    threads : int, optional
        Threads of the local backend (default: every CPU this process may use, as
        :func:`soe_sim.simulate`; the results do not depend on it).
    chunk_size : int
        Games per chunk (the unit of work on Dask; the local backend plays the same chunks).
    progress : bool
        tqdm progress bars on stderr.
    dask : bool
        Run on a ``dask.distributed`` LocalCluster (``workers`` processes).
    scheduler : str
        Address of a running dask scheduler (implies ``dask``).
    client : distributed.Client
        An existing client (implies ``dask``).
    work_dir : path
        Where the Dask runs write their chunk files (``<work_dir>/<tag>/``, resumable); default a
        temporary directory removed on :meth:`close`.
    """

    def __init__(self, scenario: str, polish="random", soviet="random", *, threads: int | None = None,
                 chunk_size: int | None = None, progress: bool = False, dask: bool = False,
                 scheduler: str | None = None, client=None, workers: int | None = None, work_dir=None):
        from soe_sim.engine.game import game_setup
        from soe_sim.sim import _threads, resolve_policy

        self.scenario = str(scenario)
        game_setup(self.scenario)  # unknown ids: SoeInputError with a suggestion (cached for the runs)
        self.polish = resolve_policy(polish, "--polish")
        self.soviet = resolve_policy(soviet, "--soviet")
        self.chunk_size = int(chunk_size or DEFAULT_CHUNK)
        if self.chunk_size < 1:
            raise SoeInputError(Problem("--chunk-size", "", "", chunk_size, "expected a positive number of games"))
        self.progress = bool(progress)
        self.dask = bool(dask or scheduler or client is not None)
        # None: every CPU, as simulate (above the CPUs: an input error); Dask workers do not use it
        self.threads = _threads(threads) if not self.dask else max(1, int(threads or 1))
        self.scheduler = check_scheduler_address(scheduler) if client is None else scheduler
        self.workers = workers
        self._client = client
        self._own_client = self._own_cluster = None
        self._tmp = None
        self.work_dir = Path(work_dir) if work_dir is not None else None
        self.games_played = 0

    # -- lifetime -----------------------------------------------------------------------------------
    def __enter__(self) -> "Runner":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Close the Dask client and cluster this runner started and remove its temporary files."""
        if self._own_client is not None:
            self._own_client.close()
            self._own_client = None
            self._client = None
        if self._own_cluster is not None:
            self._own_cluster.close()
            self._own_cluster = None
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def _get_client(self):
        if self._client is not None:
            return self._client
        from distributed import Client, LocalCluster

        if self.scheduler:
            try:
                self._own_client = self._client = Client(self.scheduler, timeout="30s")
            except (OSError, TimeoutError) as err:
                raise SoeInputError(Problem("--scheduler", "", "", self.scheduler,
                                            f"cannot connect to the dask scheduler: {err}",
                                            "give tcp://HOST:PORT of a running `dask scheduler`")) from None
        else:
            self._own_cluster = LocalCluster(n_workers=self.workers, threads_per_worker=1, processes=True,
                                             dashboard_address=None)
            self._own_client = self._client = Client(self._own_cluster)
        return self._client

    def _dir(self, tag: str) -> Path:
        if self.work_dir is None:
            self._tmp = self._tmp or Path(tempfile.mkdtemp(prefix="soe-design-"))
            return self._tmp / tag
        return self.work_dir / tag

    # -- playing ---------------------------------------------------------------------------------------
    def setups(self, variants) -> list:
        """The GameSetup of every variant (checks them: a bad value is a SoeInputError)."""
        from soe_sim.design.variant import variant_setup

        return [variant_setup(self.scenario, v) for v in variants]

    def play(self, variants, games: int, seed: int = 0, *, stream: int = 0, tag: str = "run",
             desc: str | None = None) -> pd.DataFrame:
        """Play ``games`` games of every variant with common random numbers.

        Returns one row per game and arm: ``arm`` (index in ``variants``), ``variant`` (its name),
        then the columns of :func:`soe_sim.sim.simulate` with ``chunk`` before ``seed``; a game is
        identified in every arm by ``(chunk, game)``. Rows are sorted by arm, chunk and game.
        """
        variants = list(variants)
        games = int(games)
        if games < 1:
            raise SoeInputError(Problem("--games", "", "", games, "expected at least 1 game"))
        run_seed = stream_seed(seed, stream)
        size = min(self.chunk_size, games)
        n_chunks = math.ceil(games / size)
        setups = self.setups(variants)
        if self.dask:
            df = self._play_dask(variants, games, run_seed, size, n_chunks, tag)
        else:
            df = self._play_local(variants, setups, games, run_seed, size, n_chunks, desc or tag)
        self.games_played += len(df)
        return df

    def _play_local(self, variants, setups, games, run_seed, size, n_chunks, desc) -> pd.DataFrame:
        import contextlib

        from tqdm.auto import tqdm

        from soe_sim.sim import chunk_workers, play_chunk
        from soe_sim.sim.sweep import chunk_seed

        parts = []
        with contextlib.ExitStack() as stack, tqdm(total=games * len(variants), unit="game",
                                                   disable=not self.progress, desc=desc, leave=False) as bar:
            # one set of threads and per-thread work (scratch, win-probability memo) per arm, kept for
            # all its chunks; each arm has its own rules, hence its own memo
            workers = [stack.enter_context(chunk_workers(setup, self.polish, self.soviet, threads=self.threads))
                       for setup in setups]
            for c in range(n_chunks):
                cs = chunk_seed(run_seed, self.scenario, "", "", "", c, common_random_numbers=True)
                k = min(size, games - c * size)
                for i, (v, setup) in enumerate(zip(variants, setups)):
                    g, _, _ = play_chunk(setup, self.polish, self.soviet, seed=cs, start=0, games=k,
                                         threads=self.threads, workers=workers[i])
                    g["scenario"] = self.scenario
                    g.insert(5, "chunk", np.int64(c))
                    g.insert(0, "arm", np.int64(i))
                    g.insert(1, "variant", v.name)
                    parts.append(g)
                    bar.update(k)
        df = pd.concat(parts, ignore_index=True)
        return df.sort_values(["arm", "chunk", "game"], kind="stable").reset_index(drop=True)

    def _play_dask(self, variants, games, run_seed, size, n_chunks, tag) -> pd.DataFrame:
        from soe_sim.sim import policy_label
        from soe_sim.sim.sweep import Overlay, SweepConfig, read_sweep, run_sweep

        pn, pp = policy_label(self.polish)
        sn, sp = policy_label(self.soviet)
        overlays = [Overlay(f"arm-{i:03d}", variant=v.spec()) for i, v in enumerate(variants)]
        cfg = SweepConfig(scenarios=[self.scenario], games_per_chunk=size, chunks=n_chunks, seed=run_seed,
                          pairs=[(pn, pp, sn, sp)], overlays=overlays, ruleset="soe",
                          common_random_numbers=True, source=f"soe_sim.design {tag}")
        out = self._dir(tag)
        run_sweep(cfg, out, client=self._get_client(), progress=self.progress)
        df = read_sweep(out)
        df = df[df["overlay"].isin([o.name for o in overlays])]
        df = df[df["chunk"] * size + df["game"] < games].copy()
        arm = df.pop("overlay").str.slice(4).astype(np.int64)
        df["scenario"] = self.scenario
        df.insert(0, "arm", arm.to_numpy())
        df.insert(1, "variant", [variants[i].name for i in arm])
        return df.sort_values(["arm", "chunk", "game"], kind="stable").reset_index(drop=True)
