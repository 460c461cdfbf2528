#!/usr/bin/env python3
"""Writes the byte-string seeds of the interp_eval and hlo_diff fuzz targets.

Each seed is `generators::rng::seed_bytes(seed, n)` (splitmix64, little-endian u64s, truncated
to n bytes), so a seed file is the same bytes the generators' own tests feed the targets.
Run from the repository root: python3 fuzz/seeds/make_byte_seeds.py
"""
import os
import struct

M = (1 << 64) - 1


def seed_bytes(seed, n):
    s, out = seed, bytearray()
    while len(out) < n:
        s = (s + 0x9E3779B97F4A7C15) & M
        z = s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
        out += struct.pack("<Q", z ^ (z >> 31))
    return bytes(out[:n])


SEEDS = {
    "interp_eval": [(1, 256), (2, 1024), (3, 2048), (4, 4096)],
    "hlo_diff": [(1, 512), (2, 1024), (3, 2048)],
}

here = os.path.dirname(os.path.abspath(__file__))
for target, seeds in SEEDS.items():
    for seed, n in seeds:
        with open(os.path.join(here, target, f"splitmix-{seed}-{n}"), "wb") as f:
            f.write(seed_bytes(seed, n))
