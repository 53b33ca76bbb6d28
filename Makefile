# Two entry points for a fresh machine: `make demo` and `make test` (each installs what it needs first).
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed-stamp
export HF_HUB_OFFLINE := 1

.PHONY: demo test install demo-gallery

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/lineup app

# The prebuilt demo gallery shipped in resources/demo_gallery (app.demo_gallery): the demo world rendered and
# ingested with the shipped checkpoint (a few minutes on 2 cores). Run it again after the checkpoint changes.
demo-gallery: $(STAMP)
	$(VENV)/bin/python -m app.demo_gallery --checkpoint resources/checkpoints/default --out resources/demo_gallery

test: $(STAMP)
	$(VENV)/bin/lint-imports
	$(VENV)/bin/ruff check .
	QT_QPA_PLATFORM=offscreen $(VENV)/bin/pytest -q

# Reproduce the shipped default checkpoint (about seven and a quarter hours on 2 CPU cores; resumable: run it again
# after a cut). Stages (docs/training-notes.md): 1 text–image from scratch with the conv stem, 2 query fusion,
# 3 the ImageNet MobileNetV2 stem at 192×96 warm-started from stage 2, 4 query fusion over token sequences
# (4b: 200 more steps), 4c–4f the same with the camera-realism chain on half the images, 5 scenario tokens with
# everything else frozen. Then the text rewrite weight and the footage attribute weight are measured and recorded
# in the checkpoint, and the five evaluation reports written beside it.
RUNS ?= runs/default-checkpoint
TRAIN_WORLD := $(RUNS)/trainworld-s1001
EVAL_WORLD := $(RUNS)/evalworld-s777
SHIPPED := resources/checkpoints/default
LINEUP := $(VENV)/bin/lineup
resume = $(if $(wildcard $(1)/training_state.pt),--resume,$(2))
stage = $(LINEUP) train --config resources/runs/$(1).json --data world:$(TRAIN_WORLD) --out $(RUNS)/$(2) --seed $(3) \
	$(call resume,$(RUNS)/$(2),$(if $(4),--init $(RUNS)/$(4)/model,))

.PHONY: default-checkpoint
default-checkpoint: $(STAMP)
	test -f $(TRAIN_WORLD)/world.json || $(LINEUP) world build --out $(TRAIN_WORLD) --identities 2000 --images-per-identity 12 --seed 1001
	test -f $(EVAL_WORLD)/world.json || $(LINEUP) world build --out $(EVAL_WORLD) --identities 500 --images-per-identity 10 --seed 777
	$(call stage,default_cpu,stage1,1001,)
	$(call stage,default_cpu_fusion,stage2,1002,stage1)
	$(call stage,default_cpu_mobilenet,stage3,1005,stage2)
	$(call stage,default_cpu_mobilenet_fusion,stage4,1006,stage3)
	$(call stage,default_cpu_mobilenet_fusion_more,stage4b,1008,stage4)
	$(call stage,default_cpu_mobilenet_realism,stage4c,1009,stage4b)
	$(call stage,default_cpu_mobilenet_realism_more,stage4d,1011,stage4c)
	$(call stage,default_cpu_mobilenet_realism_longer,stage4e,1012,stage4d)
	$(call stage,default_cpu_mobilenet_realism_longer,stage4f,1013,stage4e)
	$(call stage,default_cpu_scenarios,stage5,1007,stage4f)
	$(LINEUP) checkpoint export $(RUNS)/stage5/model $(SHIPPED) --fp16 --eval-report eval/ --components resources/runs/default_components.json
	$(VENV)/bin/python bench/text_rewrite.py --world $(EVAL_WORLD) --checkpoint $(SHIPPED) --real --write
	$(VENV)/bin/python bench/calibrate_attribute_weight.py --checkpoint $(SHIPPED) --write
	for protocol in mg-separate mg-progressive modes cross-res anytime; do \
	    $(LINEUP) eval --checkpoint $(SHIPPED) --world $(EVAL_WORLD) --protocol $$protocol \
	        $$( [ $$protocol = mg-separate ] && echo --texts both ) --out $(SHIPPED)/eval/$$protocol.json || exit 1; done
