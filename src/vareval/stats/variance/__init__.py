"""Where the variance comes from: the linear mixed model, its tests, intervals and bootstrap."""
