#!/usr/bin/env python3
"""Split edge batches by shard, as sharded edges send them (docs/scaling.md §1).

`waymark simulate --batches FILE` writes one batch per gateway and window; an edge with
`publish.shards: N` sends each window as N batches instead, one per shard (the devices whose
FNV-1a-64 hash of the id modulo N is that shard), empty ones included, each shard numbered on its
own. This script does that to a batches file and writes one file per shard, with the ground truth
split alike, so that `waymark replay --batches` feeds one shard's batches exactly as the aggregator
owning it is fed, and `waymark evaluate` scores it:

    waymark simulate --site S --batches b.jsonl --truth t.jsonl
    python3 tools/shards/split_batches.py --shards 2 --batches b.jsonl --truth t.jsonl --out DIR
    waymark replay --site S --batches --input DIR/batches-0.jsonl --output DIR/out-0.jsonl
    waymark evaluate --site S --truth DIR/truth-0.jsonl --output DIR/out-0.jsonl
"""
import argparse
import json
import os


def shard(device, count):
    """The device's shard: FNV-1a (64 bit) of its id's UTF-8 bytes modulo the count (ShardLayout)."""
    h = 0xCBF29CE484222325
    for byte in device.encode():
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h % count


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shards", type=int, required=True)
    ap.add_argument("--batches", required=True, help="batches JSONL (waymark simulate --batches)")
    ap.add_argument("--truth", help="ground truth JSONL (waymark simulate --truth), split by device alike")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if args.shards < 2:
        ap.error("--shards must be at least 2 (one shard is the file as it is)")
    os.makedirs(args.out, exist_ok=True)
    outs = [open(os.path.join(args.out, f"batches-{k}.jsonl"), "w") for k in range(args.shards)]
    seqs = {}
    with open(args.batches) as f:
        for line in f:
            if not line.strip():
                continue
            batch = json.loads(line)
            parts = [[] for _ in range(args.shards)]
            for entry in batch["sightings"]:
                parts[shard(entry["device"], args.shards)].append(entry)
            for k, entries in enumerate(parts):
                key = (batch["gateway"], batch["boot"], k)
                seqs[key] = seqs.get(key, 0) + 1
                outs[k].write(json.dumps(dict(batch, sightings=entries, seq=seqs[key])) + "\n")
    for out in outs:
        out.close()
    if args.truth:
        truths = [open(os.path.join(args.out, f"truth-{k}.jsonl"), "w") for k in range(args.shards)]
        with open(args.truth) as f:
            for line in f:
                if line.strip():
                    truths[shard(json.loads(line)["device"], args.shards)].write(line)
        for out in truths:
            out.close()


if __name__ == "__main__":
    main()
