"""One test set: classifier metrics, cross-validation, paired tests on items, ROC and DeLong."""
