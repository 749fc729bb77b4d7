#!/usr/bin/env python3
"""CPU replay of coalesce-b.patch's index rules (no GPU): BChunkCol maps each B tile row's chunks
onto its columns one to one, a warp's lanes read consecutive columns per load, and the fast path's
loads stay inside B for every block and every N (FastSteps leaves out the K steps holding B's
last row, or its last BN where N < BN), where the unclamped chunks of the right edge tile read on
into the next rows.
  python3 bench/lab/session28/coalesce_replay.py"""
import random


def chunk_col(g, i, bn, vec=4):
    group = min(bn // vec, 32)
    return (g // group) * (group * vec) + i * group + g % group


def main():
    for bn in (32, 64, 128, 256):
        cols = sorted(chunk_col(g, i, bn) for g in range(bn // 4) for i in range(4))
        assert cols == list(range(bn)), bn
        group = min(bn // 4, 32)
        for i in range(4):  # lanes of one segment: consecutive columns
            seg = [chunk_col(g, i, bn) for g in range(group)]
            assert seg == list(range(seg[0], seg[0] + group)), (bn, i)
    rnd = random.Random(28)
    checked = 0
    for _ in range(3000):
        bn, bk = rnd.choice((32, 64, 128, 256)), rnd.choice((8, 16, 32))
        n = rnd.randint(1, 3 * bn + 7)
        k = rnd.randint(1, 4 * bk + 3)
        fast_steps = max(0, k - (1 if n >= bn else bn)) // bk  # FastSteps with CT_SCALAR_B
        for n0 in range(0, n, bn):
            for step in range(fast_steps):
                for row in range(bk):
                    kr = step * bk + row
                    assert kr <= k - 2 or fast_steps == 0
                    top = kr * n + n0 + max(chunk_col(g, i, bn) for g in range(bn // 4)
                                             for i in range(4))
                    assert 0 <= top < k * n, (bn, bk, n, k, n0, kr)
                    checked += 1
    print(f"ok: BChunkCol one to one and coalesced for BN 32-256; {checked} fast-path rows in bounds")


if __name__ == "__main__":
    main()
