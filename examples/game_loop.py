"""A 60 Hz loop paced by sleepacc.Pacer: deadlines at start + k/60 s, no
drift; how late did each frame start, and how much CPU did waiting take?"""
import time

import sleepacc

FRAMES = 60


def main() -> None:
    pacer = sleepacc.Pacer(1 / 60)
    late_ns: list[int] = []
    cpu0 = time.process_time()
    for _, deadline in zip(range(FRAMES), pacer):
        late_ns.append(time.monotonic_ns() - deadline)
        sum(range(1000))                      # the frame's work
    cpu = time.process_time() - cpu0
    late_ns.sort()
    print(f"{FRAMES} frames: frame start late by median {late_ns[FRAMES // 2] / 1e3:.1f} us, "
          f"max {late_ns[-1] / 1e3:.1f} us; CPU {100 * cpu / (FRAMES / 60):.1f}%")
    stats = pacer.stats
    print(f"pacer: {stats['count']} ticks, {stats['misses']} missed")


if __name__ == "__main__":
    main()
