"""
==========================================================
Building a pipeline for mixed numeric and categorical data
==========================================================

Real datasets often mix numerical measurements, categorical attributes and
missing values. This tutorial prepares such data step by step with
:class:`~mlkit.impute.SimpleImputer`,
:class:`~mlkit.preprocessing.OneHotEncoder` and
:class:`~mlkit.preprocessing.StandardScaler`, then wraps the numerical
preprocessing and a :class:`~mlkit.linear_model.LogisticRegression` into a
:class:`~mlkit.pipeline.Pipeline` that can be cross-validated safely.
"""

# %%
# Creating a customer dataset
# ---------------------------
#
# We simulate a small churn problem: each customer has an age, a monthly
# bill, a number of support calls and a subscription plan. Customers with
# many support calls on the basic plan are more likely to leave.

import numpy as np

rng = np.random.default_rng(0)
n = 400
age = rng.normal(45, 12, size=n)
bill = rng.gamma(4.0, 15.0, size=n)
calls = rng.poisson(2.0, size=n).astype(float)
plan = rng.choice(["basic", "standard", "premium"], size=n, p=[0.5, 0.3, 0.2])
logit = 0.8 * (calls - 2) + 1.2 * (plan == "basic") - 0.02 * (bill - 60)
churn = (rng.uniform(size=n) < 1 / (1 + np.exp(-logit))).astype(int)

# Some ages were never recorded.
age[rng.uniform(size=n) < 0.1] = np.nan
X_num = np.column_stack([age, bill, calls])
print(f"churn rate: {churn.mean():.2f}")

# %%
# Encoding the subscription plan
# ------------------------------
#
# The plan is a categorical variable without a natural order. One-hot
# encoding creates one binary column per plan. With ``drop="first"`` one
# column is removed, which avoids a perfectly collinear design.

from mlkit.preprocessing import OneHotEncoder

encoder = OneHotEncoder(drop="first")
X_plan = encoder.fit_transform(plan.reshape(-1, 1))
print(encoder.categories_)
print(encoder.get_feature_names_out(["plan"]))

X = np.hstack([X_num, X_plan])

# %%
# Assembling the pipeline
# -----------------------
#
# The missing ages are filled with the median, all columns are standardized,
# and a regularized logistic regression makes the prediction. Each step is
# named automatically by :func:`~mlkit.pipeline.make_pipeline`.

from mlkit.impute import SimpleImputer
from mlkit.linear_model import LogisticRegression
from mlkit.pipeline import make_pipeline
from mlkit.preprocessing import StandardScaler

model = make_pipeline(
    SimpleImputer(strategy="median"),
    StandardScaler(),
    LogisticRegression(C=1.0),
)
print(model)

# %%
# Evaluating the pipeline
# -----------------------
#
# The whole pipeline is refit on each training fold, so the median age and
# the scaling statistics never include validation samples. We compare it
# with a baseline that always predicts the majority class.

from mlkit.dummy import DummyClassifier
from mlkit.model_selection import cross_val_score

print("baseline:", cross_val_score(DummyClassifier(strategy="most_frequent"), X, churn).mean().round(3))
print("pipeline:", cross_val_score(model, X, churn).mean().round(3))

# %%
# Tuning a step of the pipeline
# -----------------------------
#
# Parameters of individual steps are reached with the step name followed by
# two underscores. Here we try several values of the regularization
# parameter ``C`` of the logistic regression.

for C in [0.01, 0.1, 1.0, 10.0]:
    model.set_params(logisticregression__C=C)
    print(f"C={C:>5}: {cross_val_score(model, X, churn).mean():.3f}")

# %%
# Inspecting the fitted model
# ---------------------------
#
# After fitting, every step is available through ``named_steps``. Because
# the features were standardized, the magnitudes of the coefficients can be
# compared with each other.

model.set_params(logisticregression__C=1.0).fit(X, churn)
names = ["age", "bill", "calls"] + list(encoder.get_feature_names_out(["plan"]))
coef = model.named_steps["logisticregression"].coef_.ravel()
for name, value in zip(names, coef):
    print(f"{name:>14}: {value:+.2f}")
