"""
Plot a thing
============

Simple example text.
"""
import numpy as np
print(np.ones(3))

# %%
# More text about it.
print(2)
