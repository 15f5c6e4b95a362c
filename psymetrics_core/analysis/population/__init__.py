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
semopy) come with the [analysis] extra and are imported on demand: the package itself imports
nothing, so a command that needs only the options records (``options``, ``structure_options``)
does not load scipy. Import from the modules: ``data`` (Responses, ScaleStructure, from_long,
from_wide), ``diagnostics``, ``reliability``, ``dimensionality`` (parallel analysis, EFA,
congruence), ``cfa``, ``fitstats``, ``invariance``, ``criterion``, ``irt``, ``mtmm``.
"""
