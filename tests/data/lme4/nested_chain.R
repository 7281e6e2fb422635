# Reference fit of nested_chain.csv (make_nested_chain.py) with R 4.2.2 and
# lme4 1.1-31:  Rscript tests/data/lme4/nested_chain.R
suppressMessages(library(lme4))
here <- dirname(sub("--file=", "", grep("--file=", commandArgs(FALSE), value = TRUE)))
d <- read.csv(file.path(here, "nested_chain.csv"), colClasses = c(
  seed = "character", config = "character", rerun = "character"))
out <- list()
for (reml in c(TRUE, FALSE)) {
  tag <- if (reml) "reml" else "ml"
  m <- lmer(y ~ experiment + (1 | seed/config/rerun), d, REML = reml)
  vc <- as.data.frame(VarCorr(m))
  crit <- if (reml) REMLcrit(m) else deviance(m)
  out[[tag]] <- data.frame(
    quantity = c(paste0("crit_", tag), paste0("sd_", tag, "_", vc$grp),
                 paste0("levels_", names(ngrps(m)))),
    value = c(crit, vc$sdcor, as.numeric(ngrps(m))))
}
write.csv(unique(do.call(rbind, out)), file.path(here, "nested_chain_ref.csv"),
          row.names = FALSE)
