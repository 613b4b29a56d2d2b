"""
============================================
Comparing a classifier with a dummy baseline
============================================

This example compares a :class:`~mlkit.linear_model.LogisticRegression` with
the strategies of :class:`~mlkit.dummy.DummyClassifier` on an imbalanced
binary problem. The majority-class baseline already reaches a high accuracy
because 80 percent of the samples belong to the negative class: a real model
is only useful if it clearly improves on that number.
"""

import numpy as np

from mlkit.dummy import DummyClassifier
from mlkit.linear_model import LogisticRegression
from mlkit.model_selection import train_test_split

rng = np.random.RandomState(42)
n_samples = 500
X = rng.randn(n_samples, 3)
# Roughly 20% positives, determined by the first two features plus noise.
y = (X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.randn(n_samples) > 1.0).astype(int)
print(f"Fraction of positive samples: {y.mean():.2f}")

X_train, X_test, y_train, y_test = train_test_split(
    X, y, stratify=y, random_state=0
)

# %%
# Every strategy of the dummy classifier ignores ``X``. We report the test
# accuracy of each one next to the accuracy of the logistic regression.

for strategy in ["most_frequent", "prior", "stratified", "uniform"]:
    dummy = DummyClassifier(strategy=strategy, random_state=0)
    dummy.fit(X_train, y_train)
    print(f"{strategy:>14}: {dummy.score(X_test, y_test):.3f}")

clf = LogisticRegression(C=1.0).fit(X_train, y_train)
print(f"{'logistic':>14}: {clf.score(X_test, y_test):.3f}")
