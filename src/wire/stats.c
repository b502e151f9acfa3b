/* Statistics for reports (feroce/stats.h). */
#include "feroce/stats.h"

double fe_jain_index(const double *x, size_t n)
{
    double sum = 0, sum2 = 0;
    for (size_t i = 0; i < n; i++) {
        sum += x[i];
        sum2 += x[i] * x[i];
    }
    return sum2 > 0 ? sum * sum / ((double)n * sum2) : 1.0;
}
