# Per-model variance components of by_group_store.csv (make_by_group.py) with
# R 4.2.2, lme4 1.1-31, lmerTest 3.1-3:  Rscript tests/data/lme4/by_group.R
# A variance per model for seed and for config: lme4's diagonal
# (0 + model || g), written with one dummy() term per model.
suppressMessages(library(lmerTest))
here <- dirname(sub("--file=", "", grep("--file=", commandArgs(FALSE), value = TRUE)))
d <- read.csv(file.path(here, "by_group_store.csv"))
d$seed <- factor(d$seed)
models <- sort(unique(d$model))
per <- function(g) paste0("(0 + dummy(model, '", models, "') | ", g, ")", collapse = " + ")
f_full <- as.formula(paste("y ~ model +", per("seed"), "+", per("config")))
m <- lmer(f_full, d)
out <- data.frame(quantity = "crit", term = "", value = REMLcrit(m))
add <- function(q, t, v) out <<- rbind(out, data.frame(quantity = q, term = t, value = v))
vc <- as.data.frame(VarCorr(m))  # lme4 reorders the terms: label by grp and var1
labs <- ifelse(is.na(vc$var1), "Residual", paste0(
  sub("\\..*", "", vc$grp), "[", gsub('.*"(.*)".*', "\\1", vc$var1), "]"))
for (i in seq_along(labs)) add("sd", labs[i], vc$sdcor[i])
a <- anova(m)
add("sat_F", "model", a[["F value"]]); add("sat_ddf", "model", a[["DenDF"]])
k <- anova(m, ddf = "Kenward-Roger")
add("kr_F", "model", k[["F value"]]); add("kr_ddf", "model", k[["DenDF"]])
# one common variance (seed:model, config:model) against one per model
m_s <- lmer(as.formula(paste("y ~ model + (1 | seed:model) +", per("config"))), d)
m_c <- lmer(as.formula(paste("y ~ model +", per("seed"), "+ (1 | config:model)")), d)
add("group_lrt", "seed", REMLcrit(m_s) - REMLcrit(m))
add("group_lrt", "config", REMLcrit(m_c) - REMLcrit(m))
# dropping one model's configuration variance
for (k in models) {
  keep <- setdiff(models, k)
  cf <- paste0("(0 + dummy(model, '", keep, "') | config)", collapse = " + ")
  m_k <- lmer(as.formula(paste("y ~ model +", per("seed"), "+", cf)), d)
  add("lrt", paste0("config[", k, "]"), REMLcrit(m_k) - REMLcrit(m))
}
write.csv(out, file.path(here, "by_group_ref.csv"), row.names = FALSE)
