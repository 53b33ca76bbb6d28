"""The lab floor: what trains and measures the network, never imported by the runtime floors below it
(docs/architecture.md → Floors of the engine).

``world`` builds the synthetic world with ground truth; ``data`` augments and samples training data;
``losses`` and ``train`` train the network; ``evaluation`` measures it (and the evidence readers) on worlds and
real datasets; ``demo`` caches the built-in demo world."""
