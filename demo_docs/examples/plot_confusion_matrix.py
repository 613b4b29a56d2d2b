"""
===========================================
Confusion matrix of a multiclass classifier
===========================================

Accuracy summarizes the performance of a classifier with a single number.
The confusion matrix computed by :func:`~mlkit.metrics.confusion_matrix`
breaks it down per class: rows are the true classes, columns the predicted
ones, so that the off-diagonal cells show which classes get confused.
"""

from mlkit.datasets import make_blobs
from mlkit.linear_model import LogisticRegression
from mlkit.metrics import accuracy_score, confusion_matrix
from mlkit.model_selection import train_test_split

X, y = make_blobs(n_samples=400, centers=4, cluster_std=3.0, random_state=3)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)

clf = LogisticRegression(max_iter=300).fit(X_train, y_train)
y_pred = clf.predict(X_test)

print(f"Accuracy: {accuracy_score(y_test, y_pred):.3f}")
print("Confusion matrix (counts):")
print(confusion_matrix(y_test, y_pred))

# %%
# Normalizing over the true classes (``normalize="true"``) turns each row
# into the distribution of the predictions for that class; the diagonal is
# then the recall of each class.

print(confusion_matrix(y_test, y_pred, normalize="true").round(2))
