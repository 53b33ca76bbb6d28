"""Training objectives, one module per family: sdm, contrastive, tal + pcia, orthogonality, gcr, routing,
crst, uniat. Each docstring cites its docs/methods.md section."""
