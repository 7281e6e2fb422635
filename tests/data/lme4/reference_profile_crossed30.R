# lme4's profile intervals on bench/bench_profile.py's "crossed 30 x 30" design
# (crossed30.csv: 30 seeds x 30 configurations, 900 rows). Run from the
# repository root (R 4.2.2, lme4 1.1-31):
#
#     Rscript tests/data/lme4/reference_profile_crossed30.R
#
# Prints the numbers stored in tests/stats/variance/test_intervals.py.
suppressMessages(library(lme4))
d <- read.csv("tests/data/lme4/crossed30.csv", colClasses = "character")
d$y <- as.numeric(d$y)
q <- qchisq(0.95, 1)
show <- function(x) print(signif(x, 10), digits = 10)
m3 <- lmer(y ~ experiment + (1 | seed) + (1 | config), d)
m4 <- lmer(y ~ experiment + (1 | seed) + (1 | config) + (1 | seed:experiment), d)
for (m in list(m3, m4))
  show(confint(m, method = "profile", parm = "theta_", oldNames = FALSE, quiet = TRUE))

# the upper end of the seed:experiment SD straight from lme4's ML deviance at
# (theta, sigma) (the others minimised): confint's interpolation of the
# profile next to the boundary at 0 is coarse (it warns of a bad spline fit)
m4ml <- update(m4, REML = FALSE)
dev <- as.function(m4ml)
rho <- environment(dev)
n <- nrow(d)
full <- function(theta, sigma) {  # beta profiled
  dev(theta)
  pwrss <- rho$resp$wrss() + rho$pp$sqrL(1)
  rho$pp$ldL2() + n * log(2 * pi * sigma^2) + pwrss / sigma^2
}
th <- getME(m4ml, "theta")  # (seed:experiment, config, seed)
s0 <- sigma(m4ml)
d0 <- full(th, s0)
prof <- function(v) {
  f <- function(x) full(c(v / exp(x[3]), x[1:2]), exp(x[3]))
  a <- optim(c(th[2:3], log(s0)), f, method = "L-BFGS-B", lower = c(0, 0, -Inf),
             control = list(factr = 1, pgtol = 0, maxit = 1000))
  b <- optim(a$par, f, method = "Nelder-Mead", control = list(reltol = 1e-16, maxit = 5000))
  min(a$value, b$value) - d0 - q
}
cat("seed:experiment SD upper end",
    sprintf("%.10g", uniroot(prof, c(0.0015, 0.0018), tol = 1e-12)$root), "\n")

# the profile interval of config's share (ML, sigma profiled) from lme4's
# profiled deviance in theta = (seed, config)
ml <- update(m3, REML = FALSE)
dev <- as.function(ml)
th <- getME(ml, "theta")
names(th)
d0 <- dev(th)
share <- function(t) t[2]^2 / (1 + sum(t^2))
prof <- function(s) {
  g <- function(t1) dev(c(t1, sqrt(s * (1 + t1^2) / (1 - s))))
  optimize(g, c(0, 20), tol = 1e-12)$objective - d0 - q
}
s0 <- share(th)
cat("config share", sprintf("%.10g", c(s0, uniroot(prof, c(0.3, s0), tol = 1e-12)$root,
                                     uniroot(prof, c(s0, 0.99), tol = 1e-12)$root)), "\n")
