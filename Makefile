# Two entry points for a fresh machine: `make demo` and `make test` (each installs what it needs first).
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed-stamp
export HF_HUB_OFFLINE := 1

.PHONY: demo test install

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/lineup app

test: $(STAMP)
	$(VENV)/bin/lint-imports
	$(VENV)/bin/ruff check .
	QT_QPA_PLATFORM=offscreen $(VENV)/bin/pytest -q

# Reproduce the shipped default checkpoint (about an hour on 2 CPU cores; resumable: run it again after a cut).
RUNS ?= runs/default-checkpoint
TRAIN_WORLD := $(RUNS)/trainworld-s1001
EVAL_WORLD := $(RUNS)/evalworld-s777
SHIPPED := resources/checkpoints/default
LINEUP := $(VENV)/bin/lineup
resume = $(if $(wildcard $(1)/training_state.pt),--resume,$(2))

.PHONY: default-checkpoint
default-checkpoint: $(STAMP)
	test -f $(TRAIN_WORLD)/world.json || $(LINEUP) world build --out $(TRAIN_WORLD) --identities 2000 --images-per-identity 12 --seed 1001
	test -f $(EVAL_WORLD)/world.json || $(LINEUP) world build --out $(EVAL_WORLD) --identities 500 --images-per-identity 10 --seed 777
	$(LINEUP) train --config resources/runs/default_cpu.json --data world:$(TRAIN_WORLD) --out $(RUNS)/stage1 --seed 1001 $(call resume,$(RUNS)/stage1,)
	$(LINEUP) train --config resources/runs/default_cpu_fusion.json --data world:$(TRAIN_WORLD) --out $(RUNS)/stage2 --seed 1002 $(call resume,$(RUNS)/stage2,--init $(RUNS)/stage1/model)
	$(LINEUP) checkpoint export $(RUNS)/stage2/model $(SHIPPED) --fp16 --eval-report eval/ --components resources/runs/default_components.json
	for protocol in mg-separate mg-progressive modes cross-res; do \
	    $(LINEUP) eval --checkpoint $(SHIPPED) --world $(EVAL_WORLD) --protocol $$protocol --out $(SHIPPED)/eval/$$protocol.json || exit 1; done
