# The sleepacc command line: `make run`, the README's main job.
#   make run   set up the venv with the runtime dependencies only (make venv-run,
#              mk/python.mk), run the default `sleepacc sweep`
#              (every available method over irtt sleep's ladder, planned to take
#              about 42 s of measuring), print its table and the doctor's top
#              findings, and write results/<host>-<UTC time>.jsonl with a PNG
#              plot beside it.
#   make run RUN_FLAGS="--slack 1"     extra sweep options (see `sleepacc sweep --help`)
#   make run RESULTS=/tmp/out          another results directory
RESULTS ?= results
RUN_FLAGS ?=
DOCTOR_TOP ?= 5
SLEEPACC_CMD = $(VENV)/bin/sleepacc

.PHONY: run

run: venv-run
	@mkdir -p $(RESULTS)
	@set -e; \
	f="$(RESULTS)/$$(uname -n)-$$(date -u +%Y%m%dT%H%M%SZ).jsonl"; \
	echo "== sleepacc sweep -o $$f $(RUN_FLAGS)"; \
	$(SLEEPACC_CMD) sweep -o "$$f" $(RUN_FLAGS); \
	echo; echo "== sleepacc doctor --from $$f --top $(DOCTOR_TOP)"; \
	$(SLEEPACC_CMD) doctor --from "$$f" --top $(DOCTOR_TOP); \
	echo; \
	$(SLEEPACC_CMD) plot "$$f" -o "$${f%.jsonl}.png"; \
	echo "results: $$f"; echo "plot:    $${f%.jsonl}.png"
