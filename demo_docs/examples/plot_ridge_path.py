"""
==================================================
Ridge coefficients as a function of regularization
==================================================

This example shows how the coefficients of a
:class:`~mlkit.linear_model.Ridge` model shrink towards zero as the
regularization strength ``alpha`` grows. With a very small ``alpha`` the
solution matches ordinary least squares; with a very large ``alpha`` all
coefficients are close to zero and the model predicts the mean target.
"""

import numpy as np

from mlkit.datasets import make_regression
from mlkit.linear_model import LinearRegression, Ridge

X, y, true_coef = make_regression(
    n_samples=50, n_features=5, n_informative=3, noise=5.0, coef=True, random_state=0
)

print("true coefficients:", true_coef.round(1))
print("least squares:    ", LinearRegression().fit(X, y).coef_.round(1))
for alpha in np.logspace(-2, 4, 7):
    coef = Ridge(alpha=alpha).fit(X, y).coef_
    print(f"alpha={alpha:>9.2f}  norm of coef_={np.linalg.norm(coef):8.2f}")
