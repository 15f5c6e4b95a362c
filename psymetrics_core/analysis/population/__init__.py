"""Population analyses: the statistics of many simulated respondents (personas) at once.

Job: given answers of a population of respondents (a tidy long table or a respondent x item
matrix, with optional persona-cluster and group columns) and an instrument's scale structure
(scales -> items, reverse keys), compute what a psychometrician checks before trusting a
questionnaire in a new population: response diagnostics, reliability across respondents
(alpha, lambda 6, omega, with naive and persona-clustered bootstrap intervals),
dimensionality (parallel analysis, EFA, Tucker's congruence), CFA fit (lavaan's indices,
SRMR included), measurement invariance across groups, and criterion validity against
persona labels. Undefined results are None with a reason naming the items or groups.

Layer: analysis (imports base only). The numeric libraries (numpy, pandas, scipy, statsmodels,
semopy) come with the [analysis] extra and are imported on demand.
"""

from psymetrics_core.analysis.population.cfa import (
    CFAResult,
    Loading,
    cfa,
    cfa_by_scale,
    model_syntax,
)
from psymetrics_core.analysis.population.criterion import Criterion, auc, spearman
from psymetrics_core.analysis.population.data import Responses, ScaleStructure, from_long, from_wide
from psymetrics_core.analysis.population.diagnostics import Diagnostics, VarianceRatio, diagnose
from psymetrics_core.analysis.population.dimensionality import (
    EFAResult,
    ParallelAnalysis,
    efa,
    parallel_analysis,
    tucker_congruence,
)
from psymetrics_core.analysis.population.fitstats import FitIndices
from psymetrics_core.analysis.population.invariance import (
    InvarianceResult,
    InvarianceStep,
    measurement_invariance,
)
from psymetrics_core.analysis.population.reliability import (
    Coefficient,
    ScaleReliability,
    scale_reliability,
)

__all__ = [
    "CFAResult",
    "Loading",
    "cfa",
    "cfa_by_scale",
    "model_syntax",
    "Criterion",
    "auc",
    "spearman",
    "Responses",
    "ScaleStructure",
    "from_long",
    "from_wide",
    "Diagnostics",
    "VarianceRatio",
    "diagnose",
    "EFAResult",
    "ParallelAnalysis",
    "efa",
    "parallel_analysis",
    "tucker_congruence",
    "FitIndices",
    "InvarianceResult",
    "InvarianceStep",
    "measurement_invariance",
    "Coefficient",
    "ScaleReliability",
    "scale_reliability",
]
