"""The inside of benchmarks/secure_join_cost.py: the keys' join as a two-party secure
computation in SPU (SecretFlow's secure processing unit), protocol Cheetah (two parties,
semi-honest, no third party). It runs in SPU's own environment (SPU pins numpy below 2), so
it imports nothing of pprl: it reads the entries from an .npz file and writes what the
computation opens, with its time and bytes, to another.

    .venv-spu/bin/python benchmarks/secure_join_spu.py IN.npz OUT.npz \
        (--window W | --capacity C [--chunk K]) [--field 32]

Both parties run in this one process, each in its own thread over SPU's in-memory link (its
simulator): the protocol's messages are real, the network is not.
"""

from __future__ import annotations

import argparse
import os
import re
import tempfile
import time

import jax
import jax.numpy as jnp
import numpy as np
import spu.libspu as libspu
import spu.utils.simulation as spsim

LINK = re.compile(r"Link details: total send bytes (\d+), recv bytes (\d+)")


def join(window: int):
    """Sort every entry by (key, side, a unique id) inside the computation, then flag each
    entry against its next `window` neighbours: a flag is a slot whose two entries hold the
    same key from different sides. The sides come out beside the rows, so that a slot is
    read by them and not by its order. The unique id keeps every sort key distinct, which
    SPU's sort needs so that the comparisons it opens after its shuffle say nothing."""

    def program(keys, sides, ids, rows):
        key, side, _, row = jax.lax.sort((keys, sides, ids, rows), num_keys=3)
        flags = [
            jnp.pad((key[:-w] == key[w:]) & (side[:-w] != side[w:]), (0, w))
            for w in range(1, window + 1)
        ]
        return jnp.stack(flags), side, row

    return program


def bin_join(keys_a, keys_b):
    """Each of Alice's entries against each of Bob's in the same hash bin: C x C equalities a
    bin, a flag each (the parties' dummies never meet)."""
    return keys_a[:, :, None] == keys_b[:, None, :]


FIELDS = {64: libspu.FieldType.FM64, 32: libspu.FieldType.FM32}


def run(
    entries: dict[str, np.ndarray], window: int, field: int, chunk: int = 0
) -> dict[str, np.ndarray]:
    """The join on `entries` in the ring of `field` bits, with the seconds it took and the
    bytes the first party sent and received (SPU's own count, read from the profile it
    logs): sorted with a window (keys, sides, rows) when `window`, else by hash bins
    (keys_a, keys_b), `chunk` bins a computation (0: all in one), their costs summed. Bins
    are independent, so a chunked join computes the same flags in less memory."""
    if window:
        ids = np.arange(len(entries["keys"]), dtype=np.int64)
        given = (entries["keys"], entries["sides"], ids, entries["rows"])
        (flags, sides, rows), cost = _computed(join(window), given, field)
        return {
            "flags": np.asarray(flags, dtype=bool),
            "sides": np.asarray(sides, dtype=np.int64),
            "rows": np.asarray(rows, dtype=np.int64),
            **cost,
        }
    bins = len(entries["keys_a"])
    step = chunk or bins
    parts, costs = [], []
    for first in range(0, bins, step):
        part = slice(first, first + step)
        flags, cost = _computed(bin_join, (entries["keys_a"][part], entries["keys_b"][part]), field)
        parts.append(np.asarray(flags, dtype=bool))
        costs.append(cost)
    summed = {k: sum(c[k] for c in costs) for k in costs[0]}
    for name in ("sent_bytes", "received_bytes"):  # -1 (none logged) in any chunk: unknown
        if any(c[name] < 0 for c in costs):
            summed[name] = np.array(-1)
    return {"flags": np.concatenate(parts), **summed}


def _computed(function, given: tuple, field: int) -> tuple:
    """`function` on `given` in a fresh two-party Cheetah computation: what it opens, and its
    seconds and the first party's bytes sent and received (-1 when SPU logged none)."""
    config = libspu.RuntimeConfig(protocol=libspu.ProtocolKind.CHEETAH, field=FIELDS[field])
    config.enable_pphlo_profile = True
    program = spsim.sim_jax(spsim.Simulator(2, config), function)
    with tempfile.TemporaryFile(mode="w+") as log:
        saved = [os.dup(1), os.dup(2)]
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
        try:
            start = time.perf_counter()
            opened = program(*given)
            seconds = time.perf_counter() - start
        finally:
            for fd, copy in enumerate(saved, start=1):
                os.dup2(copy, fd)
                os.close(copy)
        log.seek(0)
        found = LINK.findall(log.read())
    sent, received = (int(v) for v in found[-1]) if found else (-1, -1)
    cost = {
        "seconds": np.array(seconds),
        "sent_bytes": np.array(sent),
        "received_bytes": np.array(received),
    }
    return opened, cost


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("entries")
    parser.add_argument("out")
    layout = parser.add_mutually_exclusive_group(required=True)
    layout.add_argument("--window", type=int, help="sort, and flag each entry's next W")
    layout.add_argument("--capacity", type=int, help="hash bins of C entries a side")
    parser.add_argument("--field", type=int, choices=sorted(FIELDS), default=64)
    parser.add_argument("--chunk", type=int, default=0, help="bins a computation (0: all)")
    args = parser.parse_args()
    with np.load(args.entries) as data:
        entries = {name: data[name] for name in data.files}
    np.savez(args.out, **run(entries, args.window or 0, args.field, args.chunk))


if __name__ == "__main__":
    main()
