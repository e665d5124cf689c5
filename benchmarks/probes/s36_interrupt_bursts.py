"""The largest interrupt bursts per /proc/interrupts row (session 36): every 5 ms for SECONDS, the largest count any
CPU served in one window, and its rate. Run it beside the README's test command to see what a loaded host raises.

  python benchmarks/probes/s36_interrupt_bursts.py SECONDS
"""
import sys
import time


def snapshot() -> dict:
    rows = {}
    with open("/proc/interrupts") as f:
        cpus = len(f.readline().split())
        for line in f:
            parts = line.split()
            counts = parts[1:cpus + 1]
            if len(counts) == cpus and all(c.isdigit() for c in counts):
                rows[" ".join([parts[0]] + parts[cpus + 1:])[:60]] = [int(c) for c in counts]
    return rows


def main(seconds: float) -> None:
    worst, end = {}, time.time() + seconds
    before, t0 = snapshot(), time.perf_counter()
    while time.time() < end:
        time.sleep(0.005)
        after, t1 = snapshot(), time.perf_counter()
        for row, counts in after.items():
            for b, a in zip(before.get(row, counts), counts):
                if a - b > worst.get(row, (0,))[0]:
                    worst[row] = (a - b, (a - b) / (t1 - t0), (t1 - t0) * 1e3)
        before, t0 = after, t1
    for row, (count, rate, ms) in sorted(worst.items(), key=lambda kv: -kv[1][1])[:12]:
        print(f"{row}: {count} in {ms:.1f} ms ({rate:.0f} a second)")


if __name__ == "__main__":
    main(float(sys.argv[1]))
