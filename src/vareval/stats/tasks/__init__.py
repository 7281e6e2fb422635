"""Many methods on many tasks: aggregates with stratified bootstrap, dominance, rankings."""
