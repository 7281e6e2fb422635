# Reference values for vareval's interval, Kenward-Roger and parametric-bootstrap
# tests. Run from the repository root (R 4.2.2, lme4 1.1-31, lmerTest 3.1-3,
# pbkrtest 0.5.2, Debian bookworm packages):
#
#     Rscript tests/data/lme4/reference_intervals.R
#
# Writes profile_confint.csv, ratio_profile.csv, kr_disjoint.csv and
# pbmodcomp.csv beside this script.
suppressMessages({library(lme4); library(lmerTest); library(pbkrtest)})
here <- "tests/data/lme4"
rd <- function(f) read.csv(file.path(here, f), stringsAsFactors = TRUE)

# -- profile confidence intervals (lme4's confint(method = "profile")) ------
fits <- list(
  Dyestuff_REML = lme4::lmer(Yield ~ 1 + (1 | Batch), rd("Dyestuff.csv")),
  Dyestuff_ML = lme4::lmer(Yield ~ 1 + (1 | Batch), rd("Dyestuff.csv"), REML = FALSE),
  Penicillin_REML = lme4::lmer(diameter ~ 1 + (1 | plate) + (1 | sample), rd("Penicillin.csv")),
  Pastes_REML = lme4::lmer(strength ~ 1 + (1 | batch) + (1 | sample), rd("Pastes.csv")),
  decovac_small_unbal_REML = lme4::lmer(y ~ model * optimizer + (1 | seed) + (1 | config),
                                        transform(rd("decovac_small_unbal.csv"),
                                                  seed = factor(seed)))
)
out <- NULL
for (nm in names(fits)) {
  ci <- confint(fits[[nm]], method = "profile", parm = "theta_", oldNames = FALSE,
                level = 0.95)
  vc <- as.data.frame(VarCorr(fits[[nm]]))
  out <- rbind(out, data.frame(fit = nm, parameter = rownames(ci),
                               estimate = vc$sdcor, lower = ci[, 1], upper = ci[, 2]))
}
write.csv(out, file.path(here, "profile_confint.csv"), row.names = FALSE)

# -- profile intervals of ratios (ICC, share) straight from lme4's profiled ML
#    deviance in theta: {g : min over theta with g(theta) = g of dev <= min + chi2}
#    (ML, as lme4's confint profiles the ML deviance also for REML fits)
q <- qchisq(0.95, 1)
dy <- fits$Dyestuff_ML
dev <- as.function(dy)
th <- getME(dy, "theta")
d0 <- dev(th)
f <- function(t) dev(t) - d0 - q
icc <- function(t) t^2 / (1 + t^2)
ratio <- data.frame(fit = "Dyestuff_ML", quantity = "icc Batch", estimate = icc(th),
                    lower = icc(uniroot(f, c(1e-8, th), tol = 1e-12)$root),
                    upper = icc(uniroot(f, c(th, 50), tol = 1e-12)$root))
# Penicillin: share of sample = t2^2 / (1 + t1^2 + t2^2); profile over t1
pe <- update(fits$Penicillin_REML, REML = FALSE)
dev <- as.function(pe)
th <- getME(pe, "theta")  # (plate, sample)
d0 <- dev(th)
share <- function(t) t[2]^2 / (1 + sum(t^2))
prof <- function(s) {
  g <- function(t1) {
    t2 <- sqrt(s * (1 + t1^2) / (1 - s))
    dev(c(t1, t2))
  }
  optimize(g, c(0, 20), tol = 1e-12)$objective - d0 - q
}
s0 <- share(th)
ratio <- rbind(ratio, data.frame(
  fit = "Penicillin_ML", quantity = "share sample", estimate = s0,
  lower = uniroot(prof, c(0.2, s0), tol = 1e-12)$root,
  upper = uniroot(prof, c(s0, 0.9999), tol = 1e-12)$root))
write.csv(ratio, file.path(here, "ratio_profile.csv"), row.names = FALSE)

# -- Kenward-Roger on experiments with disjoint seed sets --------------------
d <- rd("disjoint_seeds.csv")
m <- lmerTest::lmer(y ~ experiment + (1 | seed) + (1 | config), d)
m0 <- lmerTest::lmer(y ~ 1 + (1 | seed) + (1 | config), d)
kr <- KRmodcomp(m, m0)
a_kr <- anova(m, ddf = "Kenward-Roger")
a_sat <- anova(m)
write.csv(data.frame(
  F_scaled = kr$stats$Fstat, F_unscaled = kr$stats$FstatU, scaling = kr$stats$F.scaling,
  ndf = kr$stats$ndf, ddf = kr$stats$ddf, p_scaled = kr$stats$p.value,
  p_unscaled = kr$stats$p.valueU, lmerTest_F = a_kr$`F value`, lmerTest_ddf = a_kr$DenDF,
  lmerTest_p = a_kr$`Pr(>F)`, sat_F = a_sat$`F value`, sat_ddf = a_sat$DenDF,
  sat_p = a_sat$`Pr(>F)`),
  file.path(here, "kr_disjoint.csv"), row.names = FALSE)

# -- parametric-bootstrap LRT (pbkrtest's PBmodcomp), ML fits ---------------
# p_all: (1 + #{ref >= LRT}) / (1 + nsim), the bootstrap p-value over all
# simulated statistics; p_pbkrtest: pbkrtest 0.5.2's PBtest p-value, which
# keeps only the simulated statistics > 0 (numerically: many exact zeros of
# the boundary come out as +-1e-12, so it depends on the optimiser's noise).
pb_row <- function(nm, full, red, nsim = 1500) {
  ref <- PBrefdist(full, red, nsim = nsim)
  pb <- PBmodcomp(full, red, ref = ref)
  tobs <- pb$test["LRT", "stat"]
  data.frame(case = nm, LRT = tobs, p_chisq = pb$test["LRT", "p.value"],
             p_all = (1 + sum(ref >= tobs)) / (1 + length(ref)),
             p_pbkrtest = pb$test["PBtest", "p.value"], nsim = length(ref))
}
set.seed(1)
pa <- rd("Pastes.csv")
r1 <- pb_row("Pastes batch",
             lme4::lmer(strength ~ 1 + (1 | batch) + (1 | sample), pa, REML = FALSE),
             lme4::lmer(strength ~ 1 + (1 | sample), pa, REML = FALSE))
dc <- transform(rd("decovac_small_unbal.csv"), seed = factor(seed))
r2 <- pb_row("decovac_small_unbal seed",
             lme4::lmer(y ~ model * optimizer + (1 | seed) + (1 | config), dc, REML = FALSE),
             lme4::lmer(y ~ model * optimizer + (1 | config), dc, REML = FALSE))
write.csv(rbind(r1, r2), file.path(here, "pbmodcomp.csv"), row.names = FALSE)
