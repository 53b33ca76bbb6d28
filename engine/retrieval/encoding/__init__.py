"""The encoding floor: which gallery view a query searches (``views``), a crop's resolution level
(``resolution``), and a checkpoint on both sides of the search (``model_encoder``): crops into every gallery
view, queries into the view they search. Ingest, search and attributes build on it."""
