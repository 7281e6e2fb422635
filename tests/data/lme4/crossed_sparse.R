# Reference fits of crossed_sparse.csv (made by make_crossed_sparse.py) with
# R 4.2.2, lme4 1.1-31, lmerTest 3.1-3, pbkrtest 0.5.2 (Debian bookworm):
#   Rscript tests/data/lme4/crossed_sparse.R
# writes crossed_sparse_ref.csv: one row per (quantity, term) value.
suppressMessages(library(lmerTest))
here <- dirname(sub("--file=", "", grep("--file=", commandArgs(FALSE), value = TRUE)))
d <- read.csv(file.path(here, "crossed_sparse.csv"), stringsAsFactors = TRUE)
out <- list()
add <- function(quantity, term, value) {
  out[[length(out) + 1L]] <<- data.frame(quantity = quantity, term = term, value = value)
}
crit <- function(fit) if (isREML(fit)) REMLcrit(fit) else deviance(fit)
for (reml in c(TRUE, FALSE)) {
  tag <- if (reml) "reml" else "ml"
  m <- lmer(y ~ experiment + (1 | seed) + (1 | config), d, REML = reml)
  vc <- as.data.frame(VarCorr(m))
  add(paste0("crit_", tag), "", crit(m))
  for (g in c("seed", "config")) add(paste0("sd_", tag), g, vc$sdcor[vc$grp == g])
  add(paste0("sd_", tag), "Residual", sigma(m))
  m_s <- lmer(y ~ experiment + (1 | config), d, REML = reml)
  m_c <- lmer(y ~ experiment + (1 | seed), d, REML = reml)
  add(paste0("lrt_", tag), "seed", crit(m_s) - crit(m))
  add(paste0("lrt_", tag), "config", crit(m_c) - crit(m))
}
# lmerTest's df on y in units of its SD (its numerical Hessian is badly scaled
# when sigma is far from 1; exact df do not depend on the units of y)
u <- sd(d$y)
d$ys <- d$y / u
m <- lmer(ys ~ experiment + (1 | seed) + (1 | config), d)
a <- anova(m)
add("sat_F", "experiment", a[["F value"]])
add("sat_ddf", "experiment", a[["DenDF"]])
kr <- anova(m, ddf = "Kenward-Roger")  # pbkrtest's vcovAdj
add("kr_F", "experiment", kr[["F value"]])
add("kr_ddf", "experiment", kr[["DenDF"]])
dl <- difflsmeans(m)
labs <- gsub("experiment", "", rownames(dl))
add("pair_est", labs, dl$Estimate * u)
add("pair_se", labs, dl[["Std. Error"]] * u)
add("pair_df", labs, dl$df)
dk <- difflsmeans(m, ddf = "Kenward-Roger")
add("pair_se_kr", labs, dk[["Std. Error"]] * u)
add("pair_df_kr", labs, dk$df)
res <- do.call(rbind, out)
write.csv(res, file.path(here, "crossed_sparse_ref.csv"), row.names = FALSE)
