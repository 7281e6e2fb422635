# Reference fits of small_designs.csv (made by make_small_designs.py) with
# R 4.2.2, lme4 1.1-31 (Debian bookworm):
#   Rscript tests/data/lme4/small_designs.R
# writes small_designs_ref.csv: one row per (design, quantity, term) value.
suppressMessages(library(lme4))
here <- dirname(sub("--file=", "", grep("--file=", commandArgs(FALSE), value = TRUE)))
d_all <- read.csv(file.path(here, "small_designs.csv"), colClasses = c(
  experiment = "character", config = "character", seed = "character"))
out <- list()
add <- function(design, quantity, term, value) {
  out[[length(out) + 1L]] <<- data.frame(design = design, quantity = quantity,
                                         term = term, value = value)
}
crit <- function(fit) if (isREML(fit)) REMLcrit(fit) else deviance(fit)
for (k in sort(unique(d_all$design))) {
  d <- d_all[d_all$design == k, ]
  terms <- c("seed", "config", if (d$three[1] == 1) "seed:experiment")
  for (reml in c(TRUE, FALSE)) {
    tag <- if (reml) "reml" else "ml"
    fit <- function(tt) suppressMessages(lmer(reformulate(
      c("experiment", sprintf("(1 | %s)", tt)), "y"), d, REML = reml))
    m <- fit(terms)
    vc <- as.data.frame(VarCorr(m))
    add(k, paste0("crit_", tag), "", crit(m))
    for (g in terms) add(k, paste0("sd_", tag), g, vc$sdcor[vc$grp == g])
    add(k, paste0("sd_", tag), "Residual", sigma(m))
    for (g in terms) add(k, paste0("lrt_", tag), g, crit(fit(setdiff(terms, g))) - crit(m))
  }
}
res <- do.call(rbind, out)
write.csv(res, file.path(here, "small_designs_ref.csv"), row.names = FALSE)
