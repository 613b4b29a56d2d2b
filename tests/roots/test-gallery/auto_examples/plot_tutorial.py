"""
Imputing missing values
=======================

This tutorial shows imputation.
"""

# %%
# Loading the data
# ----------------
#
# We load some data.
import numpy as np
X = np.array([[1, np.nan]])

# %%
# Imputing
# --------
# Use the imputer.
from mlkit.impute import SimpleImputer
SimpleImputer().fit_transform(X)
