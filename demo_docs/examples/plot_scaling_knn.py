"""
===================================================
Importance of feature scaling for nearest neighbors
===================================================

Nearest neighbors classifiers measure Euclidean distances between samples.
When one feature is expressed on a much larger scale than the others, it
dominates the distance and the informative features are effectively
ignored. Standardizing the features with
:class:`~mlkit.preprocessing.StandardScaler` restores their influence.
"""

import numpy as np

from mlkit.datasets import make_blobs
from mlkit.model_selection import cross_val_score
from mlkit.neighbors import KNeighborsClassifier
from mlkit.pipeline import make_pipeline
from mlkit.preprocessing import StandardScaler

X, y = make_blobs(n_samples=300, centers=3, cluster_std=2.5, random_state=1)

# Append an uninformative feature measured in very large units (think of
# an identifier or a timestamp), which swamps the distance computation.
rng = np.random.RandomState(0)
X = np.hstack([X, rng.uniform(0, 1000, size=(X.shape[0], 1))])

raw = KNeighborsClassifier(n_neighbors=5)
scaled = make_pipeline(StandardScaler(), KNeighborsClassifier(n_neighbors=5))

print("without scaling:", cross_val_score(raw, X, y, cv=5).mean().round(3))
print("with scaling:   ", cross_val_score(scaled, X, y, cv=5).mean().round(3))
