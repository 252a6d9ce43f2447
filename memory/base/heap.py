"""glibc's heap in a long-running process: big blocks go back to the system when freed."""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
from typing import Any

# mallopt's parameter numbers (glibc's malloc.h).
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8
# Blocks at least this big are mapped on their own and unmapped when freed. glibc's default
# starts here too, but rises to the size of any mapped block once it is freed (up to 32 MB):
# after the first user's vector matrix (~1.4 MB at 900 chunks) was dropped, every later one
# came from the heap, and the holes evicted matrices left there stayed resident (the bot
# at 120 people: 138 MB free inside the heap, RSS past the cache budget). Setting it fixes it.
BIG_BLOCK = 128 * 1024
# Free memory at the heap's top past this goes back at once (glibc's default is 128 KB, but
# it too rises with the mmap threshold; setting either one stops both rising).
TRIM_AT = 1024 * 1024
# Heaps for the threads to share. glibc makes up to 8 a core, one per thread that met a busy
# one, and each keeps what its thread freed: with two, the bot at 120 people kept 10 MB free
# in its main heap instead of 64, and 40 MB less resident. Set before the threads start.
ARENAS = 2

_done = False
_lock = threading.Lock()


def _libc() -> Any | None:
    """glibc, or None on another C library (musl, macOS), whose heap is left as it is."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name or "libc.so.6")
        libc.mallopt  # noqa: B018 (glibc has it; others may not)
    except (OSError, AttributeError):
        return None
    return libc


def release_freed_blocks() -> bool:
    """Make freed big blocks go back to the system from now on (once a process; True when
    glibc took the settings).

    The per-user caches' byte budget (``PCAI_CACHE_MB``) bounds what they hold; this makes
    what they evict leave the process too, so its resident size follows the budget.
    """
    global _done
    with _lock:
        if _done:
            return True
        libc = _libc()
        if libc is None:
            return False
        ok = bool(libc.mallopt(M_MMAP_THRESHOLD, BIG_BLOCK))
        ok = bool(libc.mallopt(M_TRIM_THRESHOLD, TRIM_AT)) and ok
        ok = bool(libc.mallopt(M_ARENA_MAX, ARENAS)) and ok
        _done = ok
        return ok
