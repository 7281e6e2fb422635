# sleepstudy with random slopes: R 4.2.2, lme4 1.1-31, lmerTest 3.1-3,
# pbkrtest 0.5.2.   Rscript tests/data/lme4/sleepstudy.R -> sleepstudy_ref.csv
suppressMessages(library(lmerTest))
here <- dirname(sub("--file=", "", grep("--file=", commandArgs(FALSE), value = TRUE)))
d <- read.csv(file.path(here, "sleepstudy.csv"))
d$Subject <- factor(d$Subject)
forms <- list(
  corr = Reaction ~ Days + (Days | Subject),
  uncorr = Reaction ~ Days + (1 | Subject) + (0 + Days | Subject))
out <- NULL
add <- function(f, q, t, v) out <<- rbind(out, data.frame(fit = f, quantity = q, term = t, value = v))
for (nm in names(forms)) {
  for (reml in c(TRUE, FALSE)) {
    tag <- paste0(nm, if (reml) "_reml" else "_ml")
    m <- lmer(forms[[nm]], d, REML = reml)
    add(tag, "crit", "", if (reml) REMLcrit(m) else deviance(m))
    th <- getME(m, "theta")
    for (i in seq_along(th)) add(tag, "theta", as.character(i), th[[i]])
    vc <- as.data.frame(VarCorr(m))
    vars <- vc[is.na(vc$var2), ]
    add(tag, "variance", "(Intercept)", vars$vcov[1])
    add(tag, "variance", "Days", vars$vcov[2])
    add(tag, "variance", "Residual", sigma(m)^2)
    if (nm == "corr") add(tag, "corr", "", vc$sdcor[!is.na(vc$var2)])
    for (t in names(fixef(m))) {
      add(tag, "coef", t, fixef(m)[[t]])
      add(tag, "se", t, sqrt(diag(vcov(m)))[[which(names(fixef(m)) == t)]])
    }
    if (reml) {
      s <- summary(m)$coefficients
      for (t in rownames(s)) add(tag, "sat_df", t, s[t, "df"])
      kr <- summary(m, ddf = "Kenward-Roger")$coefficients
      for (t in rownames(kr)) {
        add(tag, "kr_df", t, kr[t, "df"])
        add(tag, "kr_se", t, kr[t, "Std. Error"])
      }
      a <- anova(m)
      add(tag, "sat_F", "Days", a[["F value"]]); add(tag, "sat_ddf", "Days", a[["DenDF"]])
    }
  }
}
# the slope's LRT (REML, as ranova): (Days | Subject) against (1 | Subject)
m0 <- lmer(Reaction ~ Days + (1 | Subject), d)
add("corr_reml", "lrt", "Days", REMLcrit(m0) - REMLcrit(lmer(forms$corr, d)))
add("uncorr_reml", "lrt", "Days", REMLcrit(m0) - REMLcrit(lmer(forms$uncorr, d)))
# lmerTest's ranova of the independent model also drops (1 | Subject)
ra <- ranova(lmer(forms$uncorr, d))
add("uncorr_reml", "lrt", "(Intercept)", ra["(1 | Subject)", "LRT"])
add("uncorr_reml", "lrt_p", "(Intercept)", ra["(1 | Subject)", "Pr(>Chisq)"])
# a between-subject factor beside the slope: the first nine subjects (in
# sorted order) form group "a"; type III tests as lmerTest's anova()
d$group <- ifelse(as.integer(d$Subject) <= 9, "a", "b")
m <- lmer(Reaction ~ group + Days + (Days | Subject), d)
a <- anova(m)
for (t in rownames(a)) {
  add("group_reml", "sat_F", t, a[t, "F value"]); add("group_reml", "sat_ddf", t, a[t, "DenDF"])
}
k <- anova(m, ddf = "Kenward-Roger")
for (t in rownames(k)) {
  add("group_reml", "kr_F", t, k[t, "F value"]); add("group_reml", "kr_ddf", t, k[t, "DenDF"])
}
write.csv(out, file.path(here, "sleepstudy_ref.csv"), row.names = FALSE)
