"""Studies: grids of runs (agents x spans x seeds x datasets or configs), each cell an ordinary run folder, run on
the local event loop or on Ray, with results across cells (`study`, `index`, `cell`, `executors`, `driver`,
`results`, `report`)."""
