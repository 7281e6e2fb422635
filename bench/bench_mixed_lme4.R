# lme4's end-to-end times on bench_mixed.py's designs (written by
# `python bench/bench_mixed.py --write-csv DIR`). Run from the repository root:
#
#     Rscript bench/bench_mixed_lme4.R DIR
#
# Prints, per design, the seconds of lmerTest::lmer (REML fit), ranova (both
# LRTs) and anova (Satterthwaite F); recorded in bench_mixed.py's ANCHORS.
suppressMessages(library(lmerTest))
dir <- commandArgs(TRUE)[1]
for (f in sort(list.files(dir, pattern = "[.]csv$", full.names = TRUE))) {
  d <- read.csv(f, stringsAsFactors = TRUE)
  d$seed <- factor(d$seed)
  t0 <- proc.time()[["elapsed"]]
  m <- lmer(y ~ experiment + (1 | seed) + (1 | config), d)
  t1 <- proc.time()[["elapsed"]]
  r <- ranova(m)
  t2 <- proc.time()[["elapsed"]]
  a <- anova(m)
  t3 <- proc.time()[["elapsed"]]
  cat(sprintf("%s rows %d fit %.2f ranova %.2f anova %.2f total %.2f\n", basename(f),
              nrow(d), t1 - t0, t2 - t1, t3 - t2, t3 - t0))
}
