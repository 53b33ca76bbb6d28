"""The kernel: what every floor of the engine stands on (docs/architecture.md → Floors of the engine).

Atomic writes and owner-only files, contained paths, hashing, time stamps, guarded image reading, bounded JSON,
progress and pause points for crash tests, the folder lock, the attribute ontology and its colour names, and the
schema of a search step. Nothing here imports another floor."""
