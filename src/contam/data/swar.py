"""Word-at-a-time byte tests (SWAR: eight bytes in one 64-bit integer), shared by the compiled
passes over raw corpus bytes (:mod:`contam.data.jsonl_check`, :mod:`contam.scan.prefilter`)."""

from __future__ import annotations

import numpy as np
from numba import njit

#: The high bit of every byte.
H8 = np.uint64(0x8080808080808080)
#: The low bit of every byte.
L1 = np.uint64(0x0101010101010101)
#: Multiplying the high bits of a word (shifted down 7) by this moves the bit of byte k to bit k
#: of the top byte.
GATHER = np.uint64(0x0102040810204080)


@njit(cache=True, nogil=True)
def zero_bytes(x: np.uint64) -> np.uint64:
    """The high bit of every zero byte of ``x`` (exact per byte, unlike the borrow trick
    ``(x - L1) & ~x & H8``, which is exact only as a yes/no)."""
    m7 = np.uint64(0x7F7F7F7F7F7F7F7F)
    return ~(((x & m7) + m7) | x | m7)
