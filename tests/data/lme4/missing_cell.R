# A two-factor design with an empty cell: decovac_small_unbal.csv without the
# runs of model mC with optimizer sgd. R 4.2.2, lme4 1.1-31, lmerTest 3.1-3:
#   Rscript tests/data/lme4/missing_cell.R   -> missing_cell_ref.csv
suppressMessages(library(lmerTest))
here <- dirname(sub("--file=", "", grep("--file=", commandArgs(FALSE), value = TRUE)))
d <- read.csv(file.path(here, "decovac_small_unbal.csv"))
d <- d[!(d$model == "mC" & d$optimizer == "sgd"), ]
d$seed <- factor(d$seed)
m <- lmer(y ~ model * optimizer + (1 | seed) + (1 | config), d)
out <- data.frame(quantity = "crit", term = "", value = REMLcrit(m))
add <- function(q, t, v) out <<- rbind(out, data.frame(quantity = q, term = t, value = v))
for (nm in names(fixef(m))) add("coef", nm, fixef(m)[[nm]])
vc <- as.data.frame(VarCorr(m))
for (i in seq_len(nrow(vc))) add("sd", vc$grp[i], vc$sdcor[i])
for (ddf in c("Satterthwaite", "Kenward-Roger")) {
  a <- anova(m, ddf = ddf)  # prints lmerTest's "Missing cells for: ..." notice
  tag <- if (ddf == "Satterthwaite") "sat" else "kr"
  for (t in rownames(a)) {
    add(paste0(tag, "_F"), t, a[t, "F value"])
    add(paste0(tag, "_ndf"), t, a[t, "NumDF"])
    add(paste0(tag, "_ddf"), t, a[t, "DenDF"])
  }
}
write.csv(out, file.path(here, "missing_cell_ref.csv"), row.names = FALSE)
