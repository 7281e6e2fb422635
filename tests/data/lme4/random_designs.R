# Reference fits of random_designs.csv (made by make_random_designs.py) with
# R 4.2.2, lme4 1.1-31, lmerTest 3.1-3, pbkrtest 0.5.2 (Debian bookworm):
#   Rscript tests/data/lme4/random_designs.R
# writes random_designs_ref.csv: one row per (design, quantity, term) value.
suppressMessages(library(lmerTest))
here <- dirname(sub("--file=", "", grep("--file=", commandArgs(FALSE), value = TRUE)))
d_all <- read.csv(file.path(here, "random_designs.csv"), colClasses = c(
  experiment = "character", config = "character"))
d_all$seed <- factor(d_all$seed)
out <- list()
add <- function(design, quantity, term, value) {
  out[[length(out) + 1L]] <<- data.frame(design = design, quantity = quantity,
                                         term = term, value = value)
}
for (k in sort(unique(d_all$design))) {
  d <- d_all[d_all$design == k, ]
  d$experiment <- factor(d$experiment)
  d$config <- factor(d$config)
  d$seed <- droplevels(d$seed)
  f_full <- y ~ experiment + (1 | seed) + (1 | config)
  crit <- function(fit) if (isREML(fit)) REMLcrit(fit) else deviance(fit)
  for (reml in c(TRUE, FALSE)) {
    tag <- if (reml) "reml" else "ml"
    m <- suppressMessages(lmer(f_full, d, REML = reml))
    vc <- as.data.frame(VarCorr(m))
    add(k, paste0("crit_", tag), "", crit(m))
    for (g in c("seed", "config")) add(k, paste0("sd_", tag), g, vc$sdcor[vc$grp == g])
    add(k, paste0("sd_", tag), "Residual", sigma(m))
    m_s <- suppressMessages(lmer(y ~ experiment + (1 | config), d, REML = reml))
    m_c <- suppressMessages(lmer(y ~ experiment + (1 | seed), d, REML = reml))
    add(k, paste0("lrt_", tag), "seed", crit(m_s) - crit(m))
    add(k, paste0("lrt_", tag), "config", crit(m_c) - crit(m))
    if (reml) {
      # lmerTest's numerical Hessian in (theta, sigma) is badly scaled when
      # sigma is far from 1, so its df are computed on y in units of its SD
      # (exact df do not depend on the units of y); estimates and SEs are
      # scaled back.
      u <- sd(d$y)
      d$ys <- d$y / u
      m <- suppressMessages(lmer(ys ~ experiment + (1 | seed) + (1 | config), d))
      a <- anova(m)  # type III -> lmerTest's type I basis for one term
      add(k, "sat_F", "experiment", a[["F value"]])
      add(k, "sat_ndf", "experiment", a[["NumDF"]])
      add(k, "sat_ddf", "experiment", a[["DenDF"]])
      kr <- anova(m, ddf = "Kenward-Roger")
      add(k, "kr_F", "experiment", kr[["F value"]])
      add(k, "kr_ddf", "experiment", kr[["DenDF"]])
      dl <- difflsmeans(m)
      labs <- gsub("experiment", "", rownames(dl))
      add(k, "pair_est", labs, dl$Estimate * u)
      add(k, "pair_se", labs, dl[["Std. Error"]] * u)
      add(k, "pair_df", labs, dl$df)
    }
  }
}
res <- do.call(rbind, out)
write.csv(res, file.path(here, "random_designs_ref.csv"), row.names = FALSE)
