# Benchmarks: figures for the closing notes, never gates.
#   make bench           every benchmark below
#   make bench-precise   bench/precise_sleep.py: the precise sleep (auto, hybrid,
#                        comp, spin, timerfd, clock_nanosleep, time.sleep, irtt sleep)
#                        at 10us..100ms, p50/p99/p99.9, rows taking turns, idle and
#                        under stress-ng --cpu N (N = CPU count), auto's tail against
#                        timerfd's and its recovery after the load (~3-4 min)
#   make bench-frames    bench/frame_pacing.py: a 60 Hz loop paced by pygame's
#                        Clock.tick / tick_busy_loop (PyPI pygame, installed into
#                        the venv here; SDL_VIDEODRIVER=dummy), sleepacc.Pacer and
#                        a pure-Python spin (the limit seen from Python) (~45 s)
#   make bench-lua-sigint  bench/lua_sigint.py: lua5.4's SIGINT-to-exit time
#                        during a 30 s measure, spin and nanosleep (~10 s)
# Add a benchmark: a bench-<name> target here and a prerequisite of bench.
# Recipes expand at run time, so VPY (mk/python.mk's venv python) is seen
# even though this file is read first.
BENCH_PY = $(or $(VPY),python3)

.PHONY: bench-precise bench-lua-sigint bench-frames

bench: bench-precise bench-frames bench-lua-sigint

bench-precise:
	$(if $(VPY),$(MAKE) -s venv)
	$(BENCH_PY) bench/precise_sleep.py $(BENCH_ARGS)

bench-lua-sigint:
	$(if $(VPY),$(MAKE) -s venv)
	$(BENCH_PY) bench/lua_sigint.py

# make bench-exporter   bench/exporter.py: the exporter's resident size and CPU over
#                       60 s with its defaults, the doctor running; then samples
#                       over equal 20 s windows with and without back-to-back
#                       scrapes (a rest inside the budget told from starvation),
#                       and the scrape latency, 10 methods (~2.5 min)
.PHONY: bench-exporter
bench: bench-exporter

bench-exporter:
	$(if $(VPY),$(MAKE) -s venv)
	$(BENCH_PY) bench/exporter.py $(BENCH_EXPORTER_ARGS)

# pygame is the bench extra of pyproject.toml; installed here, never by a test.
bench-frames:
	$(if $(VPY),$(MAKE) -s venv)
	@PYGAME_HIDE_SUPPORT_PROMPT=1 $(BENCH_PY) -c 'import pygame' 2>/dev/null || $(BENCH_PY) -m pip install -q pygame \
	  || echo "bench-frames: pip could not install pygame; its rows are left out" >&2
	SDL_VIDEODRIVER=dummy SDL_AUDIODRIVER=dummy $(BENCH_PY) bench/frame_pacing.py $(FRAMES_ARGS)

# make bench-model     bench/model_live.py: the oversleep model on live runs (slack 1 ns .. 1 ms,
#                      dma latency 0 held or not, under stress-ng), the doctor next to cyclictest;
#                      bench/model_datasets.py: the model on every published dataset
.PHONY: bench-model
bench: bench-model

bench-model:
	$(if $(VPY),$(MAKE) -s venv)
	$(BENCH_PY) bench/model_datasets.py
	$(BENCH_PY) bench/model_live.py $(BENCH_MODEL_ARGS)

# make bench-trace   bench/trace_table.py: each sample's lateness in its six terms, traced from
#                    the kernel (sleepacc.trace; root), for six methods at 1 ms with slack 50 us
#                    and 1 ns, and nanosleep on an idle CPU against one a nice-19 spinner keeps busy (~15 s)
.PHONY: bench-trace
bench: bench-trace

bench-trace:
	$(if $(VPY),$(MAKE) -s venv)
	$(BENCH_PY) bench/trace_table.py $(BENCH_TRACE_ARGS)
