# Reference effect sizes from R's effectsize 0.8.3 (Debian: r-cran-effectsize).
#   Rscript tests/data/effectsize/make_reference.R > tests/data/effectsize/reference.json
# Cohen's d (pooled SD) and Hedges' g with noncentral-t intervals; paired: d_z
# (SD of the differences) via cohens_d(paired = TRUE); Vargha-Delaney A and
# Cliff's delta point estimates (their intervals differ in method from ours).
library(effectsize)
set.seed(20260103)
cases <- list(
  list(name = "8 vs 10, shift 0.5", a = round(rnorm(8, 0.5), 4), b = round(rnorm(10), 4), paired = FALSE),
  list(name = "5 vs 5 with ties", a = c(0.71, 0.74, 0.69, 0.75, 0.74), b = c(0.70, 0.68, 0.72, 0.69, 0.70), paired = FALSE),
  list(name = "25 vs 12, B better", a = round(rnorm(25, 0, 2), 4), b = round(rnorm(12, 1, 1), 4), paired = FALSE),
  list(name = "paired 10", a = round(rnorm(10, 0.3), 4), b = NULL, paired = TRUE)
)
cases[[4]]$b <- round(cases[[4]]$a - rnorm(10, 0.3, 0.5), 4)
num <- function(x) format(x, digits = 15)
vec <- function(x) paste0("[", paste(num(x), collapse = ", "), "]")
out <- c()
for (cs in cases) {
  d <- cohens_d(cs$a, cs$b, paired = cs$paired, ci = 0.95)
  g <- hedges_g(cs$a, cs$b, paired = cs$paired, ci = 0.95)
  fields <- c(
    sprintf('"name": "%s"', cs$name), sprintf('"a": %s', vec(cs$a)), sprintf('"b": %s', vec(cs$b)),
    sprintf('"paired": %s', tolower(cs$paired)),
    sprintf('"d": %s', vec(c(d[[1]], d$CI_low, d$CI_high))),
    sprintf('"g": %s', vec(c(g[[1]], g$CI_low, g$CI_high)))
  )
  if (!cs$paired) {
    fields <- c(fields, sprintf('"vd_a": %s', num(vd_a(cs$a, cs$b)[[1]])),
                sprintf('"cliffs_delta": %s', num(cliffs_delta(cs$a, cs$b)[[1]])))
  }
  out <- c(out, paste0("{", paste(fields, collapse = ", "), "}"))
}
cat(sprintf('{"effectsize": "%s", "cases": [\n%s\n]}\n', packageVersion("effectsize"), paste(out, collapse = ",\n")))
