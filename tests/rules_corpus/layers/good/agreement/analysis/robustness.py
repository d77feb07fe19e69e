"""A pure module: numpy, scipy and the other pure modules."""
import itertools

import numpy as np
from scipy import stats

from agreement.analysis.outcomes import ComparisonData
from agreement.stats.mixed import system_effect
from .roles import TOTAL_MEASURE
