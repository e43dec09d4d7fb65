"""CSRF tokens, the admin password and a per-annotator rate limit of the campaign server.

* CSRF: ``HMAC-SHA256(server secret, annotator token hash + ":" + position)``, hex; checked with
  :func:`hmac.compare_digest` on every POST. It binds a form to one annotator and one item, so
  a form of another annotator or item is refused.
* the admin page's "close campaign" form: :func:`admin_csrf_token`, checked with the password.
* Admin password: ``hashlib.scrypt`` (n=2**14, r=8, p=1, 16-byte random salt), stored as
  ``scrypt$n$r$p$salt_hex$hash_hex``; checked in constant time.
* :class:`RateLimiter`: a token bucket per key (an annotator's token hash, or "admin").
"""
from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from typing import Callable

__all__ = ["RateLimiter", "admin_csrf_token", "check_admin_csrf", "check_csrf", "check_password", "completion_code", "csrf_token", "hash_password",
           "new_secret"]

_N, _R, _P = 2 ** 14, 8, 1


def new_secret() -> str:
    """A fresh server secret (hex, 256 bits)."""
    return secrets.token_hex(32)


def csrf_token(secret: str, annotator_hash: str, position: int) -> str:
    """The CSRF token of the form of item ``position`` of one annotator (64 hex characters)."""
    msg = f"{annotator_hash}:{int(position)}".encode()
    return hmac.new(secret.encode(), msg, hashlib.sha256).hexdigest()


def check_csrf(secret: str, annotator_hash: str, position: int, token: str | None) -> bool:
    """Whether ``token`` is the CSRF token of that annotator and position (constant-time compare)."""
    if not token:
        return False
    return hmac.compare_digest(csrf_token(secret, annotator_hash, position).encode(), token.encode("utf-8", "replace"))


def admin_csrf_token(secret: str) -> str:
    """The CSRF token of the admin page's forms: ``HMAC-SHA256(secret, "admin:close")`` hex (an
    annotator's token hash is 64 hex digits, so no annotator form has this message)."""
    return hmac.new(secret.encode(), b"admin:close", hashlib.sha256).hexdigest()


def check_admin_csrf(secret: str, token: str | None) -> bool:
    """Whether ``token`` is :func:`admin_csrf_token` (constant-time compare)."""
    return bool(token) and hmac.compare_digest(admin_csrf_token(secret).encode(), str(token).encode("utf-8", "replace"))


def completion_code(secret: str, annotator_hash: str) -> str:
    """The end-of-HIT code shown to an annotator who rated all items (12 hex digits, upper case)."""
    return hmac.new(secret.encode(), f"{annotator_hash}:done".encode(), hashlib.sha256).hexdigest()[:12].upper()


def hash_password(password: str, salt: bytes | None = None) -> str:
    """``scrypt$n$r$p$salt_hex$hash_hex`` of ``password``."""
    salt = secrets.token_bytes(16) if salt is None else salt
    h = hashlib.scrypt(password.encode("utf-8"), salt=salt, n=_N, r=_R, p=_P, dklen=32)
    return f"scrypt${_N}${_R}${_P}${salt.hex()}${h.hex()}"


def check_password(password: str, stored: str) -> bool:
    """Whether ``password`` matches a :func:`hash_password` string (constant-time compare;
    a malformed stored string is never a match)."""
    try:
        kind, n, r, p, salt, want = stored.split("$")
        if kind != "scrypt":
            return False
        got = hashlib.scrypt(password.encode("utf-8"), salt=bytes.fromhex(salt), n=int(n), r=int(r), p=int(p),
                             dklen=len(want) // 2)
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(got.hex().encode(), want.encode())


class RateLimiter:
    """Token bucket per key: ``burst`` requests at once, refilled at ``rate`` per second.
    ``clock`` (seconds, monotonic) can be replaced in tests. Thread-safe."""

    def __init__(self, rate: float = 5.0, burst: int = 20, clock: Callable[[], float] = time.monotonic,
                 max_keys: int = 100_000):
        if rate <= 0 or burst < 1:
            raise ValueError(f"rate limit: rate {rate} must be > 0 and burst {burst} >= 1")
        self.rate, self.burst, self.clock, self.max_keys = rate, burst, clock, max_keys
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def allow(self, key: str) -> bool:
        """Take one token from ``key``'s bucket; False when it is empty (answer 429)."""
        now = self.clock()
        with self._lock:
            level, last = self._buckets.get(key, (float(self.burst), now))
            level = min(float(self.burst), level + (now - last) * self.rate)
            if len(self._buckets) >= self.max_keys and key not in self._buckets:
                self._buckets.clear()  # bounded memory; only full buckets are forgotten in effect
            if level < 1.0:
                self._buckets[key] = (level, now)
                return False
            self._buckets[key] = (level - 1.0, now)
            return True
