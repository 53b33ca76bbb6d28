"""The retrieval floor: from a witness's words, a sketch or an image to a ranking (docs/architecture.md →
Floors of the engine).

``text`` parses descriptions into the ontology; ``models`` is the person-search network and its checkpoints;
``encoding`` turns queries and crops into vectors and picks the gallery view a query searches; ``evidence``
combines attribute evidence into the hybrid ranking's term; ``search`` is the progressive session; ``metrics``
are its keep rules and the ranking measures. It stands on the index, perception and the kernel."""
