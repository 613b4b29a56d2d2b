"""
====================================================
Imputing missing values before building an estimator
====================================================

Missing values can be replaced by the mean, the median or the most frequent
value of each column using :class:`~mlkit.impute.SimpleImputer`. In this
tutorial we remove values from a regression dataset, compare several
imputation strategies inside a pipeline, and compare them with the naive
approach of dropping incomplete rows.
"""

# %%
# Generating the data
# -------------------
#
# We start from a complete regression problem with 20 features, only 5 of
# them informative, so that we can measure how much performance is lost when
# values go missing.

import numpy as np

from mlkit.datasets import make_regression
from mlkit.linear_model import Ridge
from mlkit.model_selection import KFold, cross_val_score

X_full, y = make_regression(
    n_samples=300, n_features=20, n_informative=5, noise=50.0, random_state=0
)
cv = KFold(n_splits=5, shuffle=True, random_state=0)
full_scores = cross_val_score(Ridge(alpha=1.0), X_full, y, cv=cv)
print(f"R2 on the complete data: {full_scores.mean():.3f}")

# %%
# Removing values at random
# -------------------------
#
# We now hide 10 percent of the entries, completely at random. Ridge cannot
# be fitted on data that contains ``NaN``, so the incomplete matrix has to be
# repaired first.

rng = np.random.default_rng(42)
X_missing = X_full.copy()
X_missing[rng.uniform(size=X_full.shape) < 0.1] = np.nan
print(f"Missing entries: {np.isnan(X_missing).mean():.1%}")

# %%
# Dropping incomplete rows
# ------------------------
#
# The simplest option is to discard every sample with at least one missing
# value. With 20 features and 10 percent of missing entries, only about one
# row in eight is complete, so most of the training data is thrown away.

complete_rows = ~np.isnan(X_missing).any(axis=1)
print(f"Complete rows kept: {complete_rows.sum()} out of {len(y)}")
drop_scores = cross_val_score(
    Ridge(alpha=1.0), X_missing[complete_rows], y[complete_rows], cv=cv
)
print(f"R2 after dropping rows: {drop_scores.mean():.3f}")

# %%
# Comparing imputation strategies
# -------------------------------
#
# Instead, we impute the missing values. The imputer is placed in a pipeline
# with the regressor so that the statistics used to fill the gaps are
# computed on the training folds only.
#
# The constant strategy with the default ``fill_value`` of 0 works well here
# because the features are centered; on real data a constant is mostly
# useful for categorical columns. The most frequent strategy performs poorly:
# on continuous data almost every value is unique, so the "most frequent"
# value is just the smallest one.

from mlkit.impute import SimpleImputer
from mlkit.pipeline import make_pipeline

for strategy in ["mean", "median", "most_frequent", "constant"]:
    model = make_pipeline(SimpleImputer(strategy=strategy), Ridge(alpha=1.0))
    scores = cross_val_score(model, X_missing, y, cv=cv)
    print(f"{strategy:>14}: R2 = {scores.mean():.3f} +/- {scores.std():.3f}")

# %%
# Adding missingness indicators
# -----------------------------
#
# Imputation hides which entries were missing. Appending binary indicator
# columns lets the model learn a correction for imputed values. Here the
# values are missing at random, so the indicators carry no signal and the
# score barely changes; when missingness depends on the target they can help
# a lot.

indicators = np.isnan(X_missing).astype(float)
X_augmented = np.hstack([X_missing, indicators])
model = make_pipeline(SimpleImputer(strategy="mean"), Ridge(alpha=1.0))
print(f"with indicators: {cross_val_score(model, X_augmented, y, cv=cv).mean():.3f}")

# %%
# Conclusion
# ----------
#
# Dropping incomplete rows wastes data and gives the worst and most unstable
# scores. Any imputation strategy does better, and keeping the imputer inside
# the pipeline guarantees that the cross-validation scores are not biased by
# information from the validation folds.
