# Reference fits of seed_by_experiment.csv (make_seed_by_experiment.py) with
# R 4.2.2, lme4 1.1-31, lmerTest 3.1-3, pbkrtest 0.5.2 (Debian bookworm):
#   Rscript tests/data/lme4/seed_by_experiment.R
# writes seed_by_experiment_ref.csv: one row per (design, quantity, term) value.
suppressMessages(library(lmerTest))
here <- dirname(sub("--file=", "", grep("--file=", commandArgs(FALSE), value = TRUE)))
d_all <- read.csv(file.path(here, "seed_by_experiment.csv"), colClasses = c(
  experiment = "character", config = "character", seed = "character"))
out <- list()
add <- function(design, quantity, term, value) {
  out[[length(out) + 1L]] <<- data.frame(design = design, quantity = quantity,
                                         term = term, value = value)
}
terms <- c("seed", "config", "seed:experiment")
for (k in sort(unique(d_all$design))) {
  d <- d_all[d_all$design == k, ]
  d$experiment <- factor(d$experiment)
  for (reml in c(TRUE, FALSE)) {
    tag <- if (reml) "reml" else "ml"
    crit <- function(fit) if (reml) REMLcrit(fit) else deviance(fit)
    fit <- function(tt) suppressMessages(lmer(reformulate(
      c("experiment", sprintf("(1 | %s)", tt)), "y"), d, REML = reml))
    m <- fit(terms)
    vc <- as.data.frame(VarCorr(m))
    add(k, paste0("crit_", tag), "", crit(m))
    for (g in terms) add(k, paste0("sd_", tag), g, vc$sdcor[vc$grp == g])
    add(k, paste0("sd_", tag), "Residual", sigma(m))
    for (g in terms) add(k, paste0("lrt_", tag), g, crit(fit(setdiff(terms, g))) - crit(m))
    if (reml) {
      a <- anova(m)
      add(k, "sat_F", "experiment", a[["F value"]])
      add(k, "sat_ddf", "experiment", a[["DenDF"]])
      kr <- anova(m, ddf = "Kenward-Roger")
      add(k, "kr_F", "experiment", kr[["F value"]])
      add(k, "kr_ddf", "experiment", kr[["DenDF"]])
      dl <- difflsmeans(m)
      labs <- gsub("experiment", "", rownames(dl))
      add(k, "pair_est", labs, dl$Estimate)
      add(k, "pair_se", labs, dl[["Std. Error"]])
      add(k, "pair_df", labs, dl$df)
    }
  }
}
res <- do.call(rbind, out)
write.csv(res, file.path(here, "seed_by_experiment_ref.csv"), row.names = FALSE)
