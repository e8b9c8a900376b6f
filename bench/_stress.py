"""The CPU hog the benches run beside: `stress-ng --cpu N`, bounded by its
own --timeout (so it ends even if the bench dies) and stopped when the
`with` block ends, whatever ended it."""
import contextlib
import signal
import subprocess


@contextlib.contextmanager
def cpu_hog(stress, n, timeout_s):
    """Run `stress --cpu n` for at most timeout_s seconds; yields the Popen."""
    proc = subprocess.Popen([stress, "--cpu", str(n), "--timeout", f"{int(timeout_s)}s", "--quiet"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
