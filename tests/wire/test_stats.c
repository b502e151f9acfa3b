/* Jain's fairness index (feroce/stats.h): equal shares, one winner, the empty and all-zero
 * cases, and the order of summation the simulator's golden reports depend on. */
#include "wire_test.h"

#include "feroce/stats.h"

#include <math.h>

#define assert_near(a, b) assert_true(fabs((a) - (b)) < 1e-15)

static void test_jain_equal(void **state)
{
    (void)state;
    const double x[] = {5e9, 5e9, 5e9, 5e9};
    assert_near(fe_jain_index(x, 4), 1.0);
    assert_near(fe_jain_index(x, 1), 1.0);
}

static void test_jain_one_winner(void **state)
{
    (void)state;
    const double x[] = {0, 8e9, 0, 0};
    assert_near(fe_jain_index(x, 4), 0.25);
    const double y[] = {1, 3};
    assert_near(fe_jain_index(y, 2), 16.0 / 20.0);
}

static void test_jain_empty_and_zero(void **state)
{
    (void)state;
    const double z[] = {0, 0, 0};
    assert_true(fe_jain_index(NULL, 0) == 1.0);
    assert_true(fe_jain_index(z, 3) == 1.0);
}

/* The same arithmetic as a caller summing in index order: reports stay byte-identical. */
static void test_jain_exact(void **state)
{
    (void)state;
    const double x[] = {2.9e9, 3.3e9, 3.7e9, 1.1e8, 0.5};
    double s = 0, s2 = 0;
    for (int i = 0; i < 5; i++) {
        s += x[i];
        s2 += x[i] * x[i];
    }
    assert_true(fe_jain_index(x, 5) == s * s / (5.0 * s2));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jain_equal),
        cmocka_unit_test(test_jain_one_winner),
        cmocka_unit_test(test_jain_empty_and_zero),
        cmocka_unit_test(test_jain_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
