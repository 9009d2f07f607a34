"""Dask helpers shared by ``sweep`` and the design runner (``compare``, ``sensitivity``, ``tune``)."""
from __future__ import annotations

from soe_sim.errors import Problem, SoeInputError

_HINT = "give tcp://HOST:PORT of a running `dask scheduler` (e.g. tcp://127.0.0.1:8786)"


def check_scheduler_address(address: str | None, option: str = "--scheduler") -> str | None:
    """``address`` unchanged when it is a well-formed dask.distributed address, else a
    :class:`~soe_sim.errors.SoeInputError` naming it — checked before any work starts or any
    file is written (a malformed address would otherwise fail deep inside ``distributed``)."""
    if address is None:
        return None
    from distributed.comm.addressing import parse_address, parse_host_port

    text = str(address).strip()
    try:
        scheme, location = parse_address(text)
        if scheme in ("tcp", "tls"):
            _host, port = parse_host_port(location)
            if not 0 < int(port) < 65536:
                raise ValueError(f"port {port} outside 1..65535")
        elif scheme not in ("inproc", "ucx", "ws", "wss"):
            raise ValueError(f"unknown protocol {scheme!r}")
    except (ValueError, TypeError) as err:
        raise SoeInputError(Problem(option, "", "", address, f"not a dask scheduler address: {err}", _HINT)) from None
    return text
