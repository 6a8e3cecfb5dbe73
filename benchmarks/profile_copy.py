#!/usr/bin/env python3
"""One launch of the benchmark's TMA copy per box shape, for a profiler:

    ncu --section SpeedOfLight --section MemoryWorkloadAnalysis \\
        python3 benchmarks/profile_copy.py --artifacts DIR [--boxes 64x128,128x64]

Runs each box's `pipelined_copy` (L2 promotion none) twice (a warm-up, then
the profiled launch), and checks the copy.
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

import torch  # noqa: E402

import nvtma.runtime  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--artifacts", required=True)
    ap.add_argument("--boxes", default="64x128,128x64")
    a = ap.parse_args()
    x = torch.randn(common.ROWS, common.COLS, device="cuda", dtype=torch.float16)
    y = torch.empty_like(x)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for text in a.boxes.split(","):
        box = tuple(int(v) for v in text.split("x"))
        spec = common.copy_spec(box, "none")
        k = nvtma.runtime.load(Path(a.artifacts) / common.key(spec)).kernel("pipelined_copy")
        per_sm = max(1, min(8, (227 * 1024) // (4 * box[0] * box[1] * 2 + 1024)))
        for _ in range(2):
            y.zero_()
            k(x, y, **common.launch(k, (sms * per_sm,)))
        torch.cuda.synchronize()
        print(f"box {text}: {'correct' if torch.equal(x, y) else 'WRONG'}", flush=True)


if __name__ == "__main__":
    main()
