"""The live views, one module each: cluster, group, assignors, purgatory, scenario, backend."""
