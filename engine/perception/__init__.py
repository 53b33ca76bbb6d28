"""The perception floor: what is read from pixels (docs/architecture.md → Floors of the engine).

``detection`` finds people (and faces, carried objects) in frames; ``appearance`` turns a crop into a
re-identification vector; ``attributes`` reads clothing, hair and carried-object evidence from a crop's pixels
and from the pretrained attribute network; ``pretrained`` is the runtime that loads the shipped networks. It
imports only the kernel."""
