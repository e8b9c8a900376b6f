# Benchmarks: figures for the closing notes, never gates.
#   make bench           every benchmark below
#   make bench-precise   bench/precise_sleep.py: the precise sleep (auto, hybrid,
#                        comp, spin, clock_nanosleep, time.sleep, irtt sleep) at
#                        100us..100ms, idle and under stress-ng --cpu 2 (~2-3 min)
#   make bench-lua-sigint  bench/lua_sigint.py: lua5.4's SIGINT-to-exit time
#                        during a 30 s measure, spin and nanosleep (~10 s)
# Add a benchmark: a bench-<name> target here and a prerequisite of bench.
# Recipes expand at run time, so VPY (mk/python.mk's venv python) is seen
# even though this file is read first.
BENCH_PY = $(or $(VPY),python3)

.PHONY: bench-precise bench-lua-sigint

bench: bench-precise bench-lua-sigint

bench-precise:
	$(if $(VPY),$(MAKE) -s venv)
	$(BENCH_PY) bench/precise_sleep.py $(BENCH_ARGS)

bench-lua-sigint:
	$(if $(VPY),$(MAKE) -s venv)
	$(BENCH_PY) bench/lua_sigint.py

# make bench-exporter   bench/exporter.py: the exporter's CPU per second of wall
#                       time over 60 s, and its scrape latency with 10 methods (~70 s)
.PHONY: bench-exporter
bench: bench-exporter

bench-exporter:
	$(if $(VPY),$(MAKE) -s venv)
	$(BENCH_PY) bench/exporter.py $(BENCH_EXPORTER_ARGS)

# make bench-model     bench/model_live.py: the oversleep model on live runs (slack 1 ns .. 1 ms,
#                      dma latency 0 held or not, under stress-ng), the doctor next to cyclictest;
#                      bench/model_datasets.py: the model on every published dataset
.PHONY: bench-model
bench: bench-model

bench-model:
	$(if $(VPY),$(MAKE) -s venv)
	$(BENCH_PY) bench/model_datasets.py
	$(BENCH_PY) bench/model_live.py $(BENCH_MODEL_ARGS)
