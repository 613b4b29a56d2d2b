"""
=======================================================
Selecting the number of neighbors with cross-validation
=======================================================

This tutorial shows how to choose the ``n_neighbors`` hyper-parameter of a
:class:`~mlkit.neighbors.KNeighborsClassifier` without touching the test
set. We compare a single validation split with k-fold cross-validation, pick
the best value, and report an unbiased estimate of the final accuracy.
"""

# %%
# Loading the data
# ----------------
#
# We generate a three-class problem with overlapping classes, so that the
# choice of ``n_neighbors`` matters. A test set is put aside immediately and
# will only be used once, at the very end.

import numpy as np

from mlkit.datasets import make_blobs
from mlkit.model_selection import train_test_split

X, y = make_blobs(n_samples=600, centers=3, cluster_std=3.5, random_state=7)
X_train, X_test, y_train, y_test = train_test_split(
    X, y, test_size=0.25, stratify=y, random_state=0
)
print(X_train.shape, X_test.shape)

# %%
# A single validation split
# -------------------------
#
# A first approach is to split the training set once more into a smaller
# training set and a validation set. The ranking of the candidate values
# depends heavily on which samples end up in the validation set: try another
# ``random_state`` and the best value of ``n_neighbors`` changes.

from mlkit.neighbors import KNeighborsClassifier

X_fit, X_val, y_fit, y_val = train_test_split(X_train, y_train, random_state=1)
for k in [1, 5, 15, 45]:
    clf = KNeighborsClassifier(n_neighbors=k).fit(X_fit, y_fit)
    print(f"k={k:>2}: validation accuracy {clf.score(X_val, y_val):.3f}")

# %%
# Cross-validating each candidate
# -------------------------------
#
# With :func:`~mlkit.model_selection.cross_val_score`, every sample of the
# training set is used for validation exactly once. Averaging over the folds
# reduces the variance of the estimate, and the standard deviation tells us
# which differences are meaningful.
#
# Because the estimator is a classifier, an integer ``cv`` gives stratified
# folds, so that each fold contains the three classes in the same
# proportions.

from mlkit.model_selection import StratifiedKFold, cross_val_score

cv = StratifiedKFold(n_splits=5, shuffle=True, random_state=0)
candidates = [1, 3, 5, 9, 15, 25, 45, 75]
mean_scores = []
for k in candidates:
    scores = cross_val_score(KNeighborsClassifier(n_neighbors=k), X_train, y_train, cv=cv)
    mean_scores.append(scores.mean())
    print(f"k={k:>2}: {scores.mean():.3f} +/- {scores.std():.3f}")

# %%
# Choosing the best value
# -----------------------
#
# Small values of ``n_neighbors`` overfit: the decision boundary follows the
# noise of individual samples. Very large values underfit: the vote is
# dominated by the global class frequencies. The best value lies in between.

best_k = candidates[int(np.argmax(mean_scores))]
print(f"Best number of neighbors: {best_k}")

# %%
# Final evaluation on the test set
# --------------------------------
#
# The selected model is refit on the whole training set and evaluated once
# on the held-out test set. This number, not the best cross-validation
# score, is the estimate to report, because the cross-validation score was
# used to make a choice and is therefore slightly optimistic.

final = KNeighborsClassifier(n_neighbors=best_k).fit(X_train, y_train)
print(f"Test accuracy: {final.score(X_test, y_test):.3f}")
