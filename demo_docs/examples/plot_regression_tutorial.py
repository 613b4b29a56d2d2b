"""
===============================================
From a dummy baseline to regularized regression
===============================================

This tutorial walks through a typical regression workflow: establish a
baseline with :class:`~mlkit.dummy.DummyRegressor`, fit ordinary least
squares, notice overfitting when there are many noisy features, and fix it
with :class:`~mlkit.linear_model.Ridge`. Scores are compared with
:func:`~mlkit.metrics.mean_squared_error` and :func:`~mlkit.metrics.r2_score`.
"""

# %%
# A problem with many useless features
# ------------------------------------
#
# Only 5 of the 60 features influence the target, and there are barely more
# samples than features. This is the regime where least squares overfits.

from mlkit.datasets import make_regression
from mlkit.model_selection import train_test_split

X, y = make_regression(
    n_samples=120, n_features=60, n_informative=5, noise=25.0, random_state=1
)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0)

# %%
# Baseline
# --------
#
# The mean baseline tells us the error we get without using any feature. Its
# coefficient of determination is close to zero by construction.

from mlkit.dummy import DummyRegressor
from mlkit.metrics import mean_squared_error, r2_score

baseline = DummyRegressor(strategy="mean").fit(X_train, y_train)
y_base = baseline.predict(X_test)
print(f"baseline  MSE={mean_squared_error(y_test, y_base):10.1f}  R2={r2_score(y_test, y_base):.3f}")

# %%
# Ordinary least squares
# ----------------------
#
# Least squares uses all 60 features. It fits the training set almost
# perfectly but generalizes much worse: the gap between the training and the
# test score is the signature of overfitting.

from mlkit.linear_model import LinearRegression

ols = LinearRegression().fit(X_train, y_train)
print(f"OLS train R2={ols.score(X_train, y_train):.3f}  test R2={ols.score(X_test, y_test):.3f}")

# %%
# Adding an l2 penalty
# --------------------
#
# Ridge shrinks the coefficients of the useless features towards zero. We
# choose ``alpha`` by cross-validation on the training set only.

import numpy as np

from mlkit.linear_model import Ridge
from mlkit.model_selection import cross_val_score

alphas = np.logspace(-2, 3, 6)
cv_scores = [cross_val_score(Ridge(alpha=a), X_train, y_train, cv=5).mean() for a in alphas]
for a, s in zip(alphas, cv_scores):
    print(f"alpha={a:>8.2f}: CV R2={s:.3f}")
best_alpha = alphas[int(np.argmax(cv_scores))]

# %%
# Final comparison
# ----------------
#
# The tuned ridge model beats both the baseline and least squares on the test
# set. Reporting the baseline next to the model makes the improvement easy to
# judge.

ridge = Ridge(alpha=best_alpha).fit(X_train, y_train)
y_ridge = ridge.predict(X_test)
print(f"ridge     MSE={mean_squared_error(y_test, y_ridge):10.1f}  R2={r2_score(y_test, y_ridge):.3f}")
