"""Ray itself: the optional import, starting or joining a cluster, and Ray's failures as
one-line errors."""
from __future__ import annotations

import os
from typing import Any

from ...engine.missing_extra import MissingExtraError, install_hint

# the requirements of the ray extra (see engine.missing_extra for why not "mtscore[ray]")
PIP_HINT = install_hint("ray")


def require_ray():
    """The ``ray`` module (with Ray Data), or :class:`MissingExtraError` naming the extra."""
    try:
        import ray
        import ray.data
    except ImportError as e:
        raise MissingExtraError(
            f"mtscore.bindings.ray needs Ray Data ({e}); install it with: {PIP_HINT}") from None
    return ray


def connect(address: str | None = None, num_cpus: int | None = None, **init_kwargs):
    """Start or join a Ray cluster. ``address``: ``None`` (an already initialised Ray, else
    ``RAY_ADDRESS``, else a local instance), ``"local"`` (a new single-machine instance with
    ``num_cpus``), ``"auto"`` (the cluster this machine belongs to) or ``"HOST:PORT"`` /
    ``"ray://HOST:PORT"``. An unreachable address raises :class:`ConnectionError` naming it."""
    ray = require_ray()
    if ray.is_initialized():
        return ray
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": True}
    kwargs.update(init_kwargs)
    if address in (None, "local"):
        if address == "local":
            kwargs["address"] = "local"
        if num_cpus is not None:
            kwargs["num_cpus"] = num_cpus
    else:
        if address != "auto":
            address = local_address(address)
            check_reachable(address)
            _local_token_auth(address)
        kwargs["address"] = address
    try:
        ray.init(**kwargs)
    except (ConnectionError, RuntimeError, ValueError) as e:
        where = "no running Ray cluster found on this machine" if address == "auto" else \
            f"cannot connect to the Ray cluster at {address!r}"
        hint = "start one with `ray start --head` (see README, 'Many machines')"
        if address not in (None, "auto", "local") and not os.environ.get(AUTH_MODE):
            hint += (f"; a cluster with token authentication (Ray's default for `ray start --head`) "
                     f"also needs {AUTH_MODE}=token and its token here (RAY_AUTH_TOKEN or ~/.ray/auth_token)")
        raise ConnectionError(f"{where}: {str(e).splitlines()[0] if str(e) else type(e).__name__}; "
                              f"{hint}") from None
    return ray


#: Ray's switch for token authentication (``token`` / ``disabled``)
AUTH_MODE = "RAY_AUTH_MODE"


def _local_token_auth(address: str) -> None:
    """Ray sends this machine's token (``~/.ray/auth_token``) only to a cluster it finds itself
    (``auto``), never to an explicit address, so ``--ray 127.0.0.1:6379`` failed against a
    token-authenticated head on this very machine where ``--ray auto`` worked. For an address of
    this machine (loopback or its node IP), with ``RAY_AUTH_MODE`` unset and a token present,
    token mode is switched on as ``auto`` would; other addresses are left to the user."""
    if os.environ.get(AUTH_MODE) or not _is_this_machine(address):
        return
    token = os.environ.get("RAY_AUTH_TOKEN") or (
        os.path.exists(os.path.expanduser("~/.ray/auth_token")) and "file")
    if token:
        os.environ[AUTH_MODE] = "token"
        try:  # Ray caches its config at import: refresh it, as its own token set-up does
            from ray._raylet import Config  # type: ignore[attr-defined]

            Config.initialize("")
        except (ImportError, AttributeError):  # pragma: no cover - another Ray layout
            pass


def _is_this_machine(address: str) -> bool:
    host = address.rpartition("://")[2].rpartition(":")[0]
    if host in LOOPBACK:
        return True
    try:
        from ray.util import get_node_ip_address

        return host == get_node_ip_address()
    except Exception:
        return False


LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")


def local_address(address: str, timeout: float = 2.0) -> str:
    """``address`` with a loopback host (``127.0.0.1:6379``, ``localhost:6379``) replaced by this
    node's IP address as Ray knows it, when the cluster listens there and not on loopback: a
    head started with ``ray start --head`` registers itself under the node's IP, and Ray swaps
    a loopback address for that IP anyway, so ``--ray 127.0.0.1:6379`` then failed where
    ``--ray auto`` worked. Any other address is returned as it is."""
    scheme, sep, hostport = address.rpartition("://")
    host, colon, port = hostport.rpartition(":")
    if not colon or host not in LOOPBACK or not port.isdigit():
        return address
    if _listening("127.0.0.1" if host != "::1" and host != "[::1]" else "::1", int(port), timeout):
        return address
    try:
        from ray.util import get_node_ip_address

        node = get_node_ip_address()
    except Exception:
        return address
    if node and _listening(node, int(port), timeout):
        return f"{scheme}{sep}{node}:{port}"
    return address


def _listening(host: str, port: int, timeout: float) -> bool:
    import socket

    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def check_reachable(address: str, timeout: float = 5.0) -> None:
    """Fail fast (ray.init retries for a minute) when nothing listens at ``HOST:PORT``."""
    import socket

    hostport = address.split("://", 1)[-1]
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit():
        raise ConnectionError(f"Ray address {address!r} is not HOST:PORT, 'auto' or 'local'")
    try:
        with socket.create_connection((host or "127.0.0.1", int(port)), timeout=timeout):
            pass
    except OSError as e:
        raise ConnectionError(f"cannot connect to the Ray cluster at {address!r}: {e}; start one "
                              "with `ray start --head` (see README, 'Many machines')") from None


def user_error(e: BaseException, where: str) -> BaseException:
    """A one-line RuntimeError for a Ray failure (a job that cannot finish: tasks out of
    retries, a lost cluster): Ray's message ends with the worker's exception line."""
    lines = [ln.strip() for ln in str(e).strip().splitlines() if ln.strip()]
    return RuntimeError(f"{where}: the Ray job failed ({type(e).__name__}): {lines[-1] if lines else ''}")
