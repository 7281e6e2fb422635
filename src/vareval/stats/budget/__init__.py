"""Spending compute where the variance is: budget-optimal allocation, confidence sequences."""
