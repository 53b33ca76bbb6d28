"""The synthetic pedestrian world: Lineup's training data, demo gallery and benchmark ground truth.

- ``identities``: correlated attribute draws, outfits and clothing changes (canonical attribute dicts);
- ``figure``: body geometry and the drawing of every attribute through materials;
- ``modalities``: RGB / infrared / sketch looks and the four resolution levels;
- ``backgrounds``: procedural scenes per camera style; ``cameras``: the eight cameras and the clock;
- ``render``: ``render_sample(attributes, modality, resolution, view, camera, rng)``, one call per image;
- ``build``: ``build_world(out, identities, images_per_identity, seed, workers)``;
- ``sheet``: ``contact_sheet(out, identities, seed)``; ``benchmarks``: benchmark splits of a built world.
"""
