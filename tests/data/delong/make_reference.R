# Reference values for vareval's DeLong test (tests/stats/testset/test_roc.py).
# Run from this directory: Rscript make_reference.R
# Needs R with pROC (Debian: apt-get install r-cran-proc; pROC 1.18.0 made the stored files).
# Writes random.csv (a seeded simulated data set with ties) and reference.csv (AUCs, variances, covariance, z, p and
# the 95 % and 90 % intervals of roc.test(method = "delong", paired = TRUE)), also for the
# bundled src/vareval/datasets/breast_cancer_predictions.csv.
suppressMessages(library(pROC))

set.seed(20261201)
n <- 80
gold <- sample(c("neg", "pos"), n, replace = TRUE, prob = c(0.6, 0.4))
latent <- rnorm(n) + (gold == "pos")
random <- data.frame(gold = gold,
                     a = round(latent + rnorm(n, sd = 0.7), 1),
                     b = round(latent + rnorm(n, sd = 1.2), 1),
                     c = sample(1:4, n, replace = TRUE))
write.csv(random, "random.csv", row.names = FALSE)

one <- function(data, file, gold, controls, cases, x, y) {
  r1 <- roc(data[[gold]], data[[x]], levels = c(controls, cases), direction = "<", quiet = TRUE)
  r2 <- roc(data[[gold]], data[[y]], levels = c(controls, cases), direction = "<", quiet = TRUE)
  t95 <- roc.test(r1, r2, method = "delong", paired = TRUE, conf.level = 0.95)
  t90 <- roc.test(r1, r2, method = "delong", paired = TRUE, conf.level = 0.90)
  tg <- roc.test(r1, r2, method = "delong", paired = TRUE, alternative = "greater")
  data.frame(file = file, gold = gold, positive = cases, a = x, b = y,
             auc_a = as.numeric(auc(r1)), auc_b = as.numeric(auc(r2)),
             var_a = var(r1, method = "delong"), var_b = var(r2, method = "delong"),
             cov_ab = cov(r1, r2, method = "delong"),
             z = unname(t95$statistic), p = t95$p.value, p_greater = tg$p.value,
             ci95_low = t95$conf.int[1], ci95_high = t95$conf.int[2],
             ci90_low = t90$conf.int[1], ci90_high = t90$conf.int[2])
}

bundled <- "../../../src/vareval/datasets/breast_cancer_predictions.csv"
cancer <- read.csv(bundled, colClasses = c(gold = "character"))

ref <- rbind(
  one(cancer, "breast_cancer_predictions.csv", "gold", "benign", "malignant",
      "naive_bayes_score", "logreg_score"),
  one(cancer, "breast_cancer_predictions.csv", "gold", "benign", "malignant",
      "tree_score", "logreg_score"),
  one(random, "random.csv", "gold", "neg", "pos", "a", "b"),
  one(random, "random.csv", "gold", "neg", "pos", "a", "c"),
  one(random, "random.csv", "gold", "neg", "pos", "c", "b")
)
write.csv(format(ref, digits = 17), "reference.csv", row.names = FALSE, quote = FALSE)
