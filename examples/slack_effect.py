"""How much does timer slack cost this machine?  nanosleep(1 ms) with the
thread's own slack and with slack 1 ns, median and p99 error."""
import sleepacc


def error_us(m: sleepacc.Measurement, stat: str = "median") -> float:
    err = m.error(stat)
    return float("nan") if err is None else err / 1e3


def main() -> None:
    own = sleepacc.measure("nanosleep", 1e-3, budget=0.3)
    none = sleepacc.measure("nanosleep", 1e-3, budget=0.3, slack=1)
    print(f"host slack: {sleepacc.system_info().get('timer_slack_ns')} ns")
    for label, m in (("own slack", own), ("slack 1 ns", none)):
        print(f"{label:>10}: median {error_us(m):7.1f} us, p99 {error_us(m, 'p99'):7.1f} us "
              f"over {m.stats.n} sleeps, {m.cpu_percent:.1f}% CPU")
    saved = own.stats.median - none.stats.median
    print(f"slack 1 ns saves {saved / 1e3:.1f} us a sleep (median)")


if __name__ == "__main__":
    main()
